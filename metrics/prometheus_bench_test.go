package metrics_test

import (
	"context"
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
	"github.com/wmcon/wmcon/testsupport/prometheus"
)

const fleetNodes = 2000

// fleetExposition is the windows_exporter series of n nodes at elapsed seconds, each node's with its
// instance label: two cores' CPU time (30 % busy), memory, C: and the NIC's bytes.
func fleetExposition(n int, elapsed float64) []byte {
	var b strings.Builder
	b.Grow(n * 900)
	for i := range n {
		inst := fmt.Sprintf("win-%04d", i)
		for core := range 2 {
			fmt.Fprintf(&b, "windows_cpu_time_total{instance=%q,core=\"0,%d\",mode=\"idle\"} %g\n", inst, core, 0.7*elapsed)
			fmt.Fprintf(&b, "windows_cpu_time_total{instance=%q,core=\"0,%d\",mode=\"user\"} %g\n", inst, core, 0.3*elapsed)
		}
		fmt.Fprintf(&b, "windows_memory_physical_total_bytes{instance=%q} %d\n", inst, 16<<30)
		fmt.Fprintf(&b, "windows_memory_available_bytes{instance=%q} %d\n", inst, 6<<30)
		fmt.Fprintf(&b, "windows_logical_disk_free_bytes{instance=%q,volume=\"C:\"} %d\n", inst, 40<<30+i<<20)
		fmt.Fprintf(&b, "windows_logical_disk_size_bytes{instance=%q,volume=\"C:\"} %d\n", inst, 128<<30)
		fmt.Fprintf(&b, "windows_net_bytes_received_total{instance=%q,nic=\"eth\"} %g\n", inst, 1e5*elapsed)
		fmt.Fprintf(&b, "windows_net_bytes_sent_total{instance=%q,nic=\"eth\"} %g\n", inst, 4e4*elapsed)
	}
	return []byte(b.String())
}

// countingTransport counts the bytes of the answers wmcon reads.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = countingBody{resp.Body, &c.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// BenchmarkPrometheusRefresh2000 is one refresh of 2,000 Windows nodes' figures from a real Prometheus
// (the instant queries and the history's range queries, matched to the nodes): time, allocations, and
// the bytes of Prometheus's answers (wire-B/op). Prometheus holds a few seconds of each node's series.
func BenchmarkPrometheusRefresh2000(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(fleetExposition(fleetNodes, time.Since(start).Seconds()))
	})}
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { _ = srv.Close() })
	url := prometheus.StartFleet(b, l.Addr().String())

	counter := &countingTransport{}
	c, err := api.NewClient(api.Config{Address: url, RoundTripper: counter})
	if err != nil {
		b.Fatal(err)
	}
	src := &metrics.PrometheusSource{URL: url, API: promv1.NewAPI(c), Window: 10 * time.Second, History: time.Minute, Step: 2 * time.Second}
	nodes := make([]metrics.Node, fleetNodes)
	for i := range nodes {
		nodes[i] = metrics.Node{Name: fmt.Sprintf("win-%04d", i)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	deadline := time.Now().Add(90 * time.Second)
	for {
		v, _, err := src.API.Query(ctx, `count(count_over_time(windows_memory_available_bytes[12s]) >= 5)`, time.Now())
		if vec, ok := v.(prommodel.Vector); err == nil && ok && len(vec) == 1 && int(vec[0].Value) == fleetNodes {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("Prometheus has not scraped %d nodes for 10 s (last error: %v)", fleetNodes, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	r := src.Refresh(ctx, nodes)
	if len(r.Nodes) != fleetNodes || r.Nodes[0].CPUPercent == nil || len(r.Nodes[0].CPUHistory) == 0 {
		b.Fatalf("a refresh read %d nodes (errors %d), the first %+v", len(r.Nodes), len(r.Errors), r.Nodes[0])
	}
	counter.n.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		src.Refresh(ctx, nodes)
	}
	b.ReportMetric(float64(counter.n.Load())/float64(b.N), "wire-B/op")
}
