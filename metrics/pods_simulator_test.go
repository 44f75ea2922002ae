package metrics_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/prometheus"
)

// runPod starts a pod's containers on a simulated host, as its kubelet would, and returns the pod as
// the cluster would list it (container IDs from its status, resources from its spec).
func runPod(h *windows.Host, node, ns, name string, containers map[string]windows.ContainerLoad, limits model.Resources) model.WorkloadPod {
	p := model.WorkloadPod{Namespace: ns, Name: name, UID: "uid-" + name, Node: node}
	for c, l := range containers {
		id := name + "-" + c + "-0123456789abcdef"
		h.StartContainer(windows.Container{ID: id, Namespace: ns, Pod: name, PodUID: p.UID, Name: c}, l)
		p.Containers = append(p.Containers, model.WorkloadContainer{Name: c, ID: "containerd://" + id, Limits: limits})
	}
	return p
}

func httpScrape(hosts map[string]*windows.Host) metrics.Scrape {
	return func(ctx context.Context, n metrics.Node) ([]byte, error) {
		h := hosts[n.Name]
		url, err := h.ExporterURL() // https: a configured host's exporter serves WMCO's TLS
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := h.ExporterClient().Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
}

// TestExporterPodSourceJoinsContainers reads a simulated host's windows_exporter over HTTP: its container
// collector's series, joined to the pods through their container IDs, give each pod's CPU (a rate of two
// reads), memory and network; the containers' work shows in the node's figures too; a stopped pod's
// numbers disappear.
func TestExporterPodSourceJoinsContainers(t *testing.T) {
	h := startExporterHost(t, "127.0.0.71:0")
	h.SetLoad(windows.Load{CPUBusy: 0.1, MemoryUsed: 0.2})
	web := runPod(h, "win-1", "shop", "web-1", map[string]windows.ContainerLoad{
		"iis": {CPUCores: 1.5, MemoryBytes: 950 << 20, RxBytesPS: 2e5, TxBytesPS: 1e5},
	}, model.Resources{MemoryBytes: 1 << 30})
	db := runPod(h, "win-1", "shop", "db-0", map[string]windows.ContainerLoad{
		"sql": {CPUCores: 0.5, MemoryBytes: 2 << 30},
	}, model.Resources{})
	other := model.WorkloadPod{Namespace: "shop", Name: "pending", Node: "win-1", Containers: []model.WorkloadContainer{{Name: "x"}}}

	src := &metrics.ExporterPodSource{Via: "test HTTP", Tracker: metrics.NewPodTracker(10), Scrape: httpScrape(map[string]*windows.Host{"win-1": h})}
	pods := []model.WorkloadPod{web, db, other}
	r, err := metrics.CurrentPods(context.Background(), src, pods, time.Second)
	require.NoError(t, err)
	assert.Equal(t, "windows_exporter's container collector via test HTTP", r.Source)
	require.Len(t, r.Pods, 2, "a pod without a started container has no figures: %+v", r)
	d, w := r.Pods[0], r.Pods[1]
	assert.Equal(t, "db-0", d.Name)
	require.NotNil(t, w.CPUCores, "the second read gives the rate")
	assert.InDelta(t, 1.5, *w.CPUCores, 0.05)
	assert.InDelta(t, 0.5, *d.CPUCores, 0.05)
	assert.Equal(t, float64(950<<20), *w.MemoryBytes)
	require.NotNil(t, w.NetRxBytesPerSec)
	assert.InEpsilon(t, 2e5, *w.NetRxBytesPerSec, 0.1)
	c, pct, near := w.NearMemoryLimit()
	assert.True(t, near)
	assert.Equal(t, "iis", c.Name)
	assert.InDelta(t, 92.8, pct, 0.1, "950 MiB of 1 GiB")

	// The node's own figures count its containers: 10 % of 4 cores plus 2 cores busy, 20 % of 16 GiB
	// plus 2.93 GiB.
	body, err := h.ScrapeExporter()
	require.NoError(t, err)
	figs, err := metrics.ParseContainers(bytesReader(body))
	require.NoError(t, err)
	assert.Len(t, figs, 2)
	node := metrics.NewTracker(5)
	node.Observe("win-1", sampleOf(t, h))
	time.Sleep(500 * time.Millisecond)
	nm := node.Observe("win-1", sampleOf(t, h))
	assert.InDelta(t, 60, *nm.CPUPercent, 2)
	assert.InDelta(t, 20+100*(2+950.0/1024)/16, *nm.MemoryUsedPercent, 0.2)

	h.StopContainer(db.Containers[0].ID[len("containerd://"):])
	r = src.Refresh(context.Background(), pods)
	require.Len(t, r.Pods, 1, "the stopped pod's numbers are gone")
	assert.Equal(t, "web-1", r.Pods[0].Name)
}

func sampleOf(t *testing.T, h *windows.Host) metrics.Sample {
	t.Helper()
	taken := time.Now()
	body, err := h.ScrapeExporter()
	require.NoError(t, err)
	s, err := metrics.ParseExporter(bytesReader(body), taken)
	require.NoError(t, err)
	return s
}

// TestPrometheusPodSource runs a real Prometheus scraping two simulated exporters whose hosts run pods,
// and reads the pods' figures and their history back with PromQL, joined through the container IDs.
func TestPrometheusPodSource(t *testing.T) {
	a := startExporterHost(t, "127.0.0.72:0")
	b := startExporterHost(t, "127.0.0.73:0")
	web := runPod(a, "win-a", "shop", "web-1", map[string]windows.ContainerLoad{
		"iis": {CPUCores: 1.2, MemoryBytes: 700 << 20, RxBytesPS: 3e5, TxBytesPS: 1e5},
		"log": {CPUCores: 0.2, MemoryBytes: 50 << 20},
	}, model.Resources{})
	leak := runPod(b, "win-b", "shop", "leaky-0", map[string]windows.ContainerLoad{
		"app": {CPUCores: 0.3, MemoryBytes: 100 << 20, MemoryGrowthBytesPS: 10 << 20},
	}, model.Resources{MemoryBytes: 1 << 30})
	gone := model.WorkloadPod{Namespace: "shop", Name: "gone", Node: "win-b", Containers: []model.WorkloadContainer{{Name: "x", ID: "containerd://feed"}}}
	url := prometheus.Start(t, map[string]string{"win-a": "https://" + a.ExporterAddr(), "win-b": "https://" + b.ExporterAddr()}) // WMCO's TLS

	prom, err := metrics.NewPrometheusSource(url)
	require.NoError(t, err)
	prom.Window, prom.Step = 4*time.Second, time.Second
	src := &metrics.PrometheusPodSource{Prom: prom, History: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.Eventually(t, func() bool {
		v, _, err := prom.API.Query(ctx, `min(count_over_time(windows_container_count[6s]))`, time.Now())
		vec, ok := v.(prommodel.Vector)
		return err == nil && ok && len(vec) == 1 && vec[0].Value >= 6
	}, 45*time.Second, 250*time.Millisecond, "Prometheus has scraped both exporters for 6 s")
	r := src.Refresh(ctx, []model.WorkloadPod{web, leak, gone})
	require.Len(t, r.Pods, 2, "%+v", r)
	assert.Contains(t, r.Source, "Prometheus at "+url)
	assert.Contains(t, r.Source, "windows_container_*")
	l, w := r.Pods[0], r.Pods[1]
	assert.Equal(t, "leaky-0", l.Name)
	require.NotNil(t, w.CPUCores)
	assert.InDelta(t, 1.4, *w.CPUCores, 0.1, "the two containers' rates")
	assert.Equal(t, float64(750<<20), *w.MemoryBytes)
	require.Len(t, w.Containers, 2)
	require.NotNil(t, w.NetRxBytesPerSec)
	assert.InEpsilon(t, 3e5, *w.NetRxBytesPerSec, 0.15, "the pod's endpoint, counted once for its two containers")
	require.NotEmpty(t, l.MemoryHistory, "a range query fills the sparkline")
	assert.Greater(t, l.MemoryHistory[len(l.MemoryHistory)-1], l.MemoryHistory[0], "the leak climbs")
	assert.NotEmpty(t, w.CPUHistory)
	assert.Equal(t, time.Second, w.HistoryStep)
	assert.Equal(t, float64(1<<30), l.Limits.MemoryBytes)
}

func TestPrometheusPodSourceUnreachable(t *testing.T) {
	prom, err := metrics.NewPrometheusSource("http://127.0.0.1:1")
	require.NoError(t, err)
	r := (&metrics.PrometheusPodSource{Prom: prom}).Refresh(context.Background(), []model.WorkloadPod{{Name: "p", Node: "n1"}})
	assert.Empty(t, r.Pods)
	require.Len(t, r.Errors, 1)
	assert.Equal(t, "n1", r.Errors[0].Node)
	assert.Contains(t, r.Errors[0].Error, "query Prometheus at http://127.0.0.1:1")
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
