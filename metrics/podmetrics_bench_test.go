package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	prommodel "github.com/prometheus/common/model"

	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/prometheus"
)

// The fleet of the pod metrics benchmarks: 50 Windows nodes running 30 pods each.
const (
	benchNodes       = 50
	benchPodsPerNode = 30
)

func benchNode(i int) string { return fmt.Sprintf("win-%02d", i) }

func benchContainerID(node, pod int) string { return fmt.Sprintf("%032x%032x", node, pod) }

// benchPods are the fleet's pods as the cluster lists them.
func benchPods() []model.WorkloadPod {
	var out []model.WorkloadPod
	for n := range benchNodes {
		for p := range benchPodsPerNode {
			out = append(out, model.WorkloadPod{Namespace: "apps", Name: fmt.Sprintf("web-%02d-%02d", n, p), UID: fmt.Sprintf("u-%d-%d", n, p),
				Node: benchNode(n), Containers: []model.WorkloadContainer{{Name: "web", ID: "containerd://" + benchContainerID(n, p),
					Limits: model.Resources{MemoryBytes: 1 << 30}}}})
		}
	}
	return out
}

// fleetStats is one node's containers at elapsed seconds, as the runtime reports them.
type fleetStats struct {
	node    int
	elapsed float64
}

func (f fleetStats) ContainerStats() []windows.ContainerStat {
	out := make([]windows.ContainerStat, 0, benchPodsPerNode)
	at := time.Unix(1_800_000_000, 0).Add(time.Duration(f.elapsed * float64(time.Second)))
	for p := range benchPodsPerNode {
		cores := 0.05 + 0.01*float64(p)
		out = append(out, windows.ContainerStat{
			Container: windows.Container{ID: benchContainerID(f.node, p), Namespace: "apps", Pod: fmt.Sprintf("web-%02d-%02d", f.node, p),
				PodUID: fmt.Sprintf("u-%d-%d", f.node, p), Name: "web"},
			Load: windows.ContainerLoad{CPUCores: cores}, Started: time.Unix(1_700_000_000, 0), At: at,
			CPUSeconds: cores * f.elapsed, CPUCores: cores, MemoryBytes: float64(200<<20 + p<<20), RxBytes: 1e4 * f.elapsed, TxBytes: 5e3 * f.elapsed})
	}
	return out
}

// servedFleet serves, on loopback, each node's kubelet summary (/NODE/stats/summary) and exporter
// (/NODE/metrics) as they stand after 30 s more with each request to a node, counting the requests.
// The summaries are built before the clock starts (the benchmark times wmcon's side), a few refreshes'
// worth served in turn (the kubelet's CPU is a rate, so a counter going back does not matter); the
// exporters' text, whose counters must only grow, is written at each request.
type servedFleet struct {
	url      string
	requests atomic.Int64
}

func serveFleet(b *testing.B, refreshes int) *servedFleet {
	summaries := map[string][][]byte{}
	for n := range benchNodes {
		for r := range refreshes {
			st := fleetStats{node: n, elapsed: 30 * float64(r+1)}
			body, err := json.Marshal(kubelet.Summary(benchNode(n), st, time.Unix(1_700_000_000, 0)))
			if err != nil {
				b.Fatal(err)
			}
			summaries[benchNode(n)] = append(summaries[benchNode(n)], body)
		}
	}
	f := &servedFleet{}
	served := map[string]*atomic.Int64{}
	for n := range benchNodes {
		served[benchNode(n)] = &atomic.Int64{}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		node, what, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		bodies, count := summaries[node], served[node]
		if bodies == nil {
			http.NotFound(w, r)
			return
		}
		i := int(count.Add(1))
		if what == "metrics" {
			var n int
			_, _ = fmt.Sscanf(node, "win-%d", &n)
			_, _ = w.Write(exposition(fleetStats{node: n, elapsed: 30 * float64(i)}.ContainerStats()))
			return
		}
		_, _ = w.Write(bodies[(i-1)%len(bodies)])
	})}
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { _ = srv.Close() })
	f.url = "http://" + l.Addr().String()
	return f
}

// exposition is the container collector's series of a node's containers.
func exposition(stats []windows.ContainerStat) []byte {
	var s strings.Builder
	for _, c := range stats {
		l := fmt.Sprintf(`container_id="containerd://%s",namespace=%q,pod=%q,container=%q`, c.ID, c.Namespace, c.Pod, c.Name)
		fmt.Fprintf(&s, "windows_container_cpu_usage_seconds_total{%s} %g\n", l, c.CPUSeconds)
		fmt.Fprintf(&s, "windows_container_memory_usage_private_working_set_bytes{%s} %g\n", l, c.MemoryBytes)
		fmt.Fprintf(&s, "windows_container_network_receive_bytes_total{%s,interface=\"E\"} %g\n", l, c.RxBytes)
		fmt.Fprintf(&s, "windows_container_network_transmit_bytes_total{%s,interface=\"E\"} %g\n", l, c.TxBytes)
	}
	return []byte(s.String())
}

func (f *servedFleet) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// checkRefresh fails the benchmark when a refresh missed a pod's figures or cost more than one request
// per node, and reports the requests per node and refresh.
func checkRefresh(b *testing.B, r model.PodMetricsReport, requests int64, refreshes int) {
	b.Helper()
	perNode := float64(requests) / float64(refreshes) / benchNodes
	b.ReportMetric(perNode, "requests/node/refresh")
	if perNode > 1 {
		b.Fatalf("a refresh of %d nodes × %d pods cost %.2f requests per node; at most 1 is allowed", benchNodes, benchPodsPerNode, perNode)
	}
	if len(r.Pods) != benchNodes*benchPodsPerNode || len(r.Errors) > 0 || r.Pods[0].CPUCores == nil {
		b.Fatalf("a refresh read %d pods (errors %v)", len(r.Pods), r.Errors)
	}
}

// BenchmarkPodMetricsRefresh is one refresh of the pod metrics of 50 nodes × 30 pods, from each source: the
// kubelets' summary API and the exporters' container collector (one request per node, read on loopback),
// and a real Prometheus (a fixed number of queries). It fails when a refresh costs more than one request
// per node, and reports the requests (requests/node/refresh) with the time and allocations of wmcon's side.
func BenchmarkPodMetricsRefresh(b *testing.B) {
	pods := benchPods()
	ctx := context.Background()
	b.Run("summary", func(b *testing.B) {
		f := serveFleet(b, 4)
		src := &metrics.SummarySource{Via: "loopback", Tracker: metrics.NewPodTracker(120),
			Read: func(ctx context.Context, node string) ([]byte, error) { return f.get(ctx, "/"+node+"/stats/summary") }}
		src.Refresh(ctx, pods)
		f.requests.Store(0)
		var r model.PodMetricsReport
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			r = src.Refresh(ctx, pods)
		}
		b.StopTimer()
		checkRefresh(b, r, f.requests.Load(), b.N)
	})
	b.Run("exporter", func(b *testing.B) {
		f := serveFleet(b, 4)
		src := &metrics.ExporterPodSource{Via: "loopback", Tracker: metrics.NewPodTracker(120),
			Scrape: func(ctx context.Context, n metrics.Node) ([]byte, error) { return f.get(ctx, "/"+n.Name+"/metrics") }}
		src.Refresh(ctx, pods)
		f.requests.Store(0)
		var r model.PodMetricsReport
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			r = src.Refresh(ctx, pods)
		}
		b.StopTimer()
		checkRefresh(b, r, f.requests.Load(), b.N)
	})
	b.Run("prometheus", func(b *testing.B) { benchPrometheusPods(b, pods) })
}

// benchPrometheusPods reads the pods from a real Prometheus scraping the fleet's container series (one
// target serving every node's, as StartFleet does), with an hour's history asked for.
func benchPrometheusPods(b *testing.B, pods []model.WorkloadPod) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		for n := range benchNodes {
			_, _ = w.Write(exposition(fleetStats{node: n, elapsed: time.Since(start).Seconds()}.ContainerStats()))
		}
	})}
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { _ = srv.Close() })
	url := prometheus.StartFleet(b, l.Addr().String())
	var requests atomic.Int64
	c, err := api.NewClient(api.Config{Address: url, RoundTripper: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		requests.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})})
	if err != nil {
		b.Fatal(err)
	}
	prom := &metrics.PrometheusSource{URL: url, API: promv1.NewAPI(c), Window: 6 * time.Second, Step: 2 * time.Second}
	src := &metrics.PrometheusPodSource{Prom: prom, History: time.Hour}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	deadline := time.Now().Add(90 * time.Second)
	for {
		v, _, err := prom.API.Query(ctx, `count(count_over_time(windows_container_memory_usage_private_working_set_bytes[8s]) >= 3)`, time.Now())
		if vec, ok := v.(prommodel.Vector); err == nil && ok && len(vec) == 1 && int(vec[0].Value) == benchNodes*benchPodsPerNode {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("Prometheus has not scraped the fleet's containers for 6 s (last error: %v)", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	requests.Store(0)
	var r model.PodMetricsReport
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r = src.Refresh(ctx, pods)
	}
	b.StopTimer()
	checkRefresh(b, r, requests.Load(), b.N)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
