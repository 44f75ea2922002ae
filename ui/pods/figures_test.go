package pods

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/model"
)

func f(v float64) *float64 { return &v }

// TestMarks: a container near its memory limit is past a threshold whatever the node; a pod using most
// of the node's memory or cores is a risk, past a threshold when the node is short of it; others are
// plain.
func TestMarks(t *testing.T) {
	capacity := model.NodeCapacity{CPUCores: 4, MemoryBytes: 16 << 30}
	pods := []model.PodMetrics{
		{Namespace: "a", Name: "leak", CPUCores: f(0.1), MemoryBytes: f(950 << 20),
			Containers: []model.ContainerMetrics{{Name: "c", MemoryBytes: f(950 << 20), Limits: model.Resources{MemoryBytes: 1 << 30}}}},
		{Namespace: "a", Name: "hog", CPUCores: f(3), MemoryBytes: f(9 << 30)},
		{Namespace: "a", Name: "quiet", CPUCores: f(0.1), MemoryBytes: f(100 << 20)},
	}
	for name, tc := range map[string]struct {
		node             *model.NodeMetrics
		hogMem, hogCPU   Mark
		leakMem, quietMe Mark
	}{
		"node fine":       {nil, MarkWarn, MarkWarn, MarkBad, MarkNone},
		"node short":      {&model.NodeMetrics{MemoryUsedPercent: f(95), CPUPercent: f(97)}, MarkBad, MarkBad, MarkBad, MarkNone},
		"node short, mem": {&model.NodeMetrics{MemoryUsedPercent: f(95), CPUPercent: f(20)}, MarkBad, MarkWarn, MarkBad, MarkNone},
	} {
		t.Run(name, func(t *testing.T) {
			fig := NewFigures("n", model.NodePods{Capacity: capacity, Report: model.PodMetricsReport{Pods: pods},
				Pressures: model.PodPressures(capacity, tc.node, pods)}, nil)
			assert.Equal(t, tc.hogMem, fig.MemoryMark("a", "hog"))
			assert.Equal(t, tc.hogCPU, fig.CPUMark("a", "hog"))
			assert.Equal(t, tc.leakMem, fig.MemoryMark("a", "leak"))
			assert.Equal(t, MarkNone, fig.CPUMark("a", "leak"))
			assert.Equal(t, tc.quietMe, fig.MemoryMark("a", "quiet"))
		})
	}
}

func TestFiguresSayWhyAPodHasNone(t *testing.T) {
	var unread *Figures
	assert.Nil(t, unread.Pod("a", "b"))
	assert.Equal(t, "reading…", unread.Why())
	assert.Equal(t, "cannot read them: nodes/proxy is forbidden",
		NewFigures("n", model.NodePods{}, errors.New("nodes/proxy is forbidden")).Why())
	nodeDown := NewFigures("n", model.NodePods{Report: model.PodMetricsReport{Errors: []model.NodeError{{Node: "n", Error: "timeout"}}}}, nil)
	assert.True(t, nodeDown.Failed())
	assert.Equal(t, "the node's figures cannot be read: timeout", nodeDown.Why())
	read := NewFigures("n", model.NodePods{Report: model.PodMetricsReport{Pods: []model.PodMetrics{{Namespace: "a", Name: "b", Node: "n"},
		{Namespace: "a", Name: "other-node", Node: "m"}}}}, nil)
	assert.NotNil(t, read.Pod("a", "b"))
	assert.Nil(t, read.Pod("a", "other-node"), "a read keeps its node's pods only")
	assert.False(t, read.Failed())
}

// TestScales: CPU up to the limit or the node's cores; memory from its lowest point up to the limit or
// the node's memory; neither known leaves the values' own scale.
func TestScales(t *testing.T) {
	fig := NewFigures("n", model.NodePods{Capacity: model.NodeCapacity{CPUCores: 4, MemoryBytes: 16 << 30}}, nil)
	assert.Equal(t, 1.0, fig.CPUScale(1))
	assert.Equal(t, 4.0, fig.CPUScale(0))
	lo, hi := fig.MemoryRange([]float64{900, 880, 950}, 1024)
	assert.Equal(t, []float64{880, 1024}, []float64{lo, hi})
	lo, hi = fig.MemoryRange([]float64{900}, 0)
	assert.Equal(t, []float64{900, 16 << 30}, []float64{lo, hi})
	var unread *Figures
	lo, hi = unread.MemoryRange([]float64{900}, 0)
	assert.Equal(t, []float64{0, 0}, []float64{lo, hi})
}

func TestQuantities(t *testing.T) {
	assert.Equal(t, "250m", CPUText(f(0.25), "—"))
	assert.Equal(t, "3100m", CPUText(f(3.1), "—"))
	assert.Equal(t, "—", CPUText(nil, "—"))
	assert.Equal(t, "380Mi", MemoryText(f(380<<20+5000), "—"))
	assert.Equal(t, "2", CPUQuantity(2))
	assert.Equal(t, "1050m", CPUQuantity(1.05))
	assert.Equal(t, "1Gi", MemoryQuantity(1<<30))
	assert.Equal(t, "4160Mi", MemoryQuantity(4160<<20))
	assert.Equal(t, "100m/—", RequestLimitText(0.1, 0, CPUQuantity, "—"))
	assert.Equal(t, "—/1Gi", RequestLimitText(0, 1<<30, MemoryQuantity, "—"))
}
