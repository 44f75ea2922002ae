package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fp(v float64) *float64 { return &v }

const gib = 1 << 30

func pod(name string, cpu, mem float64, containers ...ContainerMetrics) PodMetrics {
	return PodMetrics{Namespace: "apps", Name: name, CPUCores: fp(cpu), MemoryBytes: fp(mem), Containers: containers}
}

func TestPodPressures(t *testing.T) {
	capacity := NodeCapacity{CPUCores: 4, MemoryBytes: 16 * gib}
	full := &NodeMetrics{MemoryUsedPercent: fp(93), CPUPercent: fp(40)}
	busy := &NodeMetrics{MemoryUsedPercent: fp(50), CPUPercent: fp(97)}
	calm := &NodeMetrics{MemoryUsedPercent: fp(40), CPUPercent: fp(20)}
	leaky := pod("leaky", 0.1, 0.95*gib, ContainerMetrics{Name: "app", MemoryBytes: fp(0.95 * gib), Limits: Resources{MemoryBytes: gib}})
	for _, tc := range []struct {
		name  string
		cap   NodeCapacity
		node  *NodeMetrics
		pods  []PodMetrics
		kinds []PodPressureKind
		first string // the first finding's text
		heavy bool   // the first finding is severe
	}{
		{name: "a pod holds most of a full node's memory", cap: capacity, node: full,
			pods:  []PodMetrics{pod("web", 0.2, gib), pod("report", 0.3, 9*gib)},
			kinds: []PodPressureKind{PodUsesMostMemory}, heavy: true,
			first: "pod apps/report uses 56 % of the node's memory (9.0 GiB of 16.0 GiB)"},
		{name: "most of the memory on a calm node is a risk, not severe", cap: capacity, node: calm,
			pods: []PodMetrics{pod("report", 0.3, 9*gib)}, kinds: []PodPressureKind{PodUsesMostMemory}},
		{name: "a full node with no dominant pod names the largest", cap: capacity, node: full,
			pods:  []PodMetrics{pod("a", 0.1, 3*gib), pod("b", 0.1, 4*gib), pod("c", 0.1, 2*gib)},
			kinds: []PodPressureKind{PodLargestMemory}, heavy: true,
			first: "pod apps/b uses the largest share of the node's memory: 25 % (4.0 GiB of 16.0 GiB)"},
		{name: "a pod uses most of a busy node's cores", cap: capacity, node: busy,
			pods:  []PodMetrics{pod("encoder", 3.1, gib), pod("web", 0.2, gib)},
			kinds: []PodPressureKind{PodUsesMostCPU}, heavy: true,
			first: "pod apps/encoder uses 78 % of the node's CPU (3.10 cores of 4.00 cores)"},
		{name: "near its memory limit", cap: capacity, node: calm, pods: []PodMetrics{leaky},
			kinds: []PodPressureKind{PodNearMemoryLimit},
			first: "container app of pod apps/leaky uses 95 % of its memory limit (972.8 MiB of 1.0 GiB): it fails to allocate at the limit"},
		{name: "quiet pods on a calm node", cap: capacity, node: calm, pods: []PodMetrics{pod("a", 0.1, gib), pod("b", 0.2, gib)}},
		{name: "severe first: the busy node's CPU hog before a leak", cap: capacity, node: busy,
			pods:  []PodMetrics{leaky, pod("encoder", 3.1, gib)},
			kinds: []PodPressureKind{PodUsesMostCPU, PodNearMemoryLimit}, heavy: true},
		{name: "without node figures the capacity still tells", cap: capacity, node: nil,
			pods: []PodMetrics{pod("report", 0.3, 9*gib)}, kinds: []PodPressureKind{PodUsesMostMemory}},
		{name: "without a capacity, the node figures' total", cap: NodeCapacity{}, node: &NodeMetrics{MemoryUsedPercent: fp(95), MemoryTotalBytes: fp(8 * gib)},
			pods: []PodMetrics{pod("report", 0.3, 5*gib)}, kinds: []PodPressureKind{PodUsesMostMemory}, heavy: true},
		{name: "unknown figures name nobody", cap: capacity, node: full,
			pods: []PodMetrics{{Namespace: "apps", Name: "new"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PodPressures(tc.cap, tc.node, tc.pods)
			var kinds []PodPressureKind
			for _, p := range got {
				kinds = append(kinds, p.Kind)
			}
			assert.Equal(t, tc.kinds, kinds)
			if len(got) == 0 {
				return
			}
			assert.Equal(t, tc.heavy, got[0].Severe)
			if tc.first != "" {
				assert.Equal(t, tc.first, got[0].Text)
			}
		})
	}
}

func TestPodLimitsAndRequests(t *testing.T) {
	p := WorkloadPod{Containers: []WorkloadContainer{
		{Requests: Resources{CPUCores: 0.1, MemoryBytes: 100}, Limits: Resources{CPUCores: 1, MemoryBytes: 1000}},
		{Requests: Resources{CPUCores: 0.2}, Limits: Resources{MemoryBytes: 500}},
	}}
	assert.Equal(t, Resources{CPUCores: 0.30000000000000004, MemoryBytes: 100}, p.Requests())
	assert.Equal(t, Resources{MemoryBytes: 1500}, p.Limits(), "one container without a CPU limit leaves the pod's CPU unlimited")
	assert.Equal(t, Resources{}, WorkloadPod{}.Limits())

	got := PressureOf([]PodPressure{{Namespace: "a", Pod: "x"}, {Namespace: "b", Pod: "x"}}, "a", "x")
	require.Len(t, got, 1)
	assert.Equal(t, "a", got[0].Namespace)
}
