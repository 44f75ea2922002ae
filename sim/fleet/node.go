// Package fleet makes Node objects shaped like a real OpenShift cluster's, for the scale benchmarks and
// the tests that prove the informer transforms keep what wmcon reads. A real Node is far bigger than the
// handful of fields a test usually sets: managedFields from half a dozen managers, dozens of cached images,
// OVN-Kubernetes and machine-config annotations, capacity and allocatable.
package fleet

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
)

// Epoch is the creation time of every generated node; fixed so that generated objects are reproducible.
var Epoch = time.Date(2026, 9, 14, 8, 12, 45, 0, time.UTC)

// Windows reports whether Node(i) is a Windows node: every fourth one is, like the benchmarks' fleet.
func Windows(i int) bool { return i%4 == 0 }

// Node is the i-th node of a generated fleet named name (unique per i), with InternalIP ip. Windows nodes
// carry WMCO's labels, annotations and taint; Linux nodes are RHCOS workers managed by machine-config.
func Node(i int, name, ip string) *corev1.Node {
	win := Windows(i)
	zone := fmt.Sprintf("us-east-2%c", 'a'+rune(i%3))
	host := fmt.Sprintf("ip-127-%d-%d-%d", i/65536, i/256%256, i%256)
	machine := fmt.Sprintf("ci-ln-x7k2p-worker-%s-%05d", zone, i)
	n := &corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			CreationTimestamp: metav1.NewTime(Epoch),
			Labels:            labels(win, host, zone),
			Annotations:       annotations(i, win, machine, ip),
		},
		Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/i-0%016x", zone, i)},
		Status: corev1.NodeStatus{
			Capacity:        resources("4", "16105220Ki", "125293548Ki"),
			Allocatable:     resources("3500m", "14954244Ki", "114396791822"),
			Conditions:      conditions(),
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeInternalDNS, Address: host + ".us-east-2.compute.internal"}, {Type: corev1.NodeHostName, Address: host}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo:        nodeInfo(i, win),
			Images:          images(i),
		},
	}
	if win {
		n.Spec.Taints = []corev1.Taint{{Key: "os", Value: "Windows", Effect: corev1.TaintEffectNoSchedule}}
	}
	n.ManagedFields = managedFields(n, win)
	return n
}

func labels(win bool, host, zone string) map[string]string {
	os, osID := "linux", "rhcos"
	if win {
		os, osID = "windows", config.WindowsOSID
	}
	l := map[string]string{
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": "m6i.xlarge", "beta.kubernetes.io/os": os,
		"failure-domain.beta.kubernetes.io/region": "us-east-2", "failure-domain.beta.kubernetes.io/zone": zone,
		"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": host, config.OSLabel: os,
		config.WorkerRoleLabel: "", "node.kubernetes.io/instance-type": "m6i.xlarge", config.OSIDNodeLabel: osID,
		"topology.ebs.csi.aws.com/zone": zone, "topology.kubernetes.io/region": "us-east-2", "topology.kubernetes.io/zone": zone,
	}
	if win {
		l[config.WindowsBuildLabel] = "10.0.20348"
	}
	return l
}

func annotations(i int, win bool, machine, ip string) map[string]string {
	a := map[string]string{
		config.MachineAnnotation:                                 config.MachineAPINamespace + "/" + machine,
		"node.alpha.kubernetes.io/ttl":                           "0",
		"volumes.kubernetes.io/controller-managed-attach-detach": "true",
		"k8s.ovn.org/node-subnets":                               fmt.Sprintf(`{"default":["127.%d.%d.0/23"]}`, 128+i/128%128, i%128*2),
		"k8s.ovn.org/zone-name":                                  fmt.Sprintf("ip-127-0-%d-%d", i/256%256, i%256),
		"k8s.ovn.org/node-id":                                    fmt.Sprint(i + 2),
		"k8s.ovn.org/node-transit-switch-port-ifaddr":            fmt.Sprintf(`{"ipv4":"127.88.%d.%d/16"}`, i/256%256, i%256),
		"k8s.ovn.org/remote-zone-migrated":                       fmt.Sprintf("ip-127-0-%d-%d", i/256%256, i%256),
		"k8s.ovn.org/node-masquerade-subnet":                     `{"ipv4":"127.254.0.0/17","ipv6":"::1/128"}`,
		"k8s.ovn.org/host-cidrs":                                 fmt.Sprintf(`["%s/19"]`, ip),
		"k8s.ovn.org/node-primary-ifaddr":                        fmt.Sprintf(`{"ipv4":"%s/19"}`, ip),
	}
	if win {
		a[config.VersionAnnotation] = "10.20.1-8c2f1a3"
		a[config.PubKeyHashAnnotation] = fmt.Sprintf("%064x", i+1)
		a[config.HostKeyAnnotation] = "AAAAC3NzaC1lZDI1NTE5AAAAIFyCzSWbLxWnS+aFJMTt1xJhWkrTHVaF5Tb0A7mGmnnt"
		a[config.HostKeyTypeAnnotation] = "ssh-ed25519"
		a[config.HybridOverlaySubnet] = fmt.Sprintf("127.132.%d.0/24", i/4%256)
		a["k8s.ovn.org/hybrid-overlay-distributed-router-gateway-mac"] = fmt.Sprintf("00:15:5d:%02x:%02x:%02x", i>>16&255, i>>8&255, i&255)
		return a
	}
	rendered := "rendered-worker-5c1f9a1d6b0e7f3a2c4d8e9b0a1f2c3d"
	a["machineconfiguration.openshift.io/controlPlaneTopology"] = "HighlyAvailable"
	a["machineconfiguration.openshift.io/currentConfig"] = rendered
	a["machineconfiguration.openshift.io/desiredConfig"] = rendered
	a["machineconfiguration.openshift.io/desiredDrain"] = "uncordon-" + rendered
	a["machineconfiguration.openshift.io/lastAppliedDrain"] = "uncordon-" + rendered
	a["machineconfiguration.openshift.io/lastObservedServerCAAnnotation"] = "false"
	a["machineconfiguration.openshift.io/lastSyncedControllerConfigResourceVersion"] = "48213"
	a["machineconfiguration.openshift.io/reason"] = ""
	a["machineconfiguration.openshift.io/state"] = "Done"
	a["cloud.network.openshift.io/egress-ipconfig"] = fmt.Sprintf(`[{"interface":"eni-0%016x","ifaddr":{"ipv4":"127.0.128.0/19"},"capacity":{"ipv4":14,"ipv6":15}}]`, i)
	a["csi.volume.kubernetes.io/nodeid"] = fmt.Sprintf(`{"ebs.csi.aws.com":"i-0%016x"}`, i)
	a["k8s.ovn.org/l3-gateway-config"] = fmt.Sprintf(`{"default":{"mode":"shared","bridge-id":"br-ex","interface-id":"br-ex_%s","mac-address":"02:%02x:%02x:%02x:5e:01","ip-addresses":["%s/19"],"ip-address":"%s/19","next-hops":["127.0.128.1"],"next-hop":"127.0.128.1","node-port-enable":"true","vlan-id":"0"}}`, machine, i>>16&255, i>>8&255, i&255, ip, ip)
	a["k8s.ovn.org/node-chassis-id"] = fmt.Sprintf("%08x-1c2d-4e5f-8a9b-%012x", i, i)
	a["k8s.ovn.org/node-gateway-router-lrp-ifaddrs"] = fmt.Sprintf(`{"default":{"ipv4":"127.64.%d.%d/16"}}`, i/256%256, i%256)
	return a
}

func resources(cpu, memory, storage string) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourceEphemeralStorage: resource.MustParse(storage), corev1.ResourcePods: resource.MustParse("250"),
		"hugepages-1Gi": resource.MustParse("0"), "hugepages-2Mi": resource.MustParse("0"),
	}
}

func conditions() []corev1.NodeCondition {
	beat := metav1.NewTime(Epoch.Add(70 * 24 * time.Hour))
	since := metav1.NewTime(Epoch.Add(2 * time.Minute))
	c := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: beat, LastTransitionTime: since}
	}
	out := []corev1.NodeCondition{
		c(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		c(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		c(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		c(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
	}
	return out
}

func nodeInfo(i int, win bool) corev1.NodeSystemInfo {
	ni := corev1.NodeSystemInfo{
		MachineID: fmt.Sprintf("ec2%029x", i), SystemUUID: fmt.Sprintf("ec2%05x-1e9a-7d3f-4580-%012x", i, i),
		BootID: fmt.Sprintf("%08x-0b1c-4d2e-9f30-%012x", i, i), Architecture: "amd64",
		KubeletVersion: "v1.33.4", KubeProxyVersion: "v1.33.4",
	}
	if win {
		ni.KernelVersion, ni.OSImage, ni.OperatingSystem = "10.0.20348.3932", "Windows Server 2022 Datacenter", "windows"
		ni.ContainerRuntimeVersion, ni.KubeletVersion = "containerd://1.7.27", "v1.33.4-dirty"
		return ni
	}
	ni.KernelVersion, ni.OperatingSystem = "5.14.0-570.42.2.el9_6.x86_64", "linux"
	ni.OSImage = "Red Hat Enterprise Linux CoreOS 9.6.20250910-0 (Plow)"
	ni.ContainerRuntimeVersion = "cri-o://1.33.4-3.rhaos4.20.gitd0ea985.el9"
	return ni
}

// images lists 40 to 60 cached images, each by digest and, for most, also by tag, as the kubelet reports them.
func images(i int) []corev1.ContainerImage {
	count := 40 + i%21
	out := make([]corev1.ContainerImage, count)
	for k := range out {
		digest := fmt.Sprintf("quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:%064x", uint64(k)*2654435761+uint64(i%7))
		names := []string{digest}
		if k%3 != 0 {
			names = append(names, fmt.Sprintf("registry.redhat.io/openshift4/component-%02d-rhel9:v4.20.0-%d", k, 202509100000+k))
		}
		out[k] = corev1.ContainerImage{Names: names, SizeBytes: int64(50_000_000 + k*7_340_033)}
	}
	return out
}

// managedFields attributes the node's fields to the managers that own them on a real cluster: the kubelet
// (status), the node-lifecycle and attach-detach controllers, machine-config or WMCO, OVN-Kubernetes, the
// cloud node manager and the CSI driver.
func managedFields(n *corev1.Node, win bool) []metav1.ManagedFieldsEntry {
	keys := func(m map[string]string, prefixes ...string) map[string]any {
		out := map[string]any{}
		for k := range m {
			for _, p := range prefixes {
				if len(k) >= len(p) && k[:len(p)] == p {
					out["f:"+k] = map[string]any{}
				}
			}
		}
		return out
	}
	conds := map[string]any{".": map[string]any{}}
	for _, c := range n.Status.Conditions {
		conds[fmt.Sprintf(`k:{"type":%q}`, c.Type)] = map[string]any{".": map[string]any{}, "f:lastHeartbeatTime": map[string]any{},
			"f:lastTransitionTime": map[string]any{}, "f:message": map[string]any{}, "f:reason": map[string]any{}, "f:status": map[string]any{}, "f:type": map[string]any{}}
	}
	kubelet := map[string]any{
		"f:metadata": map[string]any{"f:annotations": map[string]any{".": map[string]any{}, "f:volumes.kubernetes.io/controller-managed-attach-detach": map[string]any{}},
			"f:labels": keys(n.Labels, "beta.kubernetes.io/", "kubernetes.io/", "node.kubernetes.io/", "topology.kubernetes.io/", "failure-domain.")},
		"f:spec": map[string]any{"f:providerID": map[string]any{}},
		"f:status": map[string]any{"f:addresses": map[string]any{}, "f:allocatable": map[string]any{}, "f:capacity": map[string]any{},
			"f:conditions": conds, "f:daemonEndpoints": map[string]any{}, "f:images": map[string]any{}, "f:nodeInfo": map[string]any{}},
	}
	owner := "machine-config-daemon"
	ownerFields := map[string]any{"f:metadata": map[string]any{"f:annotations": keys(n.Annotations, "machineconfiguration.openshift.io/")}}
	if win {
		owner = "windows-machine-config-operator"
		ownerFields = map[string]any{"f:metadata": map[string]any{"f:annotations": keys(n.Annotations, config.Prefix),
			"f:labels": keys(n.Labels, config.WindowsBuildLabel)}, "f:spec": map[string]any{"f:taints": map[string]any{}}}
	}
	entry := func(manager, sub string, fields map[string]any) metav1.ManagedFieldsEntry {
		raw, _ := json.Marshal(fields) // maps of strings: cannot fail
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: ptrTime(Epoch.Add(70 * 24 * time.Hour)), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}, Subresource: sub}
	}
	out := []metav1.ManagedFieldsEntry{
		entry("kubelet", "", map[string]any{"f:metadata": kubelet["f:metadata"], "f:spec": kubelet["f:spec"]}),
		entry("kubelet", "status", map[string]any{"f:status": kubelet["f:status"]}),
		entry("kube-controller-manager", "", map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:node.alpha.kubernetes.io/ttl": map[string]any{}}}}),
		entry("ovnkube", "", map[string]any{"f:metadata": map[string]any{"f:annotations": keys(n.Annotations, "k8s.ovn.org/")}}),
		entry(owner, "", ownerFields),
		entry("aws-cloud-controller-manager", "", map[string]any{"f:metadata": map[string]any{"f:labels": keys(n.Labels, "topology.ebs.csi.aws.com/")}}),
		entry("machine-approver", "", map[string]any{"f:metadata": map[string]any{"f:labels": keys(n.Labels, config.RoleLabelPrefix, config.OSIDNodeLabel)}}),
	}
	if !win {
		out = append(out, entry("cloud-network-config-controller", "", map[string]any{"f:metadata": map[string]any{"f:annotations": keys(n.Annotations, "cloud.network.openshift.io/", "csi.volume.kubernetes.io/")}}))
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Manager < out[b].Manager })
	return out
}

func ptrTime(t time.Time) *metav1.Time { mt := metav1.NewTime(t); return &mt }
