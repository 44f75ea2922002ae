package cluster

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
)

const (
	// internLimit bounds the interner: once it holds this many strings, new ones are kept as decoded.
	internLimit = 1 << 15
	// internMaxLen: longer strings are rarely repeated (JSON annotations, keys); label values up to it
	// are shared.
	internMaxLen = 64
	// internMaxValue: annotation values are mostly per node (addresses, IDs); only short ones ("true",
	// "Done", a version) are worth sharing.
	internMaxValue = 24
)

// nodeStrings shares the strings that thousands of nodes repeat, for trimNode.
var nodeStrings = &interner{strs: map[string]string{}}

// interner shares the strings that thousands of nodes repeat — label and annotation keys, a zone or an
// instance type, condition reasons and messages, OS images and versions — so that a fleet holds one copy
// of each instead of one per node: every decoded object arrives with copies of its own. Bounded, and safe
// for the informers' concurrent transforms.
type interner struct {
	mu   sync.Mutex
	strs map[string]string
	maps map[string]map[string]string // shareMap's maps, by their sorted contents
}

// get returns the shared copy of s, remembering s when it is at most limit long and there is room; the
// caller holds mu.
func (in *interner) get(s string, limit int) string {
	if len(s) > limit || s == "" {
		return s
	}
	if c, ok := in.strs[s]; ok {
		return c
	}
	if len(in.strs) < internLimit {
		in.strs[s] = s
	}
	return s
}

// stringMap is m in a new map with shared keys (up to internMaxLen long) and shared values up to maxValue.
func (in *interner) stringMap(m map[string]string, maxValue int) map[string]string {
	if m == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[in.get(k, internMaxLen)] = in.get(v, maxValue)
	}
	return out
}

// conditions are node conditions with shared types, statuses, reasons and messages.
func (in *interner) conditions(cs []corev1.NodeCondition) []corev1.NodeCondition {
	if cs == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]corev1.NodeCondition, len(cs))
	for i, c := range cs {
		c.Type = corev1.NodeConditionType(in.get(string(c.Type), internMaxLen))
		c.Status = corev1.ConditionStatus(in.get(string(c.Status), internMaxLen))
		c.Reason = in.get(c.Reason, internMaxLen)
		c.Message = in.get(c.Message, internMaxLen)
		out[i] = c
	}
	return out
}

// systemInfo shares what nodes of one kind have in common (OS, kernel, runtime, kubelet); machine, system
// and boot IDs are per node and kept as they are.
func (in *interner) systemInfo(ni corev1.NodeSystemInfo) corev1.NodeSystemInfo {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, s := range []*string{&ni.KernelVersion, &ni.OSImage, &ni.ContainerRuntimeVersion, &ni.KubeletVersion,
		&ni.KubeProxyVersion, &ni.OperatingSystem, &ni.Architecture} {
		*s = in.get(*s, internMaxLen)
	}
	return ni
}
