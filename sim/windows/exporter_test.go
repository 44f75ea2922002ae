package windows

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manualClock is a clock a test moves by hand, so counter growth is exact.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// exporterGet is GET /metrics at addr as Prometheus scrapes a WMCO node's exporter: over TLS, trusting the
// certificate the host's web configuration names.
func exporterGet(t *testing.T, th *testHost, addr string) (*http.Response, error) {
	t.Helper()
	cert, err := th.ReadFile(exporterCertPath)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(cert))
	c := &http.Client{Timeout: testTimeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return c.Get("https://" + addr + "/metrics")
}

// scrape fetches and parses the host's /metrics as Prometheus would.
func scrape(t *testing.T, th *testHost, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := exporterGet(t, th, addr)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// sample is the value of the series of family name whose labels include all of want.
func sample(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	require.True(t, ok, "no family %s", name)
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		if m.GetCounter() != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("no series %s%v", name, want)
	return 0
}

func waitExporter(t *testing.T, th *testHost) string {
	t.Helper()
	require.Eventually(t, func() bool { return th.ServiceRunning("windows_exporter") && th.ExporterAddr() != "" },
		testTimeout, 10*time.Millisecond)
	return th.ExporterAddr()
}

func TestExporterSeriesFollowTheLoad(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	th := startHost(t, Options{Configured: true, Clock: clock.now})
	addr := waitExporter(t, th)
	assert.Contains(t, addr, "127.0.0.1:", "the exporter listens on the host's own loopback address")

	th.SetLoad(Load{CPUBusy: 0.9, MemoryUsed: 0.75, RxBytesPS: 1000, TxBytesPS: 500})
	before := scrape(t, th, addr)
	clock.add(10 * time.Second)
	after := scrape(t, th, addr)

	core := map[string]string{"core": "0,0", "mode": "idle"}
	idle := sample(t, after, "windows_cpu_time_total", core) - sample(t, before, "windows_cpu_time_total", core)
	assert.InDelta(t, 1.0, idle, 1e-6, "10 s at 90%% busy leaves 1 s idle per core")
	core["mode"] = "user"
	user := sample(t, after, "windows_cpu_time_total", core) - sample(t, before, "windows_cpu_time_total", core)
	assert.Greater(t, user, 5.0)
	assert.Len(t, after["windows_cpu_time_total"].GetMetric(), 4*5, "four cores, five modes")

	total := sample(t, after, "windows_memory_physical_total_bytes", nil)
	assert.Equal(t, total, sample(t, after, "windows_cs_physical_memory_bytes", nil), "cs and memory collectors agree")
	assert.InDelta(t, 0.25*total, sample(t, after, "windows_memory_available_bytes", nil), 1)

	nic := map[string]string{"nic": simNIC}
	assert.InDelta(t, 10000, sample(t, after, "windows_net_bytes_received_total", nic)-sample(t, before, "windows_net_bytes_received_total", nic), 1e-6)
	assert.InDelta(t, 5000, sample(t, after, "windows_net_bytes_sent_total", nic)-sample(t, before, "windows_net_bytes_sent_total", nic), 1e-6)

	vol := map[string]string{"volume": "C:"}
	require.NoError(t, th.SetVolumeFree("c:", 1<<30))
	filled := scrape(t, th, addr)
	assert.Equal(t, float64(1<<30), sample(t, filled, "windows_logical_disk_free_bytes", vol))
	assert.Equal(t, float64(simCDriveBytes), sample(t, filled, "windows_logical_disk_size_bytes", vol))
	assert.Less(t, sample(t, filled, "windows_logical_disk_size_bytes", map[string]string{"volume": "HarddiskVolume1"}), float64(1<<30))
	assert.ErrorContains(t, th.SetVolumeFree("D:", 0), `no volume "D:"`)
}

func TestExporterServesOnlyWhileItsServiceRuns(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	addr := waitExporter(t, th)
	scrape(t, th, addr)

	th.StopService("windows_exporter")
	require.Eventually(t, func() bool {
		_, err := exporterGet(t, th, addr)
		return err != nil
	}, testTimeout, 10*time.Millisecond, "a stopped exporter refuses connections")

	c := th.dial(t)
	r := run(t, c, `sc.exe start windows_exporter`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, addr, waitExporter(t, th), "the same port after a restart")
	require.Eventually(t, func() bool {
		resp, err := exporterGet(t, th, addr)
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, testTimeout, 10*time.Millisecond)
}

func TestExporterNeedsItsBinary(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	addr := waitExporter(t, th)
	th.StopService("windows_exporter")
	require.NoError(t, th.RemoveFile(`C:\k\windows_exporter.exe`))
	c := th.dial(t)
	r := run(t, c, `sc.exe start windows_exporter`)
	assert.NotEqual(t, 0, r.code, "sc.exe cannot start a service whose binary is gone")
	_, err := exporterGet(t, th, addr)
	assert.Error(t, err)
}

func TestFreshHostHasNoExporter(t *testing.T) {
	th := startHost(t, Options{})
	assert.Empty(t, th.ExporterAddr())
	_, err := th.ExporterURL()
	assert.ErrorIs(t, err, errNoExporter)
}

func TestScrapeExporterInProcess(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	addr := waitExporter(t, th)
	require.NoError(t, th.SetVolumeFree("C:", 123))
	text, err := th.ScrapeExporter()
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	require.NoError(t, err)
	assert.Equal(t, 123.0, sample(t, fams, "windows_logical_disk_free_bytes", map[string]string{"volume": "C:"}))
	overHTTP := scrape(t, th, addr)
	assert.Len(t, fams, len(overHTTP), "the same families as over HTTP")
	for name := range overHTTP {
		assert.Contains(t, fams, name)
	}
	assert.Contains(t, fams, "windows_container_count", "the container collector's, with no container running")

	th.StopService("windows_exporter")
	_, err = th.ScrapeExporter()
	assert.ErrorContains(t, err, "windows_exporter is not running")
}

// A configured node's windows_exporter serves TLS with the certificate its web configuration names (WMCO's,
// from its secret); a plain HTTP request gets the TLS server's refusal. Without --web.config.file it serves
// plain HTTP; with one whose certificate is missing it refuses to start, as the real exporter does.
func TestExporterServesTLSWhenConfiguredTo(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	addr := waitExporter(t, th)
	assert.True(t, th.ExporterTLS())
	url, err := th.ExporterURL()
	require.NoError(t, err)
	assert.Equal(t, "https://"+addr+"/metrics", url)
	scrape(t, th, addr)
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "an HTTPS server answering plain HTTP")

	c := th.dial(t)
	info, _ := th.Service("windows_exporter")
	stopAndWait(t, th, c, "windows_exporter")
	require.Contains(t, run(t, c, `sc.exe delete windows_exporter`).stdout, "SUCCESS")
	plain := strings.Replace(info.BinaryPath, " --web.config.file C:\\k\\tls\\windows-exporter-webconfig.yaml", "", 1)
	require.NotEqual(t, info.BinaryPath, plain)
	require.Contains(t, run(t, c, `sc.exe create windows_exporter binPath='`+plain+`' start=auto`).stdout, "SUCCESS")
	run(t, c, `sc.exe start windows_exporter`)
	eventually(t, "serving plain HTTP", func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	assert.False(t, th.ExporterTLS())

	stopAndWait(t, th, c, "windows_exporter")
	run(t, c, `sc.exe delete windows_exporter`)
	run(t, c, `sc.exe create windows_exporter binPath='`+info.BinaryPath+`' start=auto`)
	require.NoError(t, th.RemoveFile(exporterKeyPath))
	run(t, c, `sc.exe start windows_exporter`)
	eventually(t, "it exited", func() bool { info, _ := th.Service("windows_exporter"); return info.Crashes > 0 })
	logData, err := th.ReadFile(`C:\var\log\windows_exporter\windows_exporter.log`)
	require.NoError(t, err)
	assert.Contains(t, string(logData), `failed to load X509KeyPair: open C:\\k\\tls\\certs\\tls.key: The system cannot find the file specified.`)
}
