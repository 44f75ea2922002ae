package metrics

import (
	"math"
	"sync"
	"time"

	"github.com/wmcon/wmcon/model"
)

// Tracker keeps, per node, the last sample (for rates) and the last few figures (CPU, memory, the fullest
// volume's free share, network in and out) for sparklines. Memory is bounded: HistoryLen points per node, and nodes not seen in a
// refresh are forgotten by Retain. Safe for concurrent use.
type Tracker struct {
	mu    sync.Mutex
	size  int
	nodes map[string]*nodeTrack
}

type nodeTrack struct {
	last   Sample
	points []point // ring of the figures of each observation
	next   int     // where the next point goes once the ring is full
}

// point is one observation's figures; NaN where the sample could not give one.
type point struct {
	at                           time.Time
	cpu, mem, disk, rx, tx, pods float64
}

// NewTracker keeps historyLen points per node (at 30 s a refresh, 30 points are 15 minutes).
func NewTracker(historyLen int) *Tracker {
	if historyLen < 1 {
		historyLen = 1
	}
	return &Tracker{size: historyLen, nodes: map[string]*nodeTrack{}}
}

// Observe records a node's new sample and returns its figures with their history, oldest first. The
// first observation of a node adds no point: without a rate it has no CPU figure, and a sparkline that
// starts with a gap says nothing.
func (t *Tracker) Observe(node string, s Sample) model.NodeMetrics {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, seen := t.nodes[node]
	var prev *Sample
	if seen {
		prev = &n.last
	} else {
		n = &nodeTrack{}
		t.nodes[node] = n
	}
	m := Compute(node, prev, s)
	n.last = s
	if seen {
		n.push(point{at: s.Taken, cpu: orNaN(m.CPUPercent), mem: orNaN(m.MemoryUsedPercent), disk: orNaN(m.VolumeFreePercent),
			rx: orNaN(m.NetRxBytesPerSec), tx: orNaN(m.NetTxBytesPerSec), pods: orNaN(m.PodsRunning)}, t.size)
	}
	n.fill(&m)
	return m
}

// Retain forgets the nodes not in keep (deleted nodes must not hold memory forever).
func (t *Tracker) Retain(keep []string) {
	set := make(map[string]bool, len(keep))
	for _, k := range keep {
		set[k] = true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for name := range t.nodes {
		if !set[name] {
			delete(t.nodes, name)
		}
	}
}

func (n *nodeTrack) push(p point, size int) {
	if len(n.points) < size {
		n.points = append(n.points, p)
		return
	}
	n.points[n.next] = p
	n.next = (n.next + 1) % size
}

// fill sets m's histories from the ring, oldest first, and the average time between points.
func (n *nodeTrack) fill(m *model.NodeMetrics) {
	count := len(n.points)
	if count == 0 {
		return
	}
	m.CPUHistory = make([]float64, 0, count)
	m.MemoryHistory = make([]float64, 0, count)
	m.VolumeFreeHistory = make([]float64, 0, count)
	m.NetRxHistory = make([]float64, 0, count)
	m.NetTxHistory = make([]float64, 0, count)
	for i := range count {
		p := n.points[(n.next+i)%count]
		m.CPUHistory = appendKnown(m.CPUHistory, p.cpu)
		m.MemoryHistory = appendKnown(m.MemoryHistory, p.mem)
		m.VolumeFreeHistory = appendKnown(m.VolumeFreeHistory, p.disk)
		m.NetRxHistory = appendKnown(m.NetRxHistory, p.rx)
		m.NetTxHistory = appendKnown(m.NetTxHistory, p.tx)
		m.PodsHistory = appendKnown(m.PodsHistory, p.pods)
	}
	if count > 1 {
		first, last := n.points[n.next%count], n.points[(n.next+count-1)%count]
		m.HistoryStep = last.at.Sub(first.at) / time.Duration(count-1)
	}
}

func orNaN(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

func appendKnown(s []float64, v float64) []float64 {
	if math.IsNaN(v) {
		return s
	}
	return append(s, v)
}
