package session

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/demo"
)

// countingPods counts the refreshes of each node's pods; while gate is open (not closed) a refresh
// waits for it.
type countingPods struct {
	metrics.PodSource
	gate chan struct{}

	mu    sync.Mutex
	reads map[string]int
}

func (c *countingPods) Refresh(ctx context.Context, pods []model.WorkloadPod) model.PodMetricsReport {
	c.mu.Lock()
	seen := map[string]bool{}
	for _, p := range pods {
		if !seen[p.Node] {
			seen[p.Node] = true
			c.reads[p.Node]++
		}
	}
	c.mu.Unlock()
	<-c.gate
	return c.PodSource.Refresh(ctx, pods)
}

func (c *countingPods) count(node string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads[node]
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestPodMetricsFeedReadsANodeOncePerInterval: the console's views and triage ask for a node's pods
// through PodMetricsFeed.Node; callers at the same time share one read, callers within the interval get
// its answer, the second read comes after the warm-up when the first had no CPU rate, and the next after
// the interval. The answer names the pod that uses most of the busy node's cores.
func TestPodMetricsFeedReadsANodeOncePerInterval(t *testing.T) {
	ctx, s := openDemo(t, 2*time.Minute)
	feed, err := s.PodMetricsFeed(PodMetricsOptions{})
	require.NoError(t, err)
	// The feed's clock decides when to read again; the source keeps the real one, since the simulated
	// hosts' CPU counters move in real time.
	clock := &fakeClock{now: time.Now()}
	feed.now = clock.Now
	src := &countingPods{PodSource: feed.src, gate: make(chan struct{}), reads: map[string]int{}}
	feed.src = src
	busy := demo.NodeName("127.0.0.3")

	answers := make(chan model.NodePods, 3)
	for range 3 {
		go func() {
			np, err := feed.Node(ctx, busy)
			assert.NoError(t, err)
			answers <- np
		}()
	}
	require.Eventually(t, func() bool { return src.count(busy) == 1 }, 10*time.Second, 10*time.Millisecond)
	close(src.gate)
	first := <-answers
	for range 2 {
		assert.Equal(t, first.Report.Pods[0].Taken, (<-answers).Report.Pods[0].Taken, "callers at the same time share the read")
	}
	assert.Equal(t, 1, src.count(busy))
	require.Len(t, first.Report.Pods, 2)
	assert.Nil(t, first.Report.Pods[0].CPUCores, "the exporters' first read has no CPU rate")
	assert.Equal(t, model.NodeCapacity{CPUCores: 4, MemoryBytes: 16 << 30}, first.Capacity)

	clock.add(time.Second)
	_, err = feed.Node(ctx, busy)
	require.NoError(t, err)
	assert.Equal(t, 1, src.count(busy), "within the warm-up: the last read's answer")

	time.Sleep(time.Second) // a CPU rate over a real second
	clock.add(feed.Warmup)
	second, err := feed.Node(ctx, busy)
	require.NoError(t, err)
	assert.Equal(t, 2, src.count(busy), "after the warm-up, a read for the CPU rate")
	require.NotNil(t, second.Report.Pods[0].CPUCores)
	require.NotEmpty(t, second.Pressures)
	assert.Equal(t, model.PodUsesMostCPU, second.Pressures[0].Kind)
	assert.Equal(t, "dotnet-api-3", second.Pressures[0].Pod)

	clock.add(feed.Interval - time.Millisecond)
	_, err = feed.Node(ctx, busy)
	require.NoError(t, err)
	assert.Equal(t, 2, src.count(busy), "within the interval: the last read's answer")
	clock.add(time.Millisecond)
	_, err = feed.Node(ctx, busy)
	require.NoError(t, err)
	assert.Equal(t, 3, src.count(busy), "once per interval")
	assert.Equal(t, 0, src.count(demo.NodeName("127.0.0.2")), "only the node asked about is read")
}
