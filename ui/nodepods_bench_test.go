package ui

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/model"
)

// benchPods are 30 running pods of one node with an hour of history at the demo's 3 s (1,200 points per
// series), one container each, half of them limited.
func benchPods(node string) (model.NodeDetail, model.NodePods) {
	detail := model.NodeDetail{Node: node, Read: fixedNow}
	np := model.NodePods{Capacity: model.NodeCapacity{CPUCores: 4, MemoryBytes: 16 << 30},
		Report: model.PodMetricsReport{Source: "bench"}}
	for i := range 30 {
		name := fmt.Sprintf("app-%02d-7d9f8b-2xq4z", i)
		detail.Pods = append(detail.Pods, model.PodInfo{Namespace: "windows-apps", Name: name, Phase: "Running", Ready: 1, Total: 1,
			Owner: "ReplicaSet", Created: ago(3 * day)})
		cpu, mem := ramp(0.1, 0.3, 1200), ramp(200*mi, 400*mi, 1200)
		var lim model.Resources
		if i%2 == 0 {
			lim = model.Resources{CPUCores: 1, MemoryBytes: 1 << 30}
		}
		req := model.Resources{CPUCores: 0.1, MemoryBytes: 256 * mi}
		np.Report.Pods = append(np.Report.Pods, model.PodMetrics{Namespace: "windows-apps", Name: name, Node: node,
			CPUCores: f(0.3), MemoryBytes: f(400 * mi), Requests: req, Limits: lim, CPUHistory: cpu, MemoryHistory: mem,
			HistoryStep: 3 * time.Second, Containers: []model.ContainerMetrics{{Name: "app", CPUCores: f(0.3),
				MemoryBytes: f(400 * mi), Requests: req, Limits: lim, CPUHistory: cpu, MemoryHistory: mem}}})
	}
	return detail, np
}

// BenchmarkRenderNodePods30 is one frame of the node details after a read of its 30 pods' figures: the
// page rebuilt with the pods list's CPU and memory columns and sparklines, then drawn at 160×45 (the frame
// budget is 16 ms).
func BenchmarkRenderNodePods30(b *testing.B) {
	detail, np := benchPods(nodeFull)
	opts := testOptions()
	opts.NodeDetail = func(context.Context, string) (model.NodeDetail, error) { return detail, nil }
	opts.PodMetrics = func(context.Context, string) (model.NodePods, error) { return np, nil }
	opts.PodMetricsInterval = time.Hour
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 160, Height: 45}, snapshotMsg{fixtureSnapshot()})
	m = update(m, press("j", "j", "enter")...)
	m = update(m, nodeDetailMsg{node: nodeFull, detail: detail})
	seq := m.podMetrics.nodes[nodeFull].seq
	m = update(m, podMetricsLoadedMsg{node: nodeFull, seq: seq, pods: np}, keyPress("p"))
	if !podFiguresShown(m) || topOf[*detailView](m).podCount() != 30 {
		b.Fatal("the pods' figures did not reach the details: the benchmark measures the wrong thing")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.podMetrics.nodes[nodeFull] = podNodeState{seq: seq} // the answer is taken again each time
		next, _ := m.Update(podMetricsLoadedMsg{node: nodeFull, seq: seq, pods: np})
		_ = next.(Model).View()
	}
}
