package windows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContainerCollector: the running containers' series, with the real collector's names and labels;
// their work counts in the host's CPU, memory and NIC figures; a leak stops at its cap; a stopped
// container's series are gone.
func TestContainerCollector(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	th := startHost(t, Options{Configured: true, Clock: clock.now})
	addr := waitExporter(t, th)
	th.SetLoad(Load{CPUBusy: 0.1, MemoryUsed: 0.25})
	web := Container{ID: "aaa", Namespace: "shop", Pod: "web-1", PodUID: "u1", Name: "iis"}
	th.StartContainer(web, ContainerLoad{CPUCores: 2, MemoryBytes: 1 << 30, MemoryGrowthBytesPS: 100 << 20, MemoryCapBytes: 2 << 30, RxBytesPS: 1000})
	th.StartContainer(Container{ID: "bbb", Namespace: "shop", Pod: "web-1", PodUID: "u1", Name: "log"}, ContainerLoad{CPUCores: 0.5, RxBytesPS: 500})

	before := scrape(t, th, addr)
	clock.add(5 * time.Second)
	after := scrape(t, th, addr)
	iis := map[string]string{"container_id": "containerd://aaa", "namespace": "shop", "pod": "web-1", "container": "iis"}
	assert.InDelta(t, 10, sample(t, after, "windows_container_cpu_usage_seconds_total", iis)-sample(t, before, "windows_container_cpu_usage_seconds_total", iis), 1e-6)
	assert.Equal(t, float64(1<<30+500<<20), sample(t, after, "windows_container_memory_usage_private_working_set_bytes", iis), "growing 100 MiB/s")
	assert.Equal(t, 2.0, sample(t, after, "windows_container_count", nil))
	rx := sample(t, after, "windows_container_network_receive_bytes_total", iis)
	assert.InDelta(t, 7500, rx-sample(t, before, "windows_container_network_receive_bytes_total", iis), 1e-6, "the pod's endpoint: both containers' traffic")
	assert.Equal(t, rx, sample(t, after, "windows_container_network_receive_bytes_total", map[string]string{"container": "log"}), "each container reports the shared endpoint")

	core := map[string]string{"core": "0,0", "mode": "idle"}
	idle := sample(t, after, "windows_cpu_time_total", core) - sample(t, before, "windows_cpu_time_total", core)
	assert.InDelta(t, 5*(1-0.1-2.5/4), idle, 1e-6, "the containers' 2.5 cores are the host's busy time too")
	total := sample(t, after, "windows_memory_physical_total_bytes", nil)
	assert.InDelta(t, total*0.75-float64(1<<30+500<<20), sample(t, after, "windows_memory_available_bytes", nil), 1)
	nic := map[string]string{"nic": simNIC}
	assert.InDelta(t, 5*1500, sample(t, after, "windows_net_bytes_received_total", nic)-sample(t, before, "windows_net_bytes_received_total", nic), 1e-6)

	clock.add(time.Minute)
	assert.Equal(t, float64(2<<30), sample(t, scrape(t, th, addr), "windows_container_memory_usage_private_working_set_bytes", iis), "the limit stops the leak")
	require.NoError(t, th.SetContainerCPU("aaa", 0.2))
	l, ok := th.ContainerLoadOf("aaa")
	require.True(t, ok)
	assert.Equal(t, 0.2, l.CPUCores)
	assert.Equal(t, float64(2<<30), th.ContainerStats()[0].MemoryBytes, "changing the CPU leaves the working set")
	require.NoError(t, th.SetContainerLoad("aaa", ContainerLoad{MemoryBytes: 1 << 20}))
	assert.Equal(t, float64(1<<20), th.ContainerStats()[0].MemoryBytes)
	assert.ErrorContains(t, th.SetContainerCPU("zzz", 1), "no container zzz")

	th.StopContainer("aaa")
	th.StopContainer("bbb")
	fams := scrape(t, th, addr)
	assert.Equal(t, 0.0, sample(t, fams, "windows_container_count", nil))
	assert.Empty(t, fams["windows_container_cpu_usage_seconds_total"].GetMetric(), "no series of stopped containers")
}
