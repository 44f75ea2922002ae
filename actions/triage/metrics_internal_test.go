package triage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/model"
)

func f64(v float64) *float64 { return &v }

func metricsInput(t *testing.T, read TriageMetrics) triageInput {
	t.Helper()
	deps := TriageDeps{Metrics: read}
	deps.applyDefaults()
	return triageInput{node: model.NodeInfo{Name: "win-1"}, metrics: readMetricsFacts(context.Background(), deps, "win-1")}
}

func byID(cs []diagnosis.Check) map[string]diagnosis.Check {
	out := map[string]diagnosis.Check{}
	for _, c := range cs {
		out[c.ID] = c
	}
	return out
}

// No source, a source that fails, and a node the source has no figures for are unknown, never failures.
func TestMetricsChecksUnknownWithoutFigures(t *testing.T) {
	for name, read := range map[string]TriageMetrics{
		"no source": nil,
		"source fails": func(context.Context, string) (model.MetricsReport, error) {
			return model.MetricsReport{}, errors.New("the node proxy is forbidden")
		},
		"node not read": func(context.Context, string) (model.MetricsReport, error) {
			return model.MetricsReport{Source: "windows_exporter via x", Errors: []model.NodeError{{Node: "win-1", Error: "connection refused"}}}, nil
		},
	} {
		cs := byID(metricsInput(t, read).metricsChecks())
		require.Len(t, cs, 3, name)
		for id, c := range cs {
			assert.Equal(t, diagnosis.CheckUnknown, c.Status, "%s: %s", name, id)
			assert.NotEmpty(t, c.Fix, "%s: %s", name, id)
		}
		if name == "node not read" {
			assert.Equal(t, "unknown: no metrics could be read (connection refused)", cs["disk-free"].Detail)
			assert.Equal(t, []string{"source: windows_exporter via x"}, cs["disk-free"].Evidence)
		}
	}
}

func TestMetricsChecksThresholds(t *testing.T) {
	busy := func(points int) []float64 {
		h := []float64{40, 50}
		for range points {
			h = append(h, 95)
		}
		return h
	}
	figures := model.NodeMetrics{Node: "win-1", CPUPercent: f64(96), CPUHistory: busy(11), HistoryStep: 30 * time.Second,
		MemoryUsedPercent: f64(93), MemoryTotalBytes: f64(16 << 30), Volume: "C:", VolumeFreePercent: f64(3), VolumeFreeBytes: f64(3.84 * (1 << 30))}
	read := func(m model.NodeMetrics) TriageMetrics {
		return func(context.Context, string) (model.MetricsReport, error) {
			return model.MetricsReport{Source: "Prometheus at http://p", Why: "--prometheus was given", Nodes: []model.NodeMetrics{m}}, nil
		}
	}
	cs := byID(metricsInput(t, read(figures)).metricsChecks())
	assert.Equal(t, diagnosis.CheckFail, cs["cpu-busy"].Status)
	assert.Equal(t, "CPU 96 %, above 90 % for 5m: the kubelet and containerd are starved (late heartbeats, slow pod starts)", cs["cpu-busy"].Detail)
	assert.Contains(t, cs["cpu-busy"].Evidence, "history: 13 points 30s apart, CPU 40–95 %")
	assert.Equal(t, "source: Prometheus at http://p (--prometheus was given)", cs["cpu-busy"].Evidence[0])
	assert.Equal(t, diagnosis.CheckFail, cs["memory-full"].Status)
	assert.Contains(t, cs["memory-full"].Detail, "memory 93 % used of 16.0 GiB (above 90 %)")
	assert.Equal(t, diagnosis.CheckFail, cs["disk-free"].Status)
	assert.Contains(t, cs["disk-free"].Detail, "C: has 3 % free: the kubelet's image garbage collection will fail")
	assert.Contains(t, cs["disk-free"].Evidence, "C: has 3 % free (3.8 GiB), the fullest volume with a drive letter")

	short := figures
	short.CPUHistory = busy(4) // 1m30s above 90 %
	cpu := byID(metricsInput(t, read(short)).metricsChecks())["cpu-busy"]
	assert.Equal(t, diagnosis.CheckWarn, cpu.Status)
	assert.Equal(t, "CPU 96 % now, above 90 % for 1m so far (a problem once it lasts 5m)", cpu.Detail)

	calm := figures
	calm.CPUPercent, calm.MemoryUsedPercent, calm.VolumeFreePercent = f64(20), f64(50), f64(40)
	for id, c := range byID(metricsInput(t, read(calm)).metricsChecks()) {
		assert.Equal(t, diagnosis.CheckOK, c.Status, id)
	}
}
