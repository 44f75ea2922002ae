package kubelet_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	statsv1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
)

// TestKubeletRunsPodsContainersOnTheHost: the containers of the pods a kubelet runs run on its host, with
// the IDs the pod's status reports, so the exporter's container collector and the summary API see them;
// when the pod is deleted, its containers stop and its figures disappear.
func TestKubeletRunsPodsContainersOnTheHost(t *testing.T) {
	h, err := windows.Start(windows.Options{Addr: "127.0.0.74:0", Configured: true, ServicePending: 10 * time.Millisecond,
		RebootDowntime: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	require.Eventually(t, func() bool { return h.ServiceRunning("kubelet") && h.ServiceRunning("containerd") }, 10*time.Second, 10*time.Millisecond)

	p := appPod("web", func(p *corev1.Pod) {
		p.UID, p.Spec.NodeName = "uid-web", "win-1"
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}
	})
	kube := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}}, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go kubelet.New(kube, map[string]kubelet.Host{"win-1": h}, kubelet.Options{Interval: 20 * time.Millisecond}).Run(ctx)

	id := kubelet.ContainerID("uid-web", "web")
	require.Eventually(t, func() bool { return len(h.ContainerStats()) == 1 }, 10*time.Second, 10*time.Millisecond)
	running, err := kube.CoreV1().Pods("apps").Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	require.Len(t, running.Status.ContainerStatuses, 1)
	assert.Equal(t, "containerd://"+id, running.Status.ContainerStatuses[0].ContainerID, "the status names the host's container")
	s := h.ContainerStats()[0]
	assert.Equal(t, windows.Container{ID: id, Namespace: "apps", Pod: "web", PodUID: "uid-web", Name: "web"}, s.Container)
	assert.InDelta(t, 0.15, s.Load.CPUCores, 0.031, "a share of its CPU request")
	assert.Equal(t, float64(512<<20), s.MemoryBytes, "never past its memory limit")

	body, err := h.ScrapeExporter()
	require.NoError(t, err)
	assert.Contains(t, string(body), `windows_container_memory_usage_private_working_set_bytes{container="web",container_id="containerd://`+id+`",namespace="apps",pod="web"} 5.36870912e+08`)

	sum := kubelet.Summary("win-1", h, time.Unix(0, 0))
	require.Len(t, sum.Pods, 1)
	assert.Equal(t, statsv1.PodReference{Name: "web", Namespace: "apps", UID: "uid-web"}, sum.Pods[0].PodRef)

	// A reboot ends the containers; the kubelet starts them again once the host is back.
	h.Reboot()
	assert.Empty(t, h.ContainerStats(), "a shutdown ends every container")
	require.Eventually(t, func() bool { return len(h.ContainerStats()) == 1 }, 10*time.Second, 10*time.Millisecond,
		"the kubelet restarts the running pod's container after the reboot")
	assert.True(t, h.ContainerStats()[0].Started.After(s.Started), "a new container, its counters from zero")

	require.NoError(t, kube.CoreV1().Pods("apps").Delete(ctx, "web", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return len(h.ContainerStats()) == 0 }, 10*time.Second, 10*time.Millisecond,
		"the kubelet stops the deleted pod's containers")
	assert.Empty(t, kubelet.Summary("win-1", h, time.Unix(0, 0)).Pods, "its figures are gone")
	body, err = h.ScrapeExporter()
	require.NoError(t, err)
	assert.NotContains(t, string(body), id)
}

// TestSummaryAPI serves /stats/summary in the kubelet's JSON shape: figures stamped with when they were
// read, CPU as a rate and a counter that moves, the pod's network counters; 404 before ServeStats.
func TestSummaryAPI(t *testing.T) {
	clock := time.Unix(5000, 0)
	h, err := windows.Start(windows.Options{Addr: "127.0.0.75:0", Clock: func() time.Time { return clock }})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	h.StartContainer(windows.Container{ID: "aaa", Namespace: "shop", Pod: "web-1", PodUID: "u1", Name: "iis"},
		windows.ContainerLoad{CPUCores: 0.5, MemoryBytes: 100 << 20, MemoryGrowthBytesPS: 1 << 20, RxBytesPS: 1000, TxBytesPS: 10})
	h.StartContainer(windows.Container{ID: "bbb", Namespace: "shop", Pod: "web-1", PodUID: "u1", Name: "log"},
		windows.ContainerLoad{CPUCores: 0.1, MemoryBytes: 10 << 20, RxBytesPS: 500})

	ls, err := kubelet.StartLogServer("127.0.0.75:0", kubelet.NewContainerLogs())
	require.NoError(t, err)
	t.Cleanup(func() { ls.Close() })
	get := func() (*httptest.ResponseRecorder, statsv1.Summary) {
		rec := httptest.NewRecorder()
		ls.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/stats/summary", nil))
		var sum statsv1.Summary
		if rec.Code == http.StatusOK {
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &sum))
		}
		return rec, sum
	}
	rec, _ := get()
	assert.Equal(t, http.StatusNotFound, rec.Code, "a kubelet without stats answers 404")

	ls.ServeStats("win-1", h)
	clock = clock.Add(10 * time.Second)
	rec, sum := get()
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "win-1", sum.Node.NodeName)
	require.Len(t, sum.Pods, 1)
	ps := sum.Pods[0]
	require.Len(t, ps.Containers, 2)
	iis := ps.Containers[0]
	assert.Equal(t, "iis", iis.Name)
	assert.Equal(t, uint64(5e8), *iis.CPU.UsageNanoCores)
	assert.Equal(t, uint64(5e9), *iis.CPU.UsageCoreNanoSeconds, "0.5 cores for 10 s")
	assert.Equal(t, uint64(110<<20), *iis.Memory.WorkingSetBytes, "a leak of 1 MiB/s for 10 s")
	assert.True(t, iis.CPU.Time.Time.Equal(clock), "stamped with when the runtime read it")
	require.NotNil(t, ps.Network)
	assert.Equal(t, uint64(15000), *ps.Network.RxBytes, "the pod's endpoint carries both containers' traffic")

	h.StopContainer("aaa")
	h.StopContainer("bbb")
	_, sum = get()
	assert.Empty(t, sum.Pods, "a pod whose containers stopped is not in the summary")
}
