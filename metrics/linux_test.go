package metrics_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/testsupport/prometheus"
)

// nodeExporterPage is what node_exporter serves for a Linux node that has run for elapsed seconds: two
// CPUs 40 % busy, 32 GiB of which 8 available (75 % used), / with 20 % free and a tmpfs that is full
// (not a disk: ignored), and eth0 receiving 2 MB/s (the loopback is ignored).
func nodeExporterPage(elapsed float64) string {
	var b strings.Builder
	b.WriteString("# TYPE node_cpu_seconds_total counter\n")
	for cpu := range 2 {
		fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=\"%d\",mode=\"idle\"} %g\n", cpu, 0.6*elapsed)
		fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=\"%d\",mode=\"user\"} %g\n", cpu, 0.3*elapsed)
		fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=\"%d\",mode=\"system\"} %g\n", cpu, 0.1*elapsed)
	}
	fmt.Fprintf(&b, "# TYPE node_memory_MemTotal_bytes gauge\nnode_memory_MemTotal_bytes %d\n", 32<<30)
	fmt.Fprintf(&b, "# TYPE node_memory_MemAvailable_bytes gauge\nnode_memory_MemAvailable_bytes %d\n", 8<<30)
	b.WriteString("# TYPE node_filesystem_avail_bytes gauge\n")
	fmt.Fprintf(&b, "node_filesystem_avail_bytes{device=\"/dev/nvme0n1p4\",fstype=\"xfs\",mountpoint=\"/\"} %d\n", 24<<30)
	fmt.Fprintf(&b, "node_filesystem_avail_bytes{device=\"tmpfs\",fstype=\"tmpfs\",mountpoint=\"/run\"} 0\n")
	b.WriteString("# TYPE node_filesystem_size_bytes gauge\n")
	fmt.Fprintf(&b, "node_filesystem_size_bytes{device=\"/dev/nvme0n1p4\",fstype=\"xfs\",mountpoint=\"/\"} %d\n", 120<<30)
	fmt.Fprintf(&b, "node_filesystem_size_bytes{device=\"tmpfs\",fstype=\"tmpfs\",mountpoint=\"/run\"} %d\n", 1<<30)
	b.WriteString("# TYPE node_network_receive_bytes_total counter\n")
	fmt.Fprintf(&b, "node_network_receive_bytes_total{device=\"eth0\"} %g\nnode_network_receive_bytes_total{device=\"lo\"} %g\n", 2e6*elapsed, 9e9*elapsed)
	b.WriteString("# TYPE node_network_transmit_bytes_total counter\n")
	fmt.Fprintf(&b, "node_network_transmit_bytes_total{device=\"eth0\"} %g\nnode_network_transmit_bytes_total{device=\"lo\"} %g\n", 5e5*elapsed, 9e9*elapsed)
	// kube-state-metrics' series, served alongside: three pods running on the node, one pending.
	b.WriteString("# TYPE kube_pod_info gauge\n# TYPE kube_pod_status_phase gauge\n")
	for i, phase := range []string{"Running", "Running", "Running", "Pending"} {
		fmt.Fprintf(&b, "kube_pod_info{namespace=\"apps\",pod=\"web-%d\",node=\"linux-1\"} 1\n", i)
		for _, p := range []string{"Running", "Pending"} {
			v := 0
			if p == phase {
				v = 1
			}
			fmt.Fprintf(&b, "kube_pod_status_phase{namespace=\"apps\",pod=\"web-%d\",phase=%q} %d\n", i, p, v)
		}
	}
	return b.String()
}

// TestPrometheusSourceLinuxNode reads a Linux node's node_exporter series from a real Prometheus: the
// same figures as a Windows node's, so the Nodes pane stays comparable.
func TestPrometheusSourceLinuxNode(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	start := time.Now()
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(nodeExporterPage(time.Since(start).Seconds())))
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := prometheus.Start(t, map[string]string{"linux-1": l.Addr().String()})
	src, err := metrics.NewPrometheusSource(url)
	require.NoError(t, err)
	src.Window, src.Step = 4*time.Second, 2*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.Eventually(t, func() bool {
		v, _, err := src.API.Query(ctx, `count_over_time(node_memory_MemTotal_bytes[6s])`, time.Now())
		vec, ok := v.(prommodel.Vector)
		return err == nil && ok && len(vec) == 1 && vec[0].Value >= 6
	}, 45*time.Second, 250*time.Millisecond, "Prometheus has scraped node_exporter for 6 s")

	r := src.Refresh(ctx, []metrics.Node{{Name: "linux-1"}})
	require.Len(t, r.Nodes, 1, "%+v", r)
	m := r.Nodes[0]
	require.NotNil(t, m.CPUPercent)
	assert.InDelta(t, 40, *m.CPUPercent, 1)
	assert.InDelta(t, 75, *m.MemoryUsedPercent, 0.01)
	assert.Equal(t, "/", m.Volume, "the fullest data filesystem; the full tmpfs is not a disk")
	assert.InDelta(t, 20, *m.VolumeFreePercent, 0.01)
	require.NotNil(t, m.NetRxBytesPerSec)
	assert.InEpsilon(t, 2e6, *m.NetRxBytesPerSec, 0.1, "eth0 only: not the loopback")
	assert.InEpsilon(t, 5e5, *m.NetTxBytesPerSec, 0.1)
	require.NotEmpty(t, m.MemoryHistory)
	assert.InDelta(t, 75, m.MemoryHistory[len(m.MemoryHistory)-1], 0.01)
	require.NotEmpty(t, m.VolumeFreeHistory)
	assert.NotEmpty(t, m.CPUHistory)
	require.NotNil(t, m.PodsRunning, "kube-state-metrics' count")
	assert.Equal(t, 3.0, *m.PodsRunning)
	require.NotEmpty(t, m.PodsHistory)
	assert.Equal(t, 3.0, m.PodsHistory[len(m.PodsHistory)-1])
}
