package metrics_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/sim/windows"
)

// exporterGet reads a simulated configured node's exporter, which serves TLS as WMCO configures it (its
// certificate is the host's own, not checked here: these tests are about the figures).
func exporterGet(ctx context.Context, h *windows.Host) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+h.ExporterAddr()+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // test
	return (&http.Client{Transport: tr}).Do(req)
}

// TestSimulatedExporter reads the simulated windows_exporter over HTTP: the names and labels wmcon
// parses are the ones the simulator serves, and the figures follow the load the test sets.
func TestSimulatedExporter(t *testing.T) {
	h, err := windows.Start(windows.Options{Addr: "127.0.0.1:0", Configured: true, ServicePending: 10 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	require.Eventually(t, func() bool { return h.ServiceRunning("windows_exporter") && h.ExporterAddr() != "" }, 10*time.Second, 10*time.Millisecond)
	h.SetLoad(windows.Load{CPUBusy: 0.95, MemoryUsed: 0.5, RxBytesPS: 2e6, TxBytesPS: 1e6})
	require.NoError(t, h.SetVolumeFree("C:", 4<<30))

	tr := metrics.NewTracker(30)
	get := func() metrics.Sample {
		taken := time.Now() // as Prometheus does: the scrape's start
		resp, err := exporterGet(context.Background(), h)
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

// TestExporterSourceCurrent reads two hosts' exporters twice, as `wmcon top` does; a host whose
// exporter is stopped is reported, not dropped silently.
func TestExporterSourceCurrent(t *testing.T) {
	up := startExporterHost(t, "127.0.0.7:0")
	down := startExporterHost(t, "127.0.0.8:0")
	up.SetLoad(windows.Load{CPUBusy: 0.5, MemoryUsed: 0.2})
	down.StopService("windows_exporter")
	hosts := map[string]*windows.Host{"win-up": up, "win-down": down}
	src := &metrics.ExporterSource{Via: "test HTTP", Tracker: metrics.NewTracker(10),
		Scrape: func(ctx context.Context, n metrics.Node) ([]byte, error) {
			resp, err := exporterGet(ctx, hosts[n.Name])
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			return io.ReadAll(resp.Body)
		}}
	r, err := metrics.Current(context.Background(), src, []metrics.Node{{Name: "win-up"}, {Name: "win-down"}}, 500*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, "windows_exporter via test HTTP", r.Source)
	require.Len(t, r.Nodes, 1)
	require.NotNil(t, r.Nodes[0].CPUPercent, "the second read gives the rate")
	assert.InDelta(t, 50, *r.Nodes[0].CPUPercent, 1)
	require.Len(t, r.Errors, 1)
	assert.Equal(t, "win-down", r.Errors[0].Node)
	assert.Contains(t, r.Errors[0].Error, "connection refused")
}
