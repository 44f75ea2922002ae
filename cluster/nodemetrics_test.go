package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// TestScrapeNodeExporterThroughNodeProxy reads a simulated windows_exporter through the real API
// server's node proxy (GET /api/v1/nodes/NODE:9182/proxy/metrics), as wmcon top does without Prometheus.
func TestScrapeNodeExporterThroughNodeProxy(t *testing.T) {
	np, err := kubeapi.NewNodeProxy()
	require.NoError(t, err)
	t.Cleanup(func() { np.Close() })
	s := kubeapi.Start(t, kubeapi.WithCRDs(), kubeapi.WithNamespaces(), kubeapi.WithNodeProxy(np))

	h, err := windows.Start(windows.Options{Addr: "127.0.0.3:0", Configured: true, ServicePending: 10 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	require.Eventually(t, func() bool { return h.ServiceRunning("windows_exporter") && h.ExporterAddr() != "" }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, h.SetVolumeFree("C:", 2<<30))
	fakeIP, err := kubeapi.FakeNodeIP("127.0.0.3")
	require.NoError(t, err)
	require.NoError(t, np.Route(fmt.Sprintf("%s:%d", fakeIP, windows.RealExporterPort), h.ExporterAddr()))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(s.AdminConfig())
	node, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-m"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fakeIP}}
	_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	require.NoError(t, err)

	body, err := cluster.ScrapeNodeExporter(ctx, kube, "win-m", windows.RealExporterPort)
	require.NoError(t, err)
	sample, err := metrics.ParseExporter(bytes.NewReader(body), time.Now())
	require.NoError(t, err)
	v, ok := sample.Fullest()
	require.True(t, ok)
	assert.Equal(t, "C:", v.Name)
	assert.Equal(t, float64(2<<30), v.FreeBytes, "the figures of the simulated host behind the proxy")

	h.StopService("windows_exporter")
	require.Eventually(t, func() bool {
		_, err = cluster.ScrapeNodeExporter(ctx, kube, "win-m", windows.RealExporterPort)
		return err != nil
	}, 10*time.Second, 50*time.Millisecond)
	assert.ErrorContains(t, err, "scrape windows_exporter on win-m:9182 through the node proxy")

	_, err = cluster.ScrapeNodeExporter(ctx, fake.NewSimpleClientset(), "win-m", windows.RealExporterPort)
	assert.ErrorContains(t, err, "demo cluster")
}
