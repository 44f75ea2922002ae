package remote

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/sim/windows"
)

// TestScrapeExporterOverSSH reads the host's windows_exporter at 127.0.0.1:9182 through the SSH
// connection (a direct-tcpip channel), as wmcon does when the node proxy is forbidden: the figures are
// the simulated host's; a stopped exporter, or another port, is a refused connection.
func TestScrapeExporterOverSSH(t *testing.T) {
	h, c := simClient(t, windows.Options{Addr: "127.0.0.1:0", Configured: true}, nil)
	ctx := testCtx(t)
	require.Eventually(t, func() bool { _, err := h.ExporterURL(); return err == nil }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, h.SetVolumeFree("C:", 5<<30))

	body, err := metrics.ScrapeOver(ctx, c.DialHost, windows.RealExporterPort)
	require.NoError(t, err)
	s, err := metrics.ParseExporter(bytes.NewReader(body), time.Now())
	require.NoError(t, err)
	v, ok := s.Fullest()
	require.True(t, ok)
	assert.Equal(t, "C:", v.Name)
	assert.Equal(t, float64(5<<30), v.FreeBytes)
	assert.Equal(t, int64(1), c.Stats().Dials, "over the connection the client already has")

	_, err = metrics.ScrapeOver(ctx, c.DialHost, 9183)
	assert.ErrorContains(t, err, "connection refused")
	h.StopService("windows_exporter")
	_, err = metrics.ScrapeOver(ctx, c.DialHost, windows.RealExporterPort)
	assert.ErrorContains(t, err, "open 127.0.0.1:9182 on the host through SSH")
}
