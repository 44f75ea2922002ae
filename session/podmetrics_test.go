package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/demo"
)

// TestDemoPodMetricsFeed reads the demo's pods as the console's node details would: each node's running
// pods, their figures from the exporters' container collector (CPU after a second read), history that
// grows, the leaking IIS pod's memory climbing towards its limit, the pressure causes naming the pods
// that hold most of a node's CPU or memory, and a deleted pod's numbers gone.
func TestDemoPodMetricsFeed(t *testing.T) {
	ctx, s := openDemo(t, 2*time.Minute)
	feed, err := s.PodMetricsFeed(PodMetricsOptions{})
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, feed.Interval)
	nodeMetrics, err := s.MetricsFeed(MetricsOptions{})
	require.NoError(t, err)

	var pods []model.WorkloadPod
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.5"} {
		p, err := s.WorkloadPods(ctx, demo.NodeName(ip))
		require.NoError(t, err)
		require.Len(t, p, 2, "the demo runs two pods on %s", ip)
		pods = append(pods, p...)
	}
	targets := []model.MetricsTarget{{Name: demo.NodeName("127.0.0.3"), Windows: true}, {Name: demo.NodeName("127.0.0.5"), Windows: true}}
	first := feed.Refresh(ctx, pods)
	nodeMetrics.Refresh(ctx, targets)
	assert.Equal(t, "windows_exporter's container collector via the demo's simulated hosts (in-process)", first.Source)
	assert.Contains(t, first.Why, "the demo cluster has no Prometheus")
	assert.Equal(t, 6, first.Asked)
	require.Len(t, first.Pods, 6)
	assert.Nil(t, first.Pods[0].CPUCores, "a first read of the counters has no rate")
	time.Sleep(1100 * time.Millisecond)
	second := feed.Refresh(ctx, pods)
	nodeMetrics.Refresh(ctx, targets)
	require.Len(t, second.Pods, 6)
	byName := map[string]model.PodMetrics{}
	for _, p := range second.Pods {
		require.NotNil(t, p.CPUCores, "%s has CPU after two reads", p.Name)
		require.NotNil(t, p.MemoryBytes)
		byName[p.Name] = p
	}
	leak := byName["iis-frontend-2"]
	require.Len(t, leak.MemoryHistory, 2)
	assert.Greater(t, leak.MemoryHistory[1], leak.MemoryHistory[0], "the leaking pod's memory climbs")
	assert.Equal(t, float64(1<<30), leak.Limits.MemoryBytes)
	pct, ok := leak.Containers[0].MemoryLimitPercent()
	require.True(t, ok)
	assert.GreaterOrEqual(t, pct, 88.0, "close to its limit, and getting closer")
	assert.InDelta(t, 3.1, *byName["dotnet-api-3"].CPUCores, 0.7)

	hog, err := s.PodPressures(ctx, demo.NodeName("127.0.0.3"), second)
	require.NoError(t, err)
	require.NotEmpty(t, hog)
	assert.Equal(t, model.PodUsesMostCPU, hog[0].Kind)
	assert.Equal(t, "dotnet-api-3", hog[0].Pod)
	assert.True(t, hog[0].Severe, "the node is above 90 % CPU")
	mem, err := s.PodPressures(ctx, demo.NodeName("127.0.0.5"), second)
	require.NoError(t, err)
	require.NotEmpty(t, mem)
	assert.Equal(t, model.PodUsesMostMemory, mem[0].Kind)
	assert.Equal(t, "dotnet-api-5", mem[0].Pod)
	assert.True(t, mem[0].Severe, "the node's memory is above 90 %")
	assert.Contains(t, mem[0].Text, "pod windows-apps/dotnet-api-5 uses 56 % of the node's memory (9.0 GiB of 16.0 GiB)")

	// A deleted pod's containers stop on its host (the node's kubelet reaps them) and its numbers go.
	h := demoOf(s).Hosts[demo.NodeName("127.0.0.2")]
	require.NoError(t, s.Clients.Kube.CoreV1().Pods("windows-apps").Delete(ctx, "dotnet-api-2", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return len(h.ContainerStats()) == 1 }, 10*time.Second, 50*time.Millisecond,
		"the kubelet stops the deleted pod's container")
	after := feed.Refresh(ctx, pods) // asked with the old list, as a console between two lists would
	for _, p := range after.Pods {
		assert.NotEqual(t, "dotnet-api-2", p.Name, "a stopped pod's numbers are gone")
	}
	assert.Len(t, after.Pods, 5)
	latest, ok := feed.Latest(demo.NodeName("127.0.0.2"))
	require.True(t, ok)
	assert.Len(t, latest.Pods, 1)
}
