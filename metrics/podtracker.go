package metrics

import (
	"math"
	"sync"
	"time"

	"github.com/wmcon/wmcon/model"
)

// PodSample is what one read of a source found for one pod, before rates: the kubelet's summary or the
// exporter's container series, joined to the pod.
type PodSample struct {
	Pod        model.WorkloadPod
	Taken      time.Time
	Containers []ContainerSample
	HasNet     bool
	RxBytes    float64 // counters, summed over the pod's interfaces
	TxBytes    float64
	// HostClock, when the source has one, is the host's own clock read with the counters (see
	// HostClock); rates then use it instead of Taken.
	HostClock *float64
}

// ContainerSample is one container's figures in a PodSample. CPU comes as a rate the source computed
// (the kubelet's usageNanoCores) or as a counter of CPU seconds (a rate needs two reads).
type ContainerSample struct {
	Name        string
	CPUCores    *float64
	CPUSeconds  *float64
	MemoryBytes *float64
}

// PodTracker keeps, per pod, the last sample (for rates) and the last few figures of the pod and each of
// its containers (for sparklines). Memory is bounded: HistoryLen points per series, and pods not observed
// for a while are forgotten (Forget). Safe for concurrent use.
type PodTracker struct {
	mu   sync.Mutex
	size int
	pods map[podKey]*podTrack
}

type podKey struct{ namespace, name, uid string }

func keyOf(p model.WorkloadPod) podKey { return podKey{p.Namespace, p.Name, p.UID} }

type podTrack struct {
	last       PodSample
	seen       time.Time // when it was last observed (the sample's time)
	times      ring      // the points' times, as Unix seconds
	cpu, mem   ring
	containers map[string]*containerTrack
}

type containerTrack struct {
	cpu, mem ring
}

// NewPodTracker keeps historyLen points per series.
func NewPodTracker(historyLen int) *PodTracker {
	return &PodTracker{size: max(historyLen, 1), pods: map[podKey]*podTrack{}}
}

// Observe records a pod's new sample and returns its figures, with their history oldest first. Each
// observation adds a point; a figure the sample cannot give yet (a CPU counter read once) is left out of
// its series.
func (t *PodTracker) Observe(s PodSample) model.PodMetrics {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := keyOf(s.Pod)
	tr, seen := t.pods[k]
	var prev *PodSample
	if seen {
		prev = &tr.last
	} else {
		tr = &podTrack{containers: map[string]*containerTrack{}}
		t.pods[k] = tr
	}
	m := computePod(prev, s)
	tr.last, tr.seen = s, s.Taken
	tr.times.push(float64(s.Taken.UnixNano())/1e9, t.size)
	tr.cpu.push(orNaN(m.CPUCores), t.size)
	tr.mem.push(orNaN(m.MemoryBytes), t.size)
	for i := range m.Containers {
		c := &m.Containers[i]
		ct := tr.containers[c.Name]
		if ct == nil {
			ct = &containerTrack{}
			tr.containers[c.Name] = ct
		}
		ct.cpu.push(orNaN(c.CPUCores), t.size)
		ct.mem.push(orNaN(c.MemoryBytes), t.size)
		c.CPUHistory, c.MemoryHistory = ct.cpu.known(), ct.mem.known()
	}
	m.CPUHistory, m.MemoryHistory = tr.cpu.known(), tr.mem.known()
	if times := tr.times.known(); len(times) > 1 {
		m.HistoryStep = time.Duration((times[len(times)-1] - times[0]) / float64(len(times)-1) * float64(time.Second))
	}
	return m
}

// Forget drops the pods last observed before cutoff: pods that stopped, or that nobody asked about for a
// while, must not hold memory forever.
func (t *PodTracker) Forget(cutoff time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, tr := range t.pods {
		if tr.seen.Before(cutoff) {
			delete(t.pods, k)
		}
	}
}

// Len is how many pods the tracker holds.
func (t *PodTracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pods)
}

// computePod turns a pod's sample, and the one before it (nil for the first), into its figures. A pod's
// CPU and memory are its containers' sums, known only when every container's is. A counter that went
// backwards (the container restarted) gives no rate rather than a wrong one.
func computePod(prev *PodSample, cur PodSample) model.PodMetrics {
	m := model.PodMetrics{Namespace: cur.Pod.Namespace, Name: cur.Pod.Name, Node: cur.Pod.Node, Taken: cur.Taken,
		Requests: cur.Pod.Requests(), Limits: cur.Pod.Limits()}
	spec := map[string]model.WorkloadContainer{}
	for _, c := range cur.Pod.Containers {
		spec[c.Name] = c
	}
	var before map[string]ContainerSample
	if prev != nil {
		before = make(map[string]ContainerSample, len(prev.Containers))
		for _, c := range prev.Containers {
			before[c.Name] = c
		}
	}
	dt := 0.0
	switch {
	case prev == nil:
	case prev.HostClock != nil && cur.HostClock != nil:
		dt = *cur.HostClock - *prev.HostClock
	default:
		dt = cur.Taken.Sub(prev.Taken).Seconds()
	}
	cpuSum, memSum := 0.0, 0.0
	cpuAll, memAll := len(cur.Containers) > 0, len(cur.Containers) > 0
	for _, c := range cur.Containers {
		cm := model.ContainerMetrics{Name: c.Name, Requests: spec[c.Name].Requests, Limits: spec[c.Name].Limits, MemoryBytes: c.MemoryBytes}
		cm.CPUCores = c.CPUCores
		if p, ok := before[c.Name]; ok && cm.CPUCores == nil && c.CPUSeconds != nil && p.CPUSeconds != nil && dt > 0 {
			if d := *c.CPUSeconds - *p.CPUSeconds; d >= 0 {
				cm.CPUCores = ptr(d / dt)
			}
		}
		cpuAll, memAll = cpuAll && cm.CPUCores != nil, memAll && cm.MemoryBytes != nil
		if cm.CPUCores != nil {
			cpuSum += *cm.CPUCores
		}
		if cm.MemoryBytes != nil {
			memSum += *cm.MemoryBytes
		}
		m.Containers = append(m.Containers, cm)
	}
	if cpuAll {
		m.CPUCores = ptr(cpuSum)
	}
	if memAll {
		m.MemoryBytes = ptr(memSum)
	}
	if prev != nil && cur.HasNet && prev.HasNet && dt > 0 {
		dRx, dTx := cur.RxBytes-prev.RxBytes, cur.TxBytes-prev.TxBytes
		if dRx >= 0 && dTx >= 0 {
			m.NetRxBytesPerSec, m.NetTxBytesPerSec = ptr(dRx/dt), ptr(dTx/dt)
		}
	}
	return m
}

// ring is the last few values of one series; NaN marks a point without a value.
type ring struct {
	vals []float64
	next int // where the next value goes once the ring is full
}

func (r *ring) push(v float64, size int) {
	if len(r.vals) < size {
		r.vals = append(r.vals, v)
		return
	}
	r.vals[r.next] = v
	r.next = (r.next + 1) % size
}

// known is the values oldest first, without the NaNs.
func (r *ring) known() []float64 {
	n := len(r.vals)
	out := make([]float64, 0, n)
	for i := range n {
		if v := r.vals[(r.next+i)%n]; !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}
