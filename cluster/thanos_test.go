package cluster_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	prommodel "github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
	"github.com/wmcon/wmcon/testsupport/prometheus"
)

// TestThanosQuerierThroughServiceProxy finds a real Prometheus (serving TLS, as kube-rbac-proxy does)
// behind openshift-monitoring/thanos-querier through the real API server's service proxy, and reads a
// simulated node's figures with PromQL through it. Before the Service exists it is absent; to a user
// without services/proxy it is forbidden.
func TestThanosQuerierThroughServiceProxy(t *testing.T) {
	np, err := kubeapi.NewNodeProxy()
	require.NoError(t, err)
	t.Cleanup(func() { np.Close() })
	s := kubeapi.Start(t, kubeapi.WithNamespaces(cluster.ThanosNamespace), kubeapi.WithNodeProxy(np))
	admin, err := cluster.NewClients(s.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	_, _, err = cluster.ThanosQuerier(ctx, admin)
	require.ErrorIs(t, err, cluster.ErrThanosAbsent)

	h, err := windows.Start(windows.Options{Addr: "127.0.0.13:0", Configured: true, ServicePending: 10 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	require.Eventually(t, func() bool { return h.ServiceRunning("windows_exporter") && h.ExporterAddr() != "" }, 10*time.Second, 10*time.Millisecond)
	h.SetLoad(windows.Load{CPUBusy: 0.9, MemoryUsed: 0.5, RxBytesPS: 1e5, TxBytesPS: 1e5})
	promURL := prometheus.StartTLS(t, map[string]string{"win-thanos": "https://" + h.ExporterAddr()})
	_, portText, err := net.SplitHostPort(promURL[len("https://"):])
	require.NoError(t, err)
	port, err := strconv.Atoi(portText)
	require.NoError(t, err)
	fakeIP, err := kubeapi.FakeNodeIP("127.0.0.1")
	require.NoError(t, err)
	require.NoError(t, np.Route(fmt.Sprintf("%s:%d", fakeIP, port), "127.0.0.1:"+portText))
	thanosBehind(ctx, t, admin, fakeIP, int32(port))

	url, rt, err := cluster.ThanosQuerier(ctx, admin)
	require.NoError(t, err)
	assert.Contains(t, url, "/api/v1/namespaces/openshift-monitoring/services/https:thanos-querier:9091/proxy")
	src, err := metrics.NewPrometheusSourceVia(url, "the cluster's thanos-querier", rt)
	require.NoError(t, err)
	src.Window, src.Step = 4*time.Second, 2*time.Second
	require.Eventually(t, func() bool {
		v, _, err := src.API.Query(ctx, `count_over_time(windows_cs_logical_processors[6s])`, time.Now())
		vec, ok := v.(prommodel.Vector)
		return err == nil && ok && len(vec) == 1 && vec[0].Value >= 6
	}, 45*time.Second, 250*time.Millisecond, "Prometheus, asked through the service proxy, has scraped the exporter for 6 s")
	r := src.Refresh(ctx, []metrics.Node{{Name: "win-thanos"}})
	require.Len(t, r.Nodes, 1, "%+v", r)
	assert.Equal(t, "the cluster's thanos-querier (PromQL)", r.Source)
	require.NotNil(t, r.Nodes[0].CPUPercent)
	assert.InDelta(t, 90, *r.Nodes[0].CPUPercent, 1.5)
	assert.InDelta(t, 50, *r.Nodes[0].MemoryUsedPercent, 0.1)

	alice, err := cluster.NewClients(s.UserConfig("alice"))
	require.NoError(t, err)
	_, _, err = cluster.ThanosQuerier(ctx, alice)
	require.ErrorIs(t, err, cluster.ErrThanosForbidden)
}

// thanosBehind creates openshift-monitoring/thanos-querier (port web 9091) with one endpoint, a pod at
// fakeIP:port, as the endpoints controller would (the service proxy only dials pods' addresses).
func thanosBehind(ctx context.Context, t *testing.T, c cluster.Clients, fakeIP string, port int32) {
	t.Helper()
	ns := cluster.ThanosNamespace
	kube := c.Kube
	_, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	pod, err := kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "thanos-querier-0"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-rbac-proxy", Image: "kube-rbac-proxy"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kube.CoreV1().Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	})
	pod.Status.PodIP, pod.Status.PodIPs = fakeIP, []corev1.PodIP{{IP: fakeIP}}
	_, err = kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	require.NoError(t, err)
	_, err = kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: cluster.ThanosService},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "web", Port: 9091}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	name, ready := "web", true
	_, err = kube.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: cluster.ThanosService + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: cluster.ThanosService}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{fakeIP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name}}},
		Ports: []discoveryv1.EndpointPort{{Name: &name, Port: &port}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}
