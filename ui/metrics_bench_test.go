package ui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/model"
)

// bigMetrics is a read of every Windows node of snap with 30 points of history each (15 minutes at 30 s).
func bigMetrics(snap *model.Snapshot) model.MetricsReport {
	r := model.MetricsReport{Source: "bench"}
	hist := make([]float64, 30)
	for i := range hist {
		hist[i] = float64(i * 3)
	}
	for _, n := range snap.Nodes {
		if !n.Windows {
			r.Errors = append(r.Errors, model.NodeError{Node: n.Name, Error: "a Linux node"})
			continue
		}
		r.Nodes = append(r.Nodes, model.NodeMetrics{Node: n.Name, CPUPercent: f(55), MemoryUsedPercent: f(93),
			Volume: "C:", VolumeFreePercent: f(8), NetRxBytesPerSec: f(4.2e6), NetTxBytesPerSec: f(1.1e6),
			CPUHistory: hist, HistoryStep: 30 * time.Second})
	}
	return r
}

func bigMetricsModel(b *testing.B, n int) (Model, model.MetricsReport) {
	b.Helper()
	snap := bigSnapshot(n)
	m := New(NewProgramContext(metricsOptions()), nil)
	m = update(m, tea.WindowSizeMsg{Width: 200, Height: 50}, snapshotMsg{snap})
	rep := bigMetrics(snap)
	m = update(m, metricsLoadedMsg{seq: m.metrics.seq, rep: rep})
	if m.metrics.view == nil || len(m.metrics.view.nodes) != n/2 {
		b.Fatal("the metrics did not reach the model: the benchmark measures the wrong thing")
	}
	return m, rep
}

// BenchmarkRenderNodesWithMetrics5000 draws the Nodes pane of 5,000 nodes with the metric columns and
// sparklines (the frame budget is 16 ms).
func BenchmarkRenderNodesWithMetrics5000(b *testing.B) {
	m, _ := bigMetricsModel(b, 5000)
	m = update(m, press("pgdown", "pgdown")...)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkApplyMetrics5000 takes in one metrics read of 5,000 nodes: the Nodes pane's rows rebuilt with
// their cells and sparklines.
func BenchmarkApplyMetrics5000(b *testing.B) {
	m, rep := bigMetricsModel(b, 5000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.metrics.busy = true
		next, _ := m.Update(metricsLoadedMsg{seq: m.metrics.seq, rep: rep})
		m = next.(Model)
	}
}

// BenchmarkApplyMetricsOnScreen10000 takes in one metrics read at 10,000 nodes as the console at rest gets
// it from the exporters: figures for the rows on screen only, which change every read (two reads
// alternate). This is the console's idle work after a large list is in, once per metrics interval.
func BenchmarkApplyMetricsOnScreen10000(b *testing.B) {
	m, _ := bigMetricsModel(b, 10000)
	var reps [2]model.MetricsReport
	for i := range reps {
		for name := range m.nodesOnScreen() {
			reps[i].Nodes = append(reps[i].Nodes, model.NodeMetrics{Node: name, CPUPercent: f(float64(10 + i)),
				MemoryUsedPercent: f(40), Volume: "C:", VolumeFreePercent: f(50)})
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.metrics.busy = true
		next, _ := m.Update(metricsLoadedMsg{seq: m.metrics.seq, rep: reps[i%2]})
		m = next.(Model)
	}
}
