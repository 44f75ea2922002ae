package cluster_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// TestPodMetricsThroughTheKubeletSummaryAPI: a pod created in the real API server runs on a simulated
// Windows node (its kubelet starts the container on the host); wmcon reads the pod's figures from the
// kubelet's /stats/summary through the API server's node proxy, in one request, and joins the pod's spec.
// A user without get nodes/proxy is refused by the API server's RBAC, the summary source says so, and
// the fallback's figures are used instead. A deleted pod's numbers disappear.
func TestPodMetricsThroughTheKubeletSummaryAPI(t *testing.T) {
	np, err := kubeapi.NewNodeProxy()
	require.NoError(t, err)
	t.Cleanup(func() { np.Close() })
	s := kubeapi.Start(t, kubeapi.WithNamespaces("shop"), kubeapi.WithNodeProxy(np))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(s.AdminConfig())
	_, err = kube.CoreV1().ServiceAccounts("shop").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	h, err := windows.Start(windows.Options{Addr: "127.0.0.76:0", Configured: true, ServicePending: 10 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	require.Eventually(t, func() bool { return h.ServiceRunning("kubelet") && h.ServiceRunning("windows_exporter") }, 10*time.Second, 10*time.Millisecond)
	ls, err := kubelet.StartLogServer("127.0.0.76:0", kubelet.NewContainerLogs())
	require.NoError(t, err)
	t.Cleanup(func() { ls.Close() })
	ls.ServeStats("win-s", h)
	fake, err := kubeapi.FakeNodeIP("127.0.0.76")
	require.NoError(t, err)
	require.NoError(t, np.Route(fmt.Sprintf("%s:%d", fake, ls.Port()), ls.Addr()))
	_, err = kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-s"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, kubelet.PublishEndpoint(ctx, kube, "win-s", ls.Port(), corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: fake}))
	go kubelet.New(kube, map[string]kubelet.Host{"win-s": h}, kubelet.Options{Interval: 50 * time.Millisecond, Grace: time.Hour}).Run(ctx)

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"}, Spec: corev1.PodSpec{NodeName: "win-s",
		AutomountServiceAccountToken: new(bool), Containers: []corev1.Container{{Name: "iis", Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	_, err = kube.CoreV1().Pods("shop").Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	var pods []model.WorkloadPod
	require.Eventually(t, func() bool {
		pods, err = cluster.WorkloadPods(ctx, kube, "", map[string]bool{"win-s": true})
		// the pod's status and the host's container are two writes: wait for both
		return err == nil && len(pods) == 1 && pods[0].Containers[0].ID != "" && len(h.ContainerStats()) == 1
	}, 20*time.Second, 50*time.Millisecond, "the simulated kubelet runs the pod: %s", podState(ctx, kube))
	assert.Equal(t, model.Resources{CPUCores: 2, MemoryBytes: 1 << 30}, pods[0].Containers[0].Requests)
	stats := h.ContainerStats()
	require.Len(t, stats, 1)
	assert.Equal(t, "containerd://"+stats[0].ID, pods[0].Containers[0].ID, "the status and the host name the same container")

	reads := 0
	summary := &metrics.SummarySource{Via: "the node proxy", Tracker: metrics.NewPodTracker(10),
		Read: func(ctx context.Context, node string) ([]byte, error) {
			reads++
			return cluster.KubeletSummary(ctx, kube, node)
		}}
	r := summary.Refresh(ctx, pods)
	require.Empty(t, r.Errors)
	require.Len(t, r.Pods, 1)
	assert.Equal(t, 1, reads, "one request for the node")
	p := r.Pods[0]
	assert.Equal(t, "win-s", p.Node)
	require.NotNil(t, p.CPUCores, "the kubelet's usageNanoCores: one read gives the CPU")
	assert.InDelta(t, stats[0].Load.CPUCores, *p.CPUCores, 1e-6)
	assert.InDelta(t, stats[0].MemoryBytes, *p.MemoryBytes, 1)
	assert.Equal(t, float64(1<<30), p.Limits.MemoryBytes)

	// alice may list nothing and get no nodes/proxy: the API server refuses, and the fallback answers.
	alice := kubernetes.NewForConfigOrDie(s.UserConfig("alice"))
	_, err = cluster.KubeletSummary(ctx, alice, "win-s")
	require.True(t, apierrors.IsForbidden(err), "%v", err)
	// The configured host's exporter serves TLS with WMCO's certificate, as on WMCO's nodes.
	exporter := &metrics.ExporterPodSource{Via: "the host's exporter over HTTPS", Tracker: metrics.NewPodTracker(10),
		Scrape: func(ctx context.Context, _ metrics.Node) ([]byte, error) {
			url, err := h.ExporterURL()
			if err != nil {
				return nil, err
			}
			return get(ctx, h.ExporterClient(), url)
		}}
	chain := &metrics.PodFallback{
		Primary: &metrics.SummarySource{Via: "the node proxy", Tracker: metrics.NewPodTracker(10),
			Read: func(ctx context.Context, node string) ([]byte, error) {
				return cluster.KubeletSummary(ctx, alice, node)
			}},
		Next: func(context.Context) (metrics.PodSource, string) { return exporter, "the exporter is read instead" }}
	r = chain.Refresh(ctx, pods)
	assert.Equal(t, exporter.Name(), r.Source)
	assert.Contains(t, r.Why, "the kubelets' summary API is forbidden to this user (get nodes/proxy")
	assert.Contains(t, r.Why, `cannot get resource "nodes/proxy"`, "the API server's own words")
	require.Len(t, r.Pods, 1)
	assert.InDelta(t, stats[0].MemoryBytes, *r.Pods[0].MemoryBytes, 1)

	require.NoError(t, kube.CoreV1().Pods("shop").Delete(ctx, "web-1", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return len(h.ContainerStats()) == 0 }, 20*time.Second, 50*time.Millisecond,
		"the kubelet finishes the deletion and stops the container")
	r = summary.Refresh(ctx, pods) // asked with the old list, as a console between two lists would
	assert.Empty(t, r.Errors)
	assert.Empty(t, r.Pods, "the stopped pod's numbers are gone from the summary")
}

func get(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func podState(ctx context.Context, kube kubernetes.Interface) string {
	p, err := kube.CoreV1().Pods("shop").Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	ev, _ := kube.CoreV1().Events("shop").List(ctx, metav1.ListOptions{})
	return fmt.Sprintf("%+v %+v", p.Status, ev)
}
