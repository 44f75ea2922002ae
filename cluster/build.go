package cluster

import (
	"encoding/json"
	"github.com/wmcon/wmcon/model"
	"net"
	"sort"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/wmcon/wmcon/config"
)

type buildInput struct {
	seq        uint64
	now        time.Time
	target     Target
	k8sVersion string
	conn       model.Connection
	states     map[model.Resource]model.ResourceState
}

// build turns the informers' caches into a Snapshot. It only reads the caches and copies what it needs
// (node rows share their maps and slices with the cached rows, which nothing changes).
func build(l listers, in buildInput) *model.Snapshot {
	s := &model.Snapshot{Seq: in.seq, Taken: in.now, Connection: in.conn, Resources: in.states}
	s.Cluster = clusterInfo(l, in)
	var rows []model.NodeInfo
	for _, idx := range l.nodes {
		rows = appendRows(rows, idx.List())
	}
	s.Nodes = sortedRows(rows, s.Cluster.WMCOVersion)
	s.MachineSets = machineSetInfos(items[*machinev1beta1.MachineSet](l.machineSets),
		items[*machinev1beta1.Machine](l.machines), s.Cluster.Platform)
	s.Mirrors = mirrorInfos(items[*configv1.ImageDigestMirrorSet](l.idms), items[*configv1.ImageTagMirrorSet](l.itms))
	s.BYOH, s.BYOHProblems = byohInfo(items[*corev1.ConfigMap](l.configMaps))
	s.Secrets = secretsInfo(items[*corev1.Secret](l.secrets), items[*corev1.Secret](l.userData), items[*corev1.Secret](l.pullSecret))
	return s
}

// items lists a cache as typed objects; a nil cache (resource not watched) is empty.
func items[T any](idx cache.Indexer) []T {
	if idx == nil {
		return nil
	}
	var out []T
	for _, o := range idx.List() {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

func clusterInfo(l listers, in buildInput) model.ClusterInfo {
	ci := model.ClusterInfo{Server: in.target.Server, Context: in.target.Context, KubernetesVersion: in.k8sVersion}
	for _, inf := range items[*configv1.Infrastructure](l.infra) {
		ci.InfraID = inf.Status.InfrastructureName
		ci.Name = inf.Status.InfrastructureName
		if inf.Status.PlatformStatus != nil {
			ci.Platform = string(inf.Status.PlatformStatus.Type)
		}
	}
	for _, cv := range items[*configv1.ClusterVersion](l.cv) {
		ci.OpenShiftVersion = cv.Status.Desired.Version
	}
	for _, n := range items[*configv1.Network](l.network) {
		ci.NetworkType = n.Spec.NetworkType
	}
	ci.WMCOVersion, ci.WMCOPhase = operatorVersion(items[*unstructured.Unstructured](l.csv))
	if ci.Name == "" {
		ci.Name = in.target.Context
	}
	return ci
}

// operatorVersion finds the WMCO ClusterServiceVersion; during an upgrade two exist, and the one that
// succeeded is the one running.
func operatorVersion(csvs []*unstructured.Unstructured) (version, phase string) {
	for _, c := range csvs {
		if !strings.HasPrefix(c.GetName(), config.OperatorName) {
			continue
		}
		v, _, _ := unstructured.NestedString(c.Object, "spec", "version")
		p, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		if version == "" || p == "Succeeded" {
			version, phase = v, p
		}
	}
	return version, phase
}

// appendRows appends the rows of cached Nodes objects (rowInfo) to rows.
func appendRows(rows []model.NodeInfo, objs []any) []model.NodeInfo {
	if rows == nil {
		rows = make([]model.NodeInfo, 0, len(objs))
	}
	for _, o := range objs {
		if info, ok := rowInfo(o); ok {
			rows = append(rows, info)
		}
	}
	return rows
}

// NodeInfoFrom describes one Node; operatorVersion is the installed WMCO version ("" when unknown).
func NodeInfoFrom(n *corev1.Node, operatorVersion string) model.NodeInfo {
	info := nodeInfo(n)
	withOperator(&info, operatorVersion)
	return info
}

// withOperator sets what a row says about the node's WMCO version against the installed operator's.
func withOperator(info *model.NodeInfo, operatorVersion string) {
	info.VersionDrift = info.Windows && operatorVersion != "" && info.WMCOVersion != "" &&
		!SameOperatorVersion(info.WMCOVersion, operatorVersion)
	info.DriftPickedUp = info.VersionDrift && SameOperatorVersion(info.DesiredVersion, operatorVersion)
}

// nodeInfo is n's row less what depends on the operator's version (withOperator). The row shares n's
// label and annotation maps rather than copying them (a fleet's largest part): neither side changes
// them, as an informer replaces a cached object on every change and never alters one.
func nodeInfo(n *corev1.Node) model.NodeInfo {
	info := model.NodeInfo{
		Name: n.Name, UID: string(n.UID), Unschedulable: n.Spec.Unschedulable,
		Windows:        n.Labels[config.OSLabel] == "windows" || n.Labels[config.OSIDNodeLabel] == config.WindowsOSID,
		WindowsBuild:   n.Labels[config.WindowsBuildLabel],
		OSImage:        n.Status.NodeInfo.OSImage,
		KubeletVersion: n.Status.NodeInfo.KubeletVersion,
		BootID:         n.Status.NodeInfo.BootID,
		Roles:          roles(n.Labels),
		BYOH:           n.Labels[config.BYOHLabel] == "true",
		WMCOVersion:    n.Annotations[config.VersionAnnotation],
		DesiredVersion: n.Annotations[config.DesiredVersionAnnotation],
		Upgrading:      n.Labels[config.UpgradingLabel] == "true",
		Machine:        n.Annotations[config.MachineAnnotation],
		HostKeyPinned:  n.Annotations[config.HostKeyAnnotation] != "",
		Created:        n.CreationTimestamp.Time,
		Labels:         n.Labels, // shared, not copied: see nodeInfo
		Annotations:    n.Annotations,
		Status:         model.NodeNoStatus, // until a Ready condition says otherwise
	}
	_, info.RebootRequired = n.Annotations[config.RebootRequiredAnnotation]
	info.InternalIP, info.InternalDNS = addresses(n.Status.Addresses)
	for _, c := range n.Status.Conditions {
		info.Conditions = append(info.Conditions, model.Condition{
			Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			LastTransitionTime: c.LastTransitionTime.Time, LastHeartbeatTime: c.LastHeartbeatTime.Time,
		})
		if c.Type == corev1.NodeReady {
			info.Status = readiness(c.Status)
		}
	}
	for _, t := range n.Spec.Taints {
		info.Taints = append(info.Taints, taintString(t))
	}
	info.Capacity, info.Allocatable = quantities(n.Status.Capacity), quantities(n.Status.Allocatable)
	return info
}

// SameOperatorVersion compares a node's version annotation with the operator's version. The annotation
// carries the operator's full build version (e.g. "10.17.0-0f6ea4b"), the CSV only its release ("10.17.0"),
// so a node matches when the annotation equals the release or extends it with a build suffix.
func SameOperatorVersion(nodeVersion, operator string) bool {
	if nodeVersion == operator {
		return true
	}
	return strings.HasPrefix(nodeVersion, operator+"-") || strings.HasPrefix(nodeVersion, operator+"+")
}

// quantities turns a resource list into strings ("16Gi"); nil when empty.
func quantities(l corev1.ResourceList) map[string]string {
	if len(l) == 0 {
		return nil
	}
	out := make(map[string]string, len(l))
	for k, q := range l {
		out[string(k)] = q.String()
	}
	return out
}

func readiness(s corev1.ConditionStatus) model.NodeStatus {
	switch s {
	case corev1.ConditionTrue:
		return model.NodeReady
	case corev1.ConditionFalse:
		return model.NodeNotReady
	default:
		return model.NodeUnknown
	}
}

func roles(labels map[string]string) []string {
	var out []string
	for k := range labels {
		if r, ok := strings.CutPrefix(k, config.RoleLabelPrefix); ok && r != "" {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// addresses returns the first IPv4 InternalIP (WMCO's SSH address) and the first InternalDNS name.
func addresses(addrs []corev1.NodeAddress) (ip, dns string) {
	for _, a := range addrs {
		switch a.Type {
		case corev1.NodeInternalIP:
			if parsed := net.ParseIP(a.Address); ip == "" && parsed != nil && parsed.To4() != nil {
				ip = a.Address
			}
		case corev1.NodeInternalDNS:
			if dns == "" {
				dns = a.Address
			}
		}
	}
	return ip, dns
}

func taintString(t corev1.Taint) string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	return s + ":" + string(t.Effect)
}

func copyMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func machineSetInfos(sets []*machinev1beta1.MachineSet, machines []*machinev1beta1.Machine, clusterPlatform string) []model.MachineSetInfo {
	bySet := map[string][]model.MachineInfo{}
	for _, m := range machines {
		set := m.Labels[config.MachineSetLabel]
		bySet[set] = append(bySet[set], machineInfo(m))
	}
	out := make([]model.MachineSetInfo, 0, len(sets))
	for _, ms := range sets {
		info := model.MachineSetInfo{
			Namespace: ms.Namespace, Name: ms.Name,
			Current: ms.Status.Replicas, Ready: ms.Status.ReadyReplicas, Available: ms.Status.AvailableReplicas,
			Windows:  ms.Spec.Template.ObjectMeta.Labels[config.MachineOSIDLabel] == config.WindowsOSID,
			Platform: providerPlatform(ms.Spec.Template.Spec.ProviderSpec, clusterPlatform),
			Created:  ms.CreationTimestamp.Time,
			Machines: bySet[ms.Name],
			Labels:   copyMap(ms.Labels),
			Provider: providerSummary(ms.Spec.Template.Spec.ProviderSpec),
		}
		if ms.Spec.Replicas != nil {
			info.Desired = *ms.Spec.Replicas
		}
		sort.Slice(info.Machines, func(i, j int) bool { return info.Machines[i].Name < info.Machines[j].Name })
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func machineInfo(m *machinev1beta1.Machine) model.MachineInfo {
	mi := model.MachineInfo{Name: m.Name, Windows: m.Labels[config.MachineOSIDLabel] == config.WindowsOSID, Created: m.CreationTimestamp.Time}
	if m.Status.Phase != nil {
		mi.Phase = *m.Status.Phase
	}
	if m.Status.NodeRef != nil {
		mi.NodeName = m.Status.NodeRef.Name
	}
	if m.Spec.ProviderID != nil {
		mi.ProviderID = *m.Spec.ProviderID
	}
	for _, a := range m.Status.Addresses {
		mi.Addresses = append(mi.Addresses, string(a.Type)+" "+a.Address)
	}
	if m.Status.ErrorReason != nil {
		mi.ErrorReason = string(*m.Status.ErrorReason)
	}
	if m.Status.ErrorMessage != nil {
		mi.ErrorMessage = *m.Status.ErrorMessage
	}
	return mi
}

// providerKinds maps providerSpec kinds to platform names.
var providerKinds = map[string]string{
	"AWSMachineProviderConfig":     "AWS",
	"AzureMachineProviderSpec":     "Azure",
	"VSphereMachineProviderSpec":   "VSphere",
	"GCPMachineProviderSpec":       "GCP",
	"NutanixMachineProviderConfig": "Nutanix",
}

func providerPlatform(ps machinev1beta1.ProviderSpec, fallback string) string {
	if ps.Value == nil || len(ps.Value.Raw) == 0 {
		return fallback
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(ps.Value.Raw, &head) == nil {
		if p, ok := providerKinds[head.Kind]; ok {
			return p
		}
	}
	return fallback
}

func mirrorInfos(idms []*configv1.ImageDigestMirrorSet, itms []*configv1.ImageTagMirrorSet) []model.MirrorInfo {
	sort.Slice(idms, func(i, j int) bool { return idms[i].Name < idms[j].Name })
	sort.Slice(itms, func(i, j int) bool { return itms[i].Name < itms[j].Name })
	var out []model.MirrorInfo
	for _, o := range idms {
		for _, e := range o.Spec.ImageDigestMirrors {
			out = append(out, model.MirrorInfo{Kind: "ImageDigestMirrorSet", Object: o.Name, Source: e.Source,
				Mirrors: mirrorStrings(e.Mirrors), Policy: string(e.MirrorSourcePolicy)})
		}
	}
	for _, o := range itms {
		for _, e := range o.Spec.ImageTagMirrors {
			out = append(out, model.MirrorInfo{Kind: "ImageTagMirrorSet", Object: o.Name, Source: e.Source,
				Mirrors: mirrorStrings(e.Mirrors), Policy: string(e.MirrorSourcePolicy)})
		}
	}
	return out
}

func mirrorStrings(ms []configv1.ImageMirror) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out
}
