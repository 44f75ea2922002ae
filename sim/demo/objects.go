package demo

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/config"
)

// Names of the demo cluster. Every address is on loopback: Windows nodes are simulated hosts on 127.0.0.N,
// and Linux nodes carry 127.0.1.N addresses that nothing ever dials.
const (
	InfraID          = "demo-7xk2p"
	OperatorVersion  = "11.0.1"
	OpenShiftVersion = "4.24.2"
	KubeVersion      = "v1.37.1"
	oldWMCOVersion   = "10.20.0-8c4b2a1"
	currentWMCO      = OperatorVersion + "-3f9d0e2"
	windowsBuild     = "10.0.20348"
	zoneA            = "us-east-1a"
	zoneB            = "us-east-1b"
)

// WindowsNode is one Windows node of the demo and what its simulated host should look like.
type WindowsNode struct {
	IP         string // 127.0.0.N
	MachineSet string // "" for BYOH
	Machine    string
	Version    string // WMCO version annotation
	BYOH       bool
	KubeletOff bool // its host's kubelet is stopped, so the node is NotReady
	Joining    bool // appears during the demo: its Machine provisions first
	// Standalone: configured by wmcon itself (no Machine, not in windows-instances), so wmcon, not the
	// operator, upgrades it.
	Standalone bool
}

// NodeName is the AWS-style node name for an address.
func NodeName(ip string) string {
	return fmt.Sprintf("ip-%s.ec2.internal", dashed(ip))
}

func dashed(ip string) string {
	b := []byte(ip)
	for i := range b {
		if b[i] == '.' {
			b[i] = '-'
		}
	}
	return string(b)
}

func machineSetName(zone string) string { return InfraID + "-winworker-" + zone }

// kubeletStoppedAgo is when the kubelet of the demo's NotReady node stopped: its Ready condition turned
// Unknown then, and its log ends then.
const kubeletStoppedAgo = 7 * time.Minute

// StandaloneIP is the demo's standalone Windows node: configured by wmcon while WMCO 10.20 was installed,
// so `wmcon --demo upgrade run` (U in the console) upgrades it through the configuration engine.
const StandaloneIP = "127.0.0.8"

// windowsNodes is the demo's Windows fleet.
func windowsNodes() []WindowsNode {
	a, b := machineSetName(zoneA), machineSetName(zoneB)
	return []WindowsNode{
		{IP: "127.0.0.2", MachineSet: a, Machine: a + "-8fh2k", Version: currentWMCO},
		{IP: "127.0.0.3", MachineSet: a, Machine: a + "-q7w4m", Version: currentWMCO, KubeletOff: true},
		{IP: "127.0.0.4", MachineSet: b, Machine: b + "-z2x9c", Version: oldWMCOVersion},
		{IP: "127.0.0.5", Version: currentWMCO, BYOH: true},
		{IP: "127.0.0.6", MachineSet: b, Machine: b + "-r5t8n", Version: currentWMCO, Joining: true},
		{IP: StandaloneIP, Version: oldWMCOVersion, Standalone: true},
	}
}

func meta(name, ns string, age time.Duration, now time.Time) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, CreationTimestamp: metav1.NewTime(now.Add(-age)),
		UID: uidFor(name)}
}

func uidFor(name string) types.UID { return types.UID("demo-" + name) }

func linuxNode(name, ip, role string, age time.Duration, now time.Time) *corev1.Node {
	n := &corev1.Node{ObjectMeta: meta(name, "", age, now)}
	n.Labels = map[string]string{
		config.OSLabel: "linux", config.OSIDNodeLabel: "rhel", config.RoleLabelPrefix + role: "",
		"kubernetes.io/hostname": name,
	}
	n.Status = nodeStatus(ip, name, "Red Hat Enterprise Linux CoreOS 9.6", true, now)
	return n
}

func windowsNode(w WindowsNode, age time.Duration, now time.Time) *corev1.Node {
	name := NodeName(w.IP)
	n := &corev1.Node{ObjectMeta: meta(name, "", age, now)}
	n.Labels = map[string]string{
		config.OSLabel: "windows", config.OSIDNodeLabel: config.WindowsOSID, config.WorkerRoleLabel: "",
		config.WindowsBuildLabel: windowsBuild, "kubernetes.io/hostname": name,
	}
	n.Annotations = map[string]string{
		config.VersionAnnotation:        w.Version,
		config.DesiredVersionAnnotation: w.Version,
		config.UsernameAnnotation:       "demo-encrypted-username",
	}
	switch {
	case w.Standalone:
	case w.BYOH:
		n.Labels[config.BYOHLabel] = "true"
	default:
		n.Annotations[config.MachineAnnotation] = config.MachineAPINamespace + "/" + w.Machine
	}
	n.Spec.Taints = []corev1.Taint{{Key: "os", Value: "Windows", Effect: corev1.TaintEffectNoSchedule}}
	n.Status = nodeStatus(w.IP, name, "Windows Server 2022 Datacenter", !w.KubeletOff, now)
	return n
}

func nodeStatus(ip, name, osImage string, ready bool, now time.Time) corev1.NodeStatus {
	st := corev1.NodeStatus{
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: ip},
			{Type: corev1.NodeHostName, Address: name},
			{Type: corev1.NodeInternalDNS, Address: name},
		},
		NodeInfo:        corev1.NodeSystemInfo{OSImage: osImage, KubeletVersion: KubeVersion, ContainerRuntimeVersion: "containerd://2.1.4"},
		Capacity:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("250")},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
	}
	st.Allocatable = st.Capacity
	st.Conditions = conditions(ready, now)
	return st
}

// conditions are a node's conditions; a NotReady node's kubelet stopped posting status some minutes ago.
func conditions(ready bool, now time.Time) []corev1.NodeCondition {
	beat := metav1.NewTime(now)
	since := metav1.NewTime(now.Add(-36 * time.Hour))
	readyCond := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status", LastHeartbeatTime: beat, LastTransitionTime: since}
	if !ready {
		lost := metav1.NewTime(now.Add(-kubeletStoppedAgo))
		readyCond = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
			Message: "Kubelet stopped posting node status.", LastHeartbeatTime: lost, LastTransitionTime: lost}
	}
	out := []corev1.NodeCondition{readyCond}
	for _, t := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		out = append(out, corev1.NodeCondition{Type: t, Status: corev1.ConditionFalse, Reason: "KubeletHas" + "No" + string(t),
			LastHeartbeatTime: beat, LastTransitionTime: since})
	}
	return out
}

func machineSet(name, zone string, replicas int32, windows bool, age time.Duration, now time.Time) *machinev1beta1.MachineSet {
	ms := &machinev1beta1.MachineSet{ObjectMeta: meta(name, config.MachineAPINamespace, age, now)}
	ms.Labels = map[string]string{config.MachineSetClusterLabel: InfraID}
	sel := map[string]string{config.MachineSetClusterLabel: InfraID, config.MachineSetLabel: name}
	tmpl := map[string]string{
		config.MachineSetClusterLabel: InfraID, config.MachineSetLabel: name,
		config.MachineRoleLabel: "worker", config.MachineTypeLabel: "worker",
	}
	if windows {
		tmpl[config.MachineOSIDLabel] = config.WindowsOSID
	}
	ms.Spec.Replicas = ptr.To(replicas)
	ms.Spec.Selector = metav1.LabelSelector{MatchLabels: sel}
	ms.Spec.Template.ObjectMeta.Labels = tmpl
	ms.Spec.Template.Spec.ObjectMeta.Labels = map[string]string{config.WorkerRoleLabel: ""}
	ms.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: awsProviderSpec(zone, windows)}
	ms.Status = machinev1beta1.MachineSetStatus{Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas, FullyLabeledReplicas: replicas}
	return ms
}

func awsProviderSpec(zone string, windows bool) []byte {
	instance, ami := "m6i.xlarge", "ami-0c1d2e3f4a5b6c7d8"
	userData := "worker-user-data"
	if windows {
		instance, ami, userData = "m5a.large", "ami-0a9b8c7d6e5f40312", config.UserDataSecret
	}
	spec := map[string]any{
		"apiVersion": "machine.openshift.io/v1beta1", "kind": "AWSMachineProviderConfig",
		"instanceType": instance, "ami": map[string]string{"id": ami},
		"placement":          map[string]string{"availabilityZone": zone, "region": "us-east-1"},
		"userDataSecret":     map[string]string{"name": userData},
		"credentialsSecret":  map[string]string{"name": "aws-cloud-credentials"},
		"iamInstanceProfile": map[string]string{"id": InfraID + "-worker-profile"},
		"subnet":             map[string]any{"filters": []any{map[string]any{"name": "tag:Name", "values": []string{InfraID + "-subnet-private-" + zone}}}},
		"securityGroups":     []any{map[string]any{"filters": []any{map[string]any{"name": "tag:Name", "values": []string{InfraID + "-node"}}}}},
	}
	raw, _ := json.Marshal(spec)
	return raw
}

func machine(name, set string, windows bool, phase, node string, age time.Duration, now time.Time) *machinev1beta1.Machine {
	m := &machinev1beta1.Machine{ObjectMeta: meta(name, config.MachineAPINamespace, age, now)}
	m.Labels = map[string]string{config.MachineSetClusterLabel: InfraID, config.MachineSetLabel: set,
		config.MachineRoleLabel: "worker", config.MachineTypeLabel: "worker"}
	if windows {
		m.Labels[config.MachineOSIDLabel] = config.WindowsOSID
	}
	m.Status.Phase = ptr.To(phase)
	zone := set[strings.LastIndex(set, "worker-")+len("worker-"):]
	// Its MachineSet's providerSpec, as a Machine carries it (what machineset generate copies from).
	m.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: awsProviderSpec(zone, windows)}
	if node != "" {
		m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node}
		// The instance behind a Machine that has a node: its providerID and addresses, as on AWS.
		m.Spec.ProviderID = ptr.To(fmt.Sprintf("aws:///%s/i-0%016x", zone, fnv64(name)))
		ip := strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(node, "ip-"), ".ec2.internal"), "-", ".")
		m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip},
			{Type: corev1.NodeInternalDNS, Address: node}, {Type: corev1.NodeHostName, Address: node}}
	}
	return m
}

// fnv64 is a stable number for a name (the demo's instance IDs).
func fnv64(name string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return h.Sum64() >> 4
}

func infrastructure(now time.Time) *configv1.Infrastructure {
	i := &configv1.Infrastructure{ObjectMeta: meta(config.ClusterSingletonName, "", 40*24*time.Hour, now)}
	i.Status.InfrastructureName = InfraID
	i.Status.PlatformStatus = &configv1.PlatformStatus{Type: configv1.AWSPlatformType, AWS: &configv1.AWSPlatformStatus{Region: "us-east-1"}}
	i.Status.APIServerInternalURL = "https://api-int.demo.example.com:6443"
	return i
}

func clusterVersion(now time.Time) *configv1.ClusterVersion {
	cv := &configv1.ClusterVersion{ObjectMeta: meta(config.ClusterVersionName, "", 40*24*time.Hour, now)}
	cv.Spec.ClusterID = "3c1f8a52-demo-4e1b-9d07-5a0c2b7e6f11"
	cv.Status.Desired = configv1.Release{Version: OpenShiftVersion}
	return cv
}

func network(now time.Time) *configv1.Network {
	n := &configv1.Network{ObjectMeta: meta(config.ClusterSingletonName, "", 40*24*time.Hour, now)}
	n.Spec.NetworkType = "OVNKubernetes"
	n.Spec.ClusterNetwork = []configv1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}}
	n.Spec.ServiceNetwork = []string{"172.30.0.0/16"}
	return n
}

func mirrorSets(now time.Time) (*configv1.ImageDigestMirrorSet, *configv1.ImageTagMirrorSet) {
	idms := &configv1.ImageDigestMirrorSet{ObjectMeta: meta("windows-images", "", 12*24*time.Hour, now)}
	idms.Spec.ImageDigestMirrors = []configv1.ImageDigestMirrors{
		{Source: "mcr.microsoft.com/oss/kubernetes/pause", Mirrors: []configv1.ImageMirror{"registry.mirror.internal:5000/mcr/oss/kubernetes/pause"}},
		{Source: "mcr.microsoft.com/windows/servercore", Mirrors: []configv1.ImageMirror{"registry.mirror.internal:5000/mcr/windows/servercore", "quay.io/demo-mirror/windows/servercore"},
			MirrorSourcePolicy: configv1.NeverContactSource},
	}
	itms := &configv1.ImageTagMirrorSet{ObjectMeta: meta("release-tags", "", 12*24*time.Hour, now)}
	itms.Spec.ImageTagMirrors = []configv1.ImageTagMirrors{
		{Source: "registry.redhat.io/ubi9", Mirrors: []configv1.ImageMirror{"registry.mirror.internal:5000/ubi9"}},
	}
	return idms, itms
}

func secret(name, ns, key string, value []byte, typ corev1.SecretType, now time.Time) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: meta(name, ns, 30*24*time.Hour, now), Type: typ}
	s.Data = map[string][]byte{key: value}
	return s
}

func pullSecretJSON() []byte {
	auth := base64.StdEncoding.EncodeToString([]byte("demo:not-a-real-password"))
	return []byte(`{"auths":{"registry.mirror.internal:5000":{"auth":"` + auth + `"}}}`)
}

func operatorCSV(now time.Time) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("operators.coreos.com/v1alpha1")
	u.SetKind("ClusterServiceVersion")
	u.SetName(config.OperatorName + ".v" + OperatorVersion)
	u.SetNamespace(config.OperatorNamespace)
	u.SetCreationTimestamp(metav1.NewTime(now.Add(-9 * 24 * time.Hour)))
	_ = unstructured.SetNestedField(u.Object, OperatorVersion, "spec", "version")
	_ = unstructured.SetNestedField(u.Object, "Windows Machine Config Operator", "spec", "displayName")
	_ = unstructured.SetNestedField(u.Object, "Succeeded", "status", "phase")
	return u
}

// operatorDeployment is the running operator, available, as OLM left it when the CSV succeeded.
func operatorDeployment(now time.Time) *appsv1.Deployment {
	labels := map[string]string{"name": config.OperatorName}
	d := &appsv1.Deployment{ObjectMeta: meta(config.OperatorName, config.OperatorNamespace, 9*24*time.Hour, now),
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}}
	d.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}}
	return d
}

// OperatorNetworkResource is network.operator.openshift.io, which carries the hybrid overlay settings.
var OperatorNetworkResource = schema.GroupVersionResource{Group: "operator.openshift.io", Version: "v1", Resource: "networks"}

// operatorNetwork is network.operator.openshift.io/cluster with the hybrid overlay Windows nodes need.
func operatorNetwork(now time.Time) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("operator.openshift.io/v1")
	u.SetKind("Network")
	u.SetName(config.ClusterSingletonName)
	u.SetCreationTimestamp(metav1.NewTime(now.Add(-40 * 24 * time.Hour)))
	hybrid := map[string]any{"hybridClusterNetwork": []any{map[string]any{"cidr": "10.132.0.0/14", "hostPrefix": int64(23)}}}
	_ = unstructured.SetNestedField(u.Object, "OVNKubernetes", "spec", "defaultNetwork", "type")
	_ = unstructured.SetNestedMap(u.Object, hybrid, "spec", "defaultNetwork", "ovnKubernetesConfig", "hybridOverlayConfig")
	return u
}
