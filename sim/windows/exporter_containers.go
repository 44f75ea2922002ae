package windows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Container is one container containerd runs on the host, with the CRI annotations windows_exporter's
// container collector reads (sandbox namespace and name, container name).
type Container struct {
	ID        string // containerd's ID (64 hex digits), without the "containerd://" prefix
	Namespace string
	Pod       string
	PodUID    string
	Name      string
}

// ContainerLoad is the work a container does. Its figures count towards the host's: the host's CPU and
// memory are its own Load plus its containers'.
type ContainerLoad struct {
	CPUCores    float64 // cores busy
	MemoryBytes float64 // private working set when the load is set
	// MemoryGrowthBytesPS makes the working set grow (a leak) until MemoryCapBytes (a job object's limit
	// stops it there; 0: no cap).
	MemoryGrowthBytesPS float64
	MemoryCapBytes      float64
	RxBytesPS           float64 // the container's endpoint's throughput
	TxBytesPS           float64
}

// ContainerStat is what HCS reports of a container at one moment: counters since it started, and its
// current working set and CPU rate.
type ContainerStat struct {
	Container
	Load        ContainerLoad // the work it does now
	Started     time.Time
	At          time.Time
	CPUSeconds  float64
	CPUCores    float64
	MemoryBytes float64
	RxBytes     float64
	TxBytes     float64
}

// simContainer is a running container and the counters that integrate its load.
type simContainer struct {
	c       Container
	load    ContainerLoad
	started time.Time
	cpu     float64 // CPU seconds
	mem     float64 // working set now
	rx, tx  float64
}

// StartContainer runs a container on the host from now on (containerd created it for a pod). Starting
// one whose ID runs already changes nothing.
func (h *Host) StartContainer(c Container, l ContainerLoad) {
	m := h.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	now := h.now()
	m.advanceLocked(now)
	if m.containers == nil {
		m.containers = map[string]*simContainer{}
	}
	if _, ok := m.containers[c.ID]; ok {
		return
	}
	m.containers[c.ID] = &simContainer{c: c, load: l, started: now, mem: l.MemoryBytes}
}

// StopContainer ends a container (its pod stopped); its series disappear from the exporter.
func (h *Host) StopContainer(id string) {
	m := h.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advanceLocked(h.now())
	delete(m.containers, id)
}

// SetContainerLoad changes a running container's work from now on; its working set restarts from the
// new load's MemoryBytes. An unknown ID is an error.
func (h *Host) SetContainerLoad(id string, l ContainerLoad) error {
	m := h.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advanceLocked(h.now())
	c, ok := m.containers[id]
	if !ok {
		return fmt.Errorf("winsim: no container %s on %s", id, h.Hostname())
	}
	c.load, c.mem = l, l.MemoryBytes
	return nil
}

// SetContainerCPU changes how many cores a running container keeps busy from now on (its working set
// stays where it is). An unknown ID is an error.
func (h *Host) SetContainerCPU(id string, cores float64) error {
	m := h.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advanceLocked(h.now())
	c, ok := m.containers[id]
	if !ok {
		return fmt.Errorf("winsim: no container %s on %s", id, h.Hostname())
	}
	c.load.CPUCores = cores
	return nil
}

// Cores is how many logical processors the host has; MemoryBytes its physical memory.
func (h *Host) Cores() float64 { return simCores }

// MemoryBytes is the host's physical memory.
func (h *Host) MemoryBytes() float64 { return simMemoryBytes }

// ContainerLoadOf is a running container's load; false when it does not run.
func (h *Host) ContainerLoadOf(id string) (ContainerLoad, bool) {
	m := h.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.containers[id]
	if !ok {
		return ContainerLoad{}, false
	}
	return c.load, true
}

// ContainerStats is every running container's figures now, by ID.
func (h *Host) ContainerStats() []ContainerStat { return h.containerStatsAt(h.now()) }

func (h *Host) containerStatsAt(now time.Time) []ContainerStat {
	m := h.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advanceLocked(now)
	out := make([]ContainerStat, 0, len(m.containers))
	for _, c := range m.containers {
		out = append(out, ContainerStat{Container: c.c, Load: c.load, Started: c.started, At: now, CPUSeconds: c.cpu, CPUCores: c.load.CPUCores,
			MemoryBytes: c.mem, RxBytes: c.rx, TxBytes: c.tx})
	}
	slices.SortFunc(out, func(a, b ContainerStat) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// A Process's containers are its host's: the kubelet starts and stops them through containerd.

// StartContainer runs a container on the process's host.
func (p *Process) StartContainer(c Container, l ContainerLoad) { p.host.StartContainer(c, l) }

// StopContainer ends a container on the process's host.
func (p *Process) StopContainer(id string) { p.host.StopContainer(id) }

// ContainerStats is the process's host's containers' figures.
func (p *Process) ContainerStats() []ContainerStat { return p.host.ContainerStats() }

// endContainers ends every container, as a shutdown does; the kubelet starts its pods' again when the
// host is back.
func (m *metricsState) endContainers() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.containers)
}

// advanceContainersLocked adds each container's growth over dt seconds (m.mu held).
func (m *metricsState) advanceContainersLocked(dt float64) {
	for _, c := range m.containers {
		c.cpu += dt * c.load.CPUCores
		c.rx += dt * c.load.RxBytesPS
		c.tx += dt * c.load.TxBytesPS
		c.mem += dt * c.load.MemoryGrowthBytesPS
		if limit := c.load.MemoryCapBytes; limit > 0 && c.mem > limit {
			c.mem = limit
		}
	}
}

// containerUseLocked is the cores and memory the containers use now (m.mu held).
func (m *metricsState) containerUseLocked() (cores, memory float64) {
	for _, c := range m.containers {
		cores += c.load.CPUCores
		memory += c.mem
	}
	return cores, memory
}

// containerTrafficLocked is the containers' network throughput now: it passes the host's NIC too.
func (m *metricsState) containerTrafficLocked() (rx, tx float64) {
	for _, c := range m.containers {
		rx += c.load.RxBytesPS
		tx += c.load.TxBytesPS
	}
	return rx, tx
}

// containerCollector renders the running containers as windows_exporter's container collector does:
// container_id with the runtime's prefix, the CRI's namespace, pod and container names, and the network
// series of each container's endpoint.
type containerCollector struct {
	h  *Host
	at time.Time // the scrape's moment
}

var (
	containerLabels   = []string{"container_id", "namespace", "pod", "container"}
	descContainers    = prometheus.NewDesc("windows_container_count", "Number of containers", nil, nil)
	descContainerUp   = prometheus.NewDesc("windows_container_available", "Available", append(slices.Clone(containerLabels), "hostprocess"), nil)
	descContainerCPU  = prometheus.NewDesc("windows_container_cpu_usage_seconds_total", "Total Run time in Seconds", containerLabels, nil)
	descContainerMem  = prometheus.NewDesc("windows_container_memory_usage_private_working_set_bytes", "Memory Usage Private Working Set Bytes", containerLabels, nil)
	descContainerRecv = prometheus.NewDesc("windows_container_network_receive_bytes_total", "Bytes Received on Interface", append(slices.Clone(containerLabels), "interface"), nil)
	descContainerSent = prometheus.NewDesc("windows_container_network_transmit_bytes_total", "Bytes Sent on Interface", append(slices.Clone(containerLabels), "interface"), nil)
)

func (c containerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descContainers, descContainerUp, descContainerCPU, descContainerMem, descContainerRecv, descContainerSent} {
		ch <- d
	}
}

func (c containerCollector) Collect(ch chan<- prometheus.Metric) {
	stats := c.h.containerStatsAt(c.at)
	ch <- prometheus.MustNewConstMetric(descContainers, prometheus.GaugeValue, float64(len(stats)))
	rx, tx := PodNetwork(stats)
	for _, s := range stats {
		labels := []string{"containerd://" + s.ID, s.Namespace, s.Pod, s.Name}
		pod := s.Namespace + "/" + s.Pod
		endpoint := strings.ToUpper(endpointID(pod))
		ch <- prometheus.MustNewConstMetric(descContainerUp, prometheus.GaugeValue, 1, append(slices.Clone(labels), "false")...)
		ch <- prometheus.MustNewConstMetric(descContainerCPU, prometheus.CounterValue, s.CPUSeconds, labels...)
		ch <- prometheus.MustNewConstMetric(descContainerMem, prometheus.GaugeValue, s.MemoryBytes, labels...)
		// Every container of a pod reports the pod's endpoint, as HCN lists it shared by them all.
		ch <- prometheus.MustNewConstMetric(descContainerRecv, prometheus.CounterValue, rx[pod], append(slices.Clone(labels), endpoint)...)
		ch <- prometheus.MustNewConstMetric(descContainerSent, prometheus.CounterValue, tx[pod], append(slices.Clone(labels), endpoint)...)
	}
}

// PodNetwork is each pod's endpoint's byte counters ("namespace/pod"): its containers' traffic together.
func PodNetwork(stats []ContainerStat) (rx, tx map[string]float64) {
	rx, tx = map[string]float64{}, map[string]float64{}
	for _, s := range stats {
		rx[s.Namespace+"/"+s.Pod] += s.RxBytes
		tx[s.Namespace+"/"+s.Pod] += s.TxBytes
	}
	return rx, tx
}

// endpointID is a stable HNS endpoint GUID for a pod's sandbox.
func endpointID(pod string) string {
	sum := 0
	for _, r := range pod {
		sum = sum*31 + int(r)
	}
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(sum), uint64(sum)&0xffffffffffff)
}
