package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	machinev1 "github.com/openshift/api/machine/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	kjson "sigs.k8s.io/json"

	"github.com/wmcon/wmcon/config"
)

// MachineSetRequest is what only the user knows about a Windows MachineSet; the rest comes from the cluster.
type MachineSetRequest struct {
	Platform     configv1.PlatformType
	Name         string // default per platform (see DefaultMachineSetName)
	Zone         string // AWS, Azure, GCP: default the first worker's
	Image        string // AWS AMI ID, Azure publisher:offer:sku:version, GCP image, vSphere template, Nutanix image name
	InstanceType string // default per platform
	Replicas     int32
}

// MaxShortMachineSetName is the longest MachineSet name on vSphere and Azure, whose Windows Machine names
// (the MachineSet's name plus "-" and a 5-character suffix) become computer names of at most 15 characters.
const MaxShortMachineSetName = 9

// Default instance sizes and images WMCO documents.
var defaultInstanceType = map[configv1.PlatformType]string{
	configv1.AWSPlatformType:   "m5a.large",
	configv1.AzurePlatformType: "Standard_D2s_v3",
	configv1.GCPPlatformType:   "n1-standard-4",
}

const (
	defaultAzureImage = "MicrosoftWindowsServer:WindowsServer:2022-datacenter-smalldisk:latest"
	defaultGCPImage   = "projects/windows-cloud/global/images/family/windows-2022-core"
)

// DefaultMachineSetName is WMCO's documented name for a platform's Windows MachineSet.
func DefaultMachineSetName(p configv1.PlatformType, infraID, zone string) string {
	switch p {
	case configv1.AzurePlatformType, configv1.VSpherePlatformType:
		return "winworker"
	case configv1.AWSPlatformType, configv1.GCPPlatformType:
		if zone != "" {
			return infraID + "-winworker-" + zone
		}
	}
	return infraID + "-winworker"
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// GenerateMachineSet builds a Windows MachineSet from the Infrastructure object, the cluster's worker
// Machines (their providerSpec gives the region, zones, subnets, security groups, networks and credentials)
// and the request. It is a pure function: same inputs, same MachineSet.
func GenerateMachineSet(infra *configv1.Infrastructure, workers []machinev1beta1.Machine, req MachineSetRequest) (*machinev1beta1.MachineSet, error) {
	infraID := infra.Status.InfrastructureName
	if infraID == "" {
		return nil, errors.New("the Infrastructure object has no status.infrastructureName: is this an OpenShift cluster installed with an installer?")
	}
	if got := PlatformOf(infra); req.Platform == "" {
		req.Platform = got
	} else if got != "" && !strings.EqualFold(string(got), string(req.Platform)) {
		return nil, fmt.Errorf("--platform %s, but the cluster runs on %s", req.Platform, got)
	}
	worker, err := pickWorker(req, workers)
	if err != nil {
		return nil, err
	}
	if req.Zone == "" {
		req.Zone = machineZone(req.Platform, worker)
	}
	if req.Name == "" {
		req.Name = DefaultMachineSetName(req.Platform, infraID, req.Zone)
	}
	if req.Replicas < 0 {
		return nil, fmt.Errorf("replicas %d: must be 0 or more", req.Replicas)
	}
	if err := validateName(req); err != nil {
		return nil, err
	}
	spec, err := windowsProviderSpec(req, worker, infraID)
	if err != nil {
		return nil, err
	}
	return machineSet(req, infraID, spec), nil
}

// PlatformOf is the cluster's platform type as its Infrastructure object says it.
func PlatformOf(infra *configv1.Infrastructure) configv1.PlatformType {
	if infra.Status.PlatformStatus != nil && infra.Status.PlatformStatus.Type != "" {
		return infra.Status.PlatformStatus.Type
	}
	return infra.Status.Platform //nolint:staticcheck // older clusters fill only this
}

// MachineSetPlatforms are where wmcon machineset generate (and WMCO) can create Windows Machines.
var MachineSetPlatforms = []configv1.PlatformType{configv1.AWSPlatformType, configv1.AzurePlatformType,
	configv1.VSpherePlatformType, configv1.GCPPlatformType, configv1.NutanixPlatformType}

func validateName(req MachineSetRequest) error {
	if !dnsLabel.MatchString(req.Name) || len(req.Name) > 63 {
		return fmt.Errorf("name %q: use lowercase letters, digits and '-', at most 63 characters", req.Name)
	}
	if (req.Platform == configv1.AzurePlatformType || req.Platform == configv1.VSpherePlatformType) && len(req.Name) > MaxShortMachineSetName {
		return fmt.Errorf("name %q has %d characters: on %s a Windows MachineSet name may have at most %d (its Machines' names become 15-character computer names); pass a shorter --name",
			req.Name, len(req.Name), req.Platform, MaxShortMachineSetName)
	}
	return nil
}

// pickWorker chooses the worker Machine to copy: one of the platform in the requested zone, else the first.
func pickWorker(req MachineSetRequest, workers []machinev1beta1.Machine) (machinev1beta1.Machine, error) {
	var candidates []machinev1beta1.Machine
	for _, m := range workers {
		if m.Labels[config.MachineRoleLabel] == "worker" && m.Labels[config.MachineOSIDLabel] != config.WindowsOSID &&
			m.Spec.ProviderSpec.Value != nil {
			candidates = append(candidates, m)
		}
	}
	if len(candidates) == 0 {
		return machinev1beta1.Machine{}, fmt.Errorf("no Linux worker Machine in %s to copy the %s settings from (networks, credentials): a Windows MachineSet needs one; on a cluster without the Machine API use BYOH (wmcon byoh add)",
			config.MachineAPINamespace, req.Platform)
	}
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].Name < candidates[j].Name })
	if req.Zone == "" {
		return candidates[0], nil
	}
	var zones []string
	for _, m := range candidates {
		z := machineZone(req.Platform, m)
		if z == req.Zone {
			return m, nil
		}
		if z != "" && !slices.Contains(zones, z) {
			zones = append(zones, z)
		}
	}
	if len(zones) == 0 {
		return machinev1beta1.Machine{}, fmt.Errorf("--zone is not used on %s: leave it out", req.Platform)
	}
	sort.Strings(zones)
	return machinev1beta1.Machine{}, fmt.Errorf("no worker Machine in zone %q (workers' zones: %s): pass one of those with --zone", req.Zone, strings.Join(zones, ", "))
}

// machineZone reads a Machine's zone from its providerSpec ("" where the platform has none).
func machineZone(p configv1.PlatformType, m machinev1beta1.Machine) string {
	raw := m.Spec.ProviderSpec.Value
	if raw == nil {
		return ""
	}
	switch p {
	case configv1.AWSPlatformType:
		var s machinev1beta1.AWSMachineProviderConfig
		if json.Unmarshal(raw.Raw, &s) == nil {
			return s.Placement.AvailabilityZone
		}
	case configv1.AzurePlatformType:
		var s machinev1beta1.AzureMachineProviderSpec
		if json.Unmarshal(raw.Raw, &s) == nil {
			return s.Zone
		}
	case configv1.GCPPlatformType:
		var s machinev1beta1.GCPMachineProviderSpec
		if json.Unmarshal(raw.Raw, &s) == nil {
			return s.Zone
		}
	}
	return ""
}

// DecodeProviderSpec decodes a providerSpec strictly into the openshift/api type of its platform: unknown
// or duplicate fields are errors.
func DecodeProviderSpec(p configv1.PlatformType, raw []byte) (any, error) {
	var out any
	switch p {
	case configv1.AWSPlatformType:
		out = &machinev1beta1.AWSMachineProviderConfig{}
	case configv1.AzurePlatformType:
		out = &machinev1beta1.AzureMachineProviderSpec{}
	case configv1.VSpherePlatformType:
		out = &machinev1beta1.VSphereMachineProviderSpec{}
	case configv1.GCPPlatformType:
		out = &machinev1beta1.GCPMachineProviderSpec{}
	case configv1.NutanixPlatformType:
		out = &machinev1.NutanixMachineProviderConfig{}
	default:
		return nil, fmt.Errorf("platform %q has no Windows MachineSets: use aws, azure, vsphere, gcp or nutanix, or BYOH (wmcon byoh add) elsewhere", p)
	}
	strict, err := kjson.UnmarshalStrict(raw, out)
	if err != nil {
		return nil, fmt.Errorf("decode the %s providerSpec: %w", p, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("the %s providerSpec has fields its type does not know: %v", p, errors.Join(strict...))
	}
	return out, nil
}

// windowsProviderSpec copies the worker's providerSpec and makes it Windows: the image, size, disk and
// user data secret.
func windowsProviderSpec(req MachineSetRequest, worker machinev1beta1.Machine, infraID string) ([]byte, error) {
	decoded, err := DecodeProviderSpec(req.Platform, worker.Spec.ProviderSpec.Value.Raw)
	if err != nil {
		return nil, fmt.Errorf("worker Machine %s: %w", worker.Name, err)
	}
	userData := &corev1.LocalObjectReference{Name: config.UserDataSecret}
	size := req.InstanceType
	if size == "" {
		size = defaultInstanceType[req.Platform]
	}
	switch s := decoded.(type) {
	case *machinev1beta1.AWSMachineProviderConfig:
		err = windowsAWS(s, req, infraID, size)
		s.UserDataSecret = userData
	case *machinev1beta1.AzureMachineProviderSpec:
		err = windowsAzure(s, req, size)
		s.UserDataSecret = &corev1.SecretReference{Name: config.UserDataSecret}
	case *machinev1beta1.VSphereMachineProviderSpec:
		err = windowsVSphere(s, req)
		s.UserDataSecret = userData
	case *machinev1beta1.GCPMachineProviderSpec:
		windowsGCP(s, req, size)
		s.UserDataSecret = userData
	case *machinev1.NutanixMachineProviderConfig:
		err = windowsNutanix(s, req)
		s.UserDataSecret = userData
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(decoded)
}

func windowsAWS(s *machinev1beta1.AWSMachineProviderConfig, req MachineSetRequest, infraID, size string) error {
	if req.Image == "" {
		return errors.New("--image is required on AWS: the ID of a Windows Server AMI in the cluster's region (e.g. from aws ec2 describe-images --filters Name=name,Values=Windows_Server-2022-English-Core-Base*)")
	}
	workerZone := s.Placement.AvailabilityZone
	s.AMI = machinev1beta1.AWSResourceReference{ID: ptr.To(req.Image)}
	s.InstanceType = size
	s.Placement.AvailabilityZone = req.Zone
	s.BlockDevices = []machinev1beta1.BlockDeviceMappingSpec{{EBS: &machinev1beta1.EBSBlockDeviceSpec{
		VolumeSize: ptr.To[int64](120), VolumeType: ptr.To("gp2"), Encrypted: ptr.To(true)}}}
	// The worker's subnet is named after its zone; point it at the Windows machines' zone.
	for i, f := range s.Subnet.Filters {
		for j, v := range f.Values {
			if workerZone != "" && strings.HasSuffix(v, "-"+workerZone) {
				s.Subnet.Filters[i].Values[j] = strings.TrimSuffix(v, workerZone) + req.Zone
			}
		}
	}
	if s.IAMInstanceProfile == nil || s.IAMInstanceProfile.ID == nil {
		s.IAMInstanceProfile = &machinev1beta1.AWSResourceReference{ID: ptr.To(infraID + "-worker-profile")}
	}
	return nil
}

func windowsAzure(s *machinev1beta1.AzureMachineProviderSpec, req MachineSetRequest, size string) error {
	image := req.Image
	if image == "" {
		image = defaultAzureImage
	}
	parts := strings.Split(image, ":")
	if len(parts) != 4 || slices.Contains(parts, "") {
		return fmt.Errorf("--image %q: on Azure give publisher:offer:sku:version, e.g. %s", image, defaultAzureImage)
	}
	s.Image = machinev1beta1.Image{Publisher: parts[0], Offer: parts[1], SKU: parts[2], Version: parts[3]}
	s.VMSize = size
	s.Zone = req.Zone
	s.OSDisk = machinev1beta1.OSDisk{OSType: "Windows", DiskSizeGB: 128,
		ManagedDisk: machinev1beta1.OSDiskManagedDiskParameters{StorageAccountType: "Premium_LRS"}}
	return nil
}

func windowsVSphere(s *machinev1beta1.VSphereMachineProviderSpec, req MachineSetRequest) error {
	if req.Zone != "" {
		return errors.New("--zone is not used on vSphere: leave it out")
	}
	if req.Image == "" {
		return errors.New("--image is required on vSphere: the name of a Windows Server VM template prepared for WMCO (sysprepped, with OpenSSH and the VMware tools)")
	}
	s.Template = req.Image
	s.NumCPUs, s.NumCoresPerSocket, s.MemoryMiB, s.DiskGiB = 4, 1, 16384, 128
	return nil
}

func windowsGCP(s *machinev1beta1.GCPMachineProviderSpec, req MachineSetRequest, size string) {
	image := req.Image
	if image == "" {
		image = defaultGCPImage
	}
	s.MachineType = size
	s.Zone = req.Zone
	s.Disks = []*machinev1beta1.GCPDisk{{AutoDelete: true, Boot: true, SizeGB: 128, Type: "pd-ssd", Image: image}}
}

func windowsNutanix(s *machinev1.NutanixMachineProviderConfig, req MachineSetRequest) error {
	if req.Zone != "" {
		return errors.New("--zone is not used on Nutanix: leave it out")
	}
	if req.Image == "" {
		return errors.New("--image is required on Nutanix: the name of a Windows Server image in Prism Central")
	}
	s.Image = machinev1.NutanixResourceIdentifier{Type: machinev1.NutanixIdentifierName, Name: ptr.To(req.Image)}
	s.VCPUSockets, s.VCPUsPerSocket = 4, 1
	s.MemorySize = resource.MustParse("16Gi")
	s.SystemDiskSize = resource.MustParse("120Gi")
	return nil
}

func machineSet(req MachineSetRequest, infraID string, spec []byte) *machinev1beta1.MachineSet {
	selector := map[string]string{config.MachineSetClusterLabel: infraID, config.MachineSetLabel: req.Name}
	template := map[string]string{
		config.MachineSetClusterLabel: infraID, config.MachineRoleLabel: "worker", config.MachineTypeLabel: "worker",
		config.MachineSetLabel: req.Name, config.MachineOSIDLabel: config.WindowsOSID,
	}
	return &machinev1beta1.MachineSet{
		TypeMeta: metav1.TypeMeta{APIVersion: machinev1beta1.GroupVersion.String(), Kind: "MachineSet"},
		ObjectMeta: metav1.ObjectMeta{Name: req.Name, Namespace: config.MachineAPINamespace,
			Labels: map[string]string{config.MachineSetClusterLabel: infraID}},
		Spec: machinev1beta1.MachineSetSpec{
			Replicas: ptr.To(req.Replicas),
			Selector: metav1.LabelSelector{MatchLabels: selector},
			Template: machinev1beta1.MachineTemplateSpec{
				ObjectMeta: machinev1beta1.ObjectMeta{Labels: template},
				Spec: machinev1beta1.MachineSpec{
					ObjectMeta:   machinev1beta1.ObjectMeta{Labels: map[string]string{config.WorkerRoleLabel: ""}},
					ProviderSpec: machinev1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: spec}},
				},
			},
		},
	}
}

// ValidateMachineSet checks a Windows MachineSet before it is printed or applied: the labels WMCO needs, the
// user data secret, the name limit, and a providerSpec that decodes strictly into its platform's type.
func ValidateMachineSet(p configv1.PlatformType, ms *machinev1beta1.MachineSet) error {
	if p == "" { // not given: the platform its providerSpec is for (what generate took from the cluster)
		p = configv1.PlatformType(providerPlatform(ms.Spec.Template.Spec.ProviderSpec, ""))
	}
	var problems []string
	if err := validateName(MachineSetRequest{Platform: p, Name: ms.Name}); err != nil {
		problems = append(problems, err.Error())
	}
	if ms.Spec.Template.Labels[config.MachineOSIDLabel] != config.WindowsOSID {
		problems = append(problems, "the Machine template lacks the label "+config.MachineOSIDLabel+"=Windows, so WMCO would ignore its Machines")
	}
	for k, v := range ms.Spec.Selector.MatchLabels {
		if ms.Spec.Template.Labels[k] != v {
			problems = append(problems, fmt.Sprintf("the selector's %s=%s is not on the Machine template", k, v))
		}
	}
	if ms.Spec.Template.Spec.ProviderSpec.Value == nil {
		problems = append(problems, "no providerSpec")
	} else if decoded, err := DecodeProviderSpec(p, ms.Spec.Template.Spec.ProviderSpec.Value.Raw); err != nil {
		problems = append(problems, err.Error())
	} else if userDataSecret(decoded) != config.UserDataSecret {
		problems = append(problems, "providerSpec.userDataSecret.name must be "+config.UserDataSecret)
	}
	if len(problems) > 0 {
		return fmt.Errorf("MachineSet %s is not valid: %s", ms.Name, strings.Join(problems, "; "))
	}
	return nil
}

func userDataSecret(spec any) string {
	var ref *corev1.LocalObjectReference
	switch s := spec.(type) {
	case *machinev1beta1.AWSMachineProviderConfig:
		ref = s.UserDataSecret
	case *machinev1beta1.AzureMachineProviderSpec:
		if s.UserDataSecret != nil {
			return s.UserDataSecret.Name
		}
	case *machinev1beta1.VSphereMachineProviderSpec:
		ref = s.UserDataSecret
	case *machinev1beta1.GCPMachineProviderSpec:
		ref = s.UserDataSecret
	case *machinev1.NutanixMachineProviderConfig:
		ref = s.UserDataSecret
	}
	if ref == nil {
		return ""
	}
	return ref.Name
}
