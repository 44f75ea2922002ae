package metrics_test

import (
	"context"
	"testing"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/prometheus"
)

func startExporterHost(t *testing.T, addr string) *windows.Host {
	t.Helper()
	h, err := windows.Start(windows.Options{Addr: addr, Configured: true, ServicePending: 10 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	require.Eventually(t, func() bool { return h.ServiceRunning("windows_exporter") && h.ExporterAddr() != "" }, 10*time.Second, 10*time.Millisecond)
	return h
}

// TestPrometheusSource runs a real Prometheus scraping two simulated exporters and reads the figures
// back with PromQL.
func TestPrometheusSource(t *testing.T) {
	busy := startExporterHost(t, "127.0.0.5:0")
	full := startExporterHost(t, "127.0.0.6:0")
	busy.SetLoad(windows.Load{CPUBusy: 0.97, MemoryUsed: 0.93, RxBytesPS: 1e6, TxBytesPS: 5e5})
	full.SetLoad(windows.Load{CPUBusy: 0.10, MemoryUsed: 0.40, RxBytesPS: 1e3, TxBytesPS: 1e3})
	require.NoError(t, full.SetVolumeFree("C:", 0.03*(128<<30)))
	url := prometheus.Start(t, map[string]string{"win-busy": "https://" + busy.ExporterAddr(), "win-full": "https://" + full.ExporterAddr()})

	src, err := metrics.NewPrometheusSource(url)
	require.NoError(t, err)
	// rate() divides by its whole window, so it reads right once the series span it; OpenShift's series
	// are long-lived, a test's are seconds old: a short window, and wait until it is full.
	src.Window = 4 * time.Second
	src.Step = 2 * time.Second
	nodes := []metrics.Node{{Name: "win-busy", IP: "127.0.0.5"}, {Name: "win-full", IP: "127.0.0.6"}, {Name: "linux-1", IP: "127.0.0.9"}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.Eventually(t, func() bool {
		v, _, err := src.API.Query(ctx, `min(count_over_time(windows_cs_logical_processors[6s]))`, time.Now())
		vec, ok := v.(prommodel.Vector)
		return err == nil && ok && len(vec) == 1 && vec[0].Value >= 6
	}, 45*time.Second, 250*time.Millisecond, "Prometheus has scraped both exporters for 6 s")
	r := src.Refresh(ctx, nodes)
	require.Len(t, r.Nodes, 2, "%+v", r)
	require.NotNil(t, r.Nodes[0].CPUPercent)
	require.NotNil(t, r.Nodes[1].CPUPercent)
	require.NotNil(t, r.Nodes[0].NetRxBytesPerSec)

	assert.Contains(t, r.Source, "Prometheus at "+url)
	b, f := r.Nodes[0], r.Nodes[1]
	assert.Equal(t, "win-busy", b.Node)
	assert.InDelta(t, 97, *b.CPUPercent, 1)
	assert.InDelta(t, 93, *b.MemoryUsedPercent, 0.1)
	assert.InEpsilon(t, 1e6, *b.NetRxBytesPerSec, 0.1)
	assert.InDelta(t, 10, *f.CPUPercent, 1)
	assert.Equal(t, "C:", f.Volume)
	assert.InDelta(t, 3, *f.VolumeFreePercent, 0.01)
	assert.NotEmpty(t, b.CPUHistory, "a range query fills the sparkline")
	require.NotEmpty(t, b.MemoryHistory, "and the memory one")
	assert.InDelta(t, 93, b.MemoryHistory[len(b.MemoryHistory)-1], 0.1)
	require.NotEmpty(t, f.VolumeFreeHistory, "the fullest volume's free share over time")
	assert.InDelta(t, 3, f.VolumeFreeHistory[len(f.VolumeFreeHistory)-1], 0.01)
	require.NotEmpty(t, b.NetRxHistory)
	assert.NotEmpty(t, b.NetTxHistory)
	assert.Equal(t, src.Step, b.HistoryStep)
	require.Len(t, r.Errors, 1)
	assert.Equal(t, "linux-1", r.Errors[0].Node)
	assert.Contains(t, r.Errors[0].Error, "no windows_exporter or node_exporter series")

	full.StopService("windows_exporter")
	// Prometheus keeps the last value for its staleness window; the source still answers, from history.
	assert.Len(t, src.Refresh(ctx, nodes[:1]).Nodes, 1)
}

func TestPrometheusUnreachable(t *testing.T) {
	src, err := metrics.NewPrometheusSource("http://127.0.0.1:1")
	require.NoError(t, err)
	r := src.Refresh(context.Background(), []metrics.Node{{Name: "n1"}})
	assert.Empty(t, r.Nodes)
	require.Len(t, r.Errors, 1)
	assert.Contains(t, r.Errors[0].Error, "query Prometheus at http://127.0.0.1:1")
}
