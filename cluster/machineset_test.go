package cluster

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	machinev1 "github.com/openshift/api/machine/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/config"
)

var updateGolden = flag.Bool("update-machinesets", false, "rewrite the MachineSet golden files")

const testInfraID = "demo-7xk2p"

func testInfra(p configv1.PlatformType) *configv1.Infrastructure {
	return &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Status: configv1.InfrastructureStatus{InfrastructureName: testInfraID, PlatformStatus: &configv1.PlatformStatus{Type: p}}}
}

func workerMachine(t testing.TB, name string, spec any) machinev1beta1.Machine {
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	return machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: config.MachineAPINamespace,
		Labels: map[string]string{config.MachineRoleLabel: "worker", config.MachineTypeLabel: "worker", config.MachineSetClusterLabel: testInfraID}},
		Spec: machinev1beta1.MachineSpec{ProviderSpec: machinev1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}}}
}

func awsWorker(t testing.TB, zone string) machinev1beta1.Machine {
	return workerMachine(t, testInfraID+"-worker-"+zone+"-x1", &machinev1beta1.AWSMachineProviderConfig{
		TypeMeta:           metav1.TypeMeta{APIVersion: "machine.openshift.io/v1beta1", Kind: "AWSMachineProviderConfig"},
		AMI:                machinev1beta1.AWSResourceReference{ID: ptr.To("ami-0rhcos")},
		InstanceType:       "m6i.xlarge",
		IAMInstanceProfile: &machinev1beta1.AWSResourceReference{ID: ptr.To(testInfraID + "-worker-profile")},
		UserDataSecret:     &corev1.LocalObjectReference{Name: "worker-user-data"},
		CredentialsSecret:  &corev1.LocalObjectReference{Name: "aws-cloud-credentials"},
		SecurityGroups:     []machinev1beta1.AWSResourceReference{{Filters: []machinev1beta1.Filter{{Name: "tag:Name", Values: []string{testInfraID + "-node"}}}}},
		Subnet:             machinev1beta1.AWSResourceReference{Filters: []machinev1beta1.Filter{{Name: "tag:Name", Values: []string{testInfraID + "-subnet-private-" + zone}}}},
		Placement:          machinev1beta1.Placement{Region: "us-east-1", AvailabilityZone: zone},
		Tags:               []machinev1beta1.TagSpecification{{Name: "kubernetes.io/cluster/" + testInfraID, Value: "owned"}},
	})
}

func azureWorker(t testing.TB) machinev1beta1.Machine {
	return workerMachine(t, testInfraID+"-worker-eastus1-abcde", &machinev1beta1.AzureMachineProviderSpec{
		TypeMeta:          metav1.TypeMeta{APIVersion: "machine.openshift.io/v1beta1", Kind: "AzureMachineProviderSpec"},
		UserDataSecret:    &corev1.SecretReference{Name: "worker-user-data"},
		CredentialsSecret: &corev1.SecretReference{Name: "azure-cloud-credentials", Namespace: config.MachineAPINamespace},
		Location:          "eastus", VMSize: "Standard_D4s_v3", Zone: "1",
		Image:  machinev1beta1.Image{ResourceID: "/resourceGroups/" + testInfraID + "-rg/providers/Microsoft.Compute/images/rhcos"},
		OSDisk: machinev1beta1.OSDisk{OSType: "Linux", DiskSizeGB: 128},
		Vnet:   testInfraID + "-vnet", Subnet: testInfraID + "-worker-subnet",
		ResourceGroup: testInfraID + "-rg", NetworkResourceGroup: testInfraID + "-rg",
	})
}

func vsphereWorker(t testing.TB) machinev1beta1.Machine {
	return workerMachine(t, testInfraID+"-worker-0-abcde", &machinev1beta1.VSphereMachineProviderSpec{
		TypeMeta:          metav1.TypeMeta{APIVersion: "machine.openshift.io/v1beta1", Kind: "VSphereMachineProviderSpec"},
		UserDataSecret:    &corev1.LocalObjectReference{Name: "worker-user-data"},
		CredentialsSecret: &corev1.LocalObjectReference{Name: "vsphere-cloud-credentials"},
		Template:          testInfraID + "-rhcos",
		Workspace: &machinev1beta1.Workspace{Server: "vcenter.example.com", Datacenter: "dc1", Datastore: "ds1",
			Folder: "/dc1/vm/" + testInfraID, ResourcePool: "/dc1/host/cluster1/Resources"},
		Network: machinev1beta1.NetworkSpec{Devices: []machinev1beta1.NetworkDeviceSpec{{NetworkName: "VM Network"}}},
		NumCPUs: 2, NumCoresPerSocket: 1, MemoryMiB: 8192, DiskGiB: 120,
	})
}

func gcpWorker(t testing.TB) machinev1beta1.Machine {
	return workerMachine(t, testInfraID+"-worker-a-abcde", &machinev1beta1.GCPMachineProviderSpec{
		TypeMeta:          metav1.TypeMeta{APIVersion: "machine.openshift.io/v1beta1", Kind: "GCPMachineProviderSpec"},
		UserDataSecret:    &corev1.LocalObjectReference{Name: "worker-user-data"},
		CredentialsSecret: &corev1.LocalObjectReference{Name: "gcp-cloud-credentials"},
		MachineType:       "n2-standard-4", Region: "us-central1", Zone: "us-central1-a", ProjectID: "demo-project",
		Disks:             []*machinev1beta1.GCPDisk{{AutoDelete: true, Boot: true, SizeGB: 128, Type: "pd-ssd", Image: "rhcos"}},
		NetworkInterfaces: []*machinev1beta1.GCPNetworkInterface{{Network: testInfraID + "-network", Subnetwork: testInfraID + "-worker-subnet"}},
		ServiceAccounts:   []machinev1beta1.GCPServiceAccount{{Email: testInfraID + "-w@demo-project.iam.gserviceaccount.com", Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}}},
		Tags:              []string{testInfraID + "-worker"},
	})
}

func nutanixWorker(t testing.TB) machinev1beta1.Machine {
	return workerMachine(t, testInfraID+"-worker-abcde", &machinev1.NutanixMachineProviderConfig{
		TypeMeta:       metav1.TypeMeta{APIVersion: "machine.openshift.io/v1", Kind: "NutanixMachineProviderConfig"},
		Cluster:        machinev1.NutanixResourceIdentifier{Type: machinev1.NutanixIdentifierUUID, UUID: ptr.To("0005b0f1-8f43-a0f2-02b7-3cecef193712")},
		Image:          machinev1.NutanixResourceIdentifier{Type: machinev1.NutanixIdentifierName, Name: ptr.To(testInfraID + "-rhcos")},
		Subnets:        []machinev1.NutanixResourceIdentifier{{Type: machinev1.NutanixIdentifierUUID, UUID: ptr.To("c7938dc6-7659-453e-a688-e26020c68e43")}},
		VCPUsPerSocket: 1, VCPUSockets: 4,
		MemorySize: resource.MustParse("16Gi"), SystemDiskSize: resource.MustParse("120Gi"),
		UserDataSecret:    &corev1.LocalObjectReference{Name: "worker-user-data"},
		CredentialsSecret: &corev1.LocalObjectReference{Name: "nutanix-credentials"},
	})
}

// MachineSetCases are one valid request per platform, with the workers to copy; the integration tests
// apply the same to the real CRD.
func MachineSetCases(t testing.TB) map[configv1.PlatformType]struct {
	Workers []machinev1beta1.Machine
	Req     MachineSetRequest
} {
	type c = struct {
		Workers []machinev1beta1.Machine
		Req     MachineSetRequest
	}
	return map[configv1.PlatformType]c{
		configv1.AWSPlatformType: {[]machinev1beta1.Machine{awsWorker(t, "us-east-1a"), awsWorker(t, "us-east-1b")},
			MachineSetRequest{Platform: configv1.AWSPlatformType, Zone: "us-east-1b", Image: "ami-0windows2022", Replicas: 1}},
		configv1.AzurePlatformType:   {[]machinev1beta1.Machine{azureWorker(t)}, MachineSetRequest{Platform: configv1.AzurePlatformType, Replicas: 1}},
		configv1.VSpherePlatformType: {[]machinev1beta1.Machine{vsphereWorker(t)}, MachineSetRequest{Platform: configv1.VSpherePlatformType, Image: "windows-golden-2022", Replicas: 1}},
		configv1.GCPPlatformType:     {[]machinev1beta1.Machine{gcpWorker(t)}, MachineSetRequest{Platform: configv1.GCPPlatformType, Replicas: 1}},
		configv1.NutanixPlatformType: {[]machinev1beta1.Machine{nutanixWorker(t)}, MachineSetRequest{Platform: configv1.NutanixPlatformType, Image: "windows-server-2022", Replicas: 1}},
	}
}

func TestGenerateMachineSetGoldenPerPlatform(t *testing.T) {
	for p, c := range MachineSetCases(t) {
		t.Run(string(p), func(t *testing.T) {
			ms, err := GenerateMachineSet(testInfra(p), c.Workers, c.Req)
			require.NoError(t, err)
			require.NoError(t, ValidateMachineSet(p, ms))
			got, err := yaml.Marshal(ms)
			require.NoError(t, err)
			path := filepath.Join("testdata", "machineset-"+strings.ToLower(string(p))+".yaml")
			if *updateGolden {
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
			// What WMCO needs, whatever the platform.
			require.Equal(t, config.WindowsOSID, ms.Spec.Template.Labels[config.MachineOSIDLabel])
			require.Equal(t, testInfraID, ms.Spec.Template.Labels[config.MachineSetClusterLabel])
			require.Equal(t, ms.Name, ms.Spec.Template.Labels[config.MachineSetLabel])
			require.Contains(t, ms.Spec.Template.Spec.Labels, config.WorkerRoleLabel)
			require.Contains(t, string(ms.Spec.Template.Spec.ProviderSpec.Value.Raw), `"userDataSecret":{"name":"windows-user-data"}`)
		})
	}
}

func TestGenerateMachineSetCopiesTheWorkerInTheZone(t *testing.T) {
	c := MachineSetCases(t)[configv1.AWSPlatformType]
	ms, err := GenerateMachineSet(testInfra(configv1.AWSPlatformType), c.Workers, c.Req)
	require.NoError(t, err)
	require.Equal(t, testInfraID+"-winworker-us-east-1b", ms.Name)
	spec, err := DecodeProviderSpec(configv1.AWSPlatformType, ms.Spec.Template.Spec.ProviderSpec.Value.Raw)
	require.NoError(t, err)
	aws := spec.(*machinev1beta1.AWSMachineProviderConfig)
	require.Equal(t, "us-east-1b", aws.Placement.AvailabilityZone)
	require.Equal(t, []string{testInfraID + "-subnet-private-us-east-1b"}, aws.Subnet.Filters[0].Values)
	require.Equal(t, "ami-0windows2022", *aws.AMI.ID)
	require.Equal(t, "m5a.large", aws.InstanceType)
	require.Equal(t, "aws-cloud-credentials", aws.CredentialsSecret.Name)
}

func TestGenerateMachineSetRefusesBadRequests(t *testing.T) {
	cases := MachineSetCases(t)
	aws, vs, az, nx := cases[configv1.AWSPlatformType], cases[configv1.VSpherePlatformType], cases[configv1.AzurePlatformType], cases[configv1.NutanixPlatformType]
	tests := []struct {
		name    string
		infra   configv1.PlatformType
		workers []machinev1beta1.Machine
		req     MachineSetRequest
		want    string
	}{
		{"vSphere name too long", configv1.VSpherePlatformType, vs.Workers, MachineSetRequest{Platform: "VSphere", Name: "winworker1", Image: "t"}, "has 10 characters: on VSphere a Windows MachineSet name may have at most 9"},
		{"Azure name too long", configv1.AzurePlatformType, az.Workers, MachineSetRequest{Platform: "Azure", Name: "windows-nodes"}, "at most 9"},
		{"bad name", configv1.AWSPlatformType, aws.Workers, MachineSetRequest{Platform: "AWS", Name: "Win_Worker", Image: "ami-1"}, "use lowercase letters"},
		{"AWS needs an AMI", configv1.AWSPlatformType, aws.Workers, MachineSetRequest{Platform: "AWS"}, "--image is required on AWS"},
		{"vSphere needs a template", configv1.VSpherePlatformType, vs.Workers, MachineSetRequest{Platform: "VSphere"}, "--image is required on vSphere"},
		{"Nutanix needs an image", configv1.NutanixPlatformType, nx.Workers, MachineSetRequest{Platform: "Nutanix"}, "--image is required on Nutanix"},
		{"unknown zone", configv1.AWSPlatformType, aws.Workers, MachineSetRequest{Platform: "AWS", Zone: "us-east-1f", Image: "ami-1"}, `no worker Machine in zone "us-east-1f" (workers' zones: us-east-1a, us-east-1b)`},
		{"zone on vSphere", configv1.VSpherePlatformType, vs.Workers, MachineSetRequest{Platform: "VSphere", Zone: "a", Image: "t"}, "--zone is not used on VSphere"},
		{"bad Azure image", configv1.AzurePlatformType, az.Workers, MachineSetRequest{Platform: "Azure", Image: "WindowsServer"}, "publisher:offer:sku:version"},
		{"wrong platform", configv1.AzurePlatformType, az.Workers, MachineSetRequest{Platform: "AWS", Image: "ami-1"}, "--platform AWS, but the cluster runs on Azure"},
		{"no workers", configv1.AWSPlatformType, nil, MachineSetRequest{Platform: "AWS", Image: "ami-1"}, "no Linux worker Machine"},
		{"bare metal", configv1.BareMetalPlatformType, []machinev1beta1.Machine{workerMachine(t, "w", map[string]any{"x": 1})}, MachineSetRequest{Image: "i"}, "has no Windows MachineSets"},
		{"negative replicas", configv1.GCPPlatformType, cases[configv1.GCPPlatformType].Workers, MachineSetRequest{Platform: "GCP", Replicas: -1}, "must be 0 or more"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := GenerateMachineSet(testInfra(tc.infra), tc.workers, tc.req)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestDecodeProviderSpecIsStrict(t *testing.T) {
	w := awsWorker(t, "us-east-1a")
	var m map[string]any
	require.NoError(t, json.Unmarshal(w.Spec.ProviderSpec.Value.Raw, &m))
	m["instanceTypo"] = "m5a.large"
	raw, err := json.Marshal(m)
	require.NoError(t, err)
	_, err = DecodeProviderSpec(configv1.AWSPlatformType, raw)
	require.ErrorContains(t, err, `unknown field "instanceTypo"`)
	// A worker whose providerSpec does not decode is named.
	w.Spec.ProviderSpec.Value.Raw = raw
	_, err = GenerateMachineSet(testInfra(configv1.AWSPlatformType), []machinev1beta1.Machine{w}, MachineSetRequest{Image: "ami-1"})
	require.ErrorContains(t, err, "worker Machine "+w.Name)
	// Case-insensitive matches are refused too (plain encoding/json would accept them).
	_, err = DecodeProviderSpec(configv1.VSpherePlatformType, []byte(`{"Template":"x"}`))
	require.Error(t, err)
}

func TestValidateMachineSetFindsMissingPieces(t *testing.T) {
	c := MachineSetCases(t)[configv1.GCPPlatformType]
	ms, err := GenerateMachineSet(testInfra(configv1.GCPPlatformType), c.Workers, c.Req)
	require.NoError(t, err)
	delete(ms.Spec.Template.Labels, config.MachineOSIDLabel)
	ms.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(strings.Replace(string(ms.Spec.Template.Spec.ProviderSpec.Value.Raw), config.UserDataSecret, "worker-user-data", 1))
	err = ValidateMachineSet(configv1.GCPPlatformType, ms)
	require.ErrorContains(t, err, "lacks the label machine.openshift.io/os-id=Windows")
	require.ErrorContains(t, err, "userDataSecret.name must be windows-user-data")
}
