package metrics_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/remote/winsim"
)

// TestSimulatedExporter reads the simulated windows_exporter over HTTP: the names and labels wmcon
// parses are the ones the simulator serves, and the figures follow the load the test sets.
func TestSimulatedExporter(t *testing.T) {
	h, err := winsim.Start(winsim.Options{Addr: "127.0.0.1:0", Configured: true, ServicePending: 10 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	require.Eventually(t, func() bool { return h.ServiceRunning("windows_exporter") && h.ExporterAddr() != "" }, 10*time.Second, 10*time.Millisecond)
	h.SetLoad(winsim.Load{CPUBusy: 0.95, MemoryUsed: 0.5, RxBytesPS: 2e6, TxBytesPS: 1e6})
	require.NoError(t, h.SetVolumeFree("C:", 4<<30))

	tr := metrics.NewTracker(30)
	get := func() metrics.Sample {
		taken := time.Now() // as Prometheus does: the scrape's start
		resp, err := http.Get("http://" + h.ExporterAddr() + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		s, err := metrics.ParseExporter(resp.Body, taken)
		require.NoError(t, err)
		return s
	}
	tr.Observe("n1", get())
	time.Sleep(time.Second)
	m := tr.Observe("n1", get())
	require.NotNil(t, m.CPUPercent)
	assert.InDelta(t, 95, *m.CPUPercent, 0.5)
	assert.InDelta(t, 50, *m.MemoryUsedPercent, 0.01)
	assert.Equal(t, "C:", m.Volume, "the recovery partition is fuller but has no letter")
	assert.InDelta(t, 3.125, *m.VolumeFreePercent, 0.001)
	assert.InEpsilon(t, 2e6, *m.NetRxBytesPerSec, 0.15, "wall-clock sample times against the host's clock")
	assert.Len(t, m.CPUHistory, 1)
}
