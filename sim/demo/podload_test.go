package demo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/demo"
)

// TestDemoPodsKeepTheirStories: the demo's pods run on their hosts with their stories' loads, their work
// counted in the node's figures; after a reboot the kubelet starts them again and they take up their
// stories again (the memory hog holds 9 GiB of the full node's memory once more).
func TestDemoPodsKeepTheirStories(t *testing.T) {
	c, err := demo.New(demo.Options{Step: 10 * time.Millisecond, RebootDowntime: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go c.Run(ctx)

	h := c.Hosts[demo.NodeName("127.0.0.5")]
	memoryOf := func(pod string) float64 {
		for _, s := range h.ContainerStats() {
			if s.Pod == pod {
				return s.MemoryBytes
			}
		}
		return 0
	}
	require.Len(t, h.ContainerStats(), 2, "iis-frontend-5 and dotnet-api-5 run on the host")
	assert.Equal(t, float64(9<<30), memoryOf("dotnet-api-5"))
	assert.InDelta(t, 0.93, h.Load().MemoryUsed+(memoryOf("dotnet-api-5")+memoryOf("iis-frontend-5"))/h.MemoryBytes(), 0.001,
		"the host's own share and its containers' make the node's 93 %")

	leak := c.Hosts[demo.NodeName("127.0.0.2")]
	first := leak.ContainerStats()
	time.Sleep(300 * time.Millisecond)
	for i, s := range leak.ContainerStats() {
		if s.Pod == "iis-frontend-2" {
			assert.Greater(t, s.MemoryBytes, first[i].MemoryBytes, "the IIS pod leaks")
		}
	}

	h.Reboot()
	require.Eventually(t, func() bool { return memoryOf("dotnet-api-5") == float64(9<<30) }, 20*time.Second, 50*time.Millisecond,
		"restarted by the kubelet after the reboot, the memory hog holds its 9 GiB again")
}
