package metrics

import (
	"sync"

	"github.com/wmcon/wmcon/model"
)

// Tracker keeps, per node, the last sample (for rates) and the last few CPU percentages (for a
// sparkline). Memory is bounded: HistoryLen points per node, and nodes not seen in a refresh are
// forgotten by Retain. Safe for concurrent use.
type Tracker struct {
	mu    sync.Mutex
	size  int
	nodes map[string]*nodeTrack
}

type nodeTrack struct {
	last    Sample
	history []float64 // ring of CPU percentages
	next    int       // where the next point goes once the ring is full
}

// NewTracker keeps historyLen CPU points per node (at 30 s a refresh, 30 points are 15 minutes).
func NewTracker(historyLen int) *Tracker {
	if historyLen < 1 {
		historyLen = 1
	}
	return &Tracker{size: historyLen, nodes: map[string]*nodeTrack{}}
}

// Observe records a node's new sample and returns its figures with the CPU history, oldest first.
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
	if m.CPUPercent != nil {
		n.push(*m.CPUPercent, t.size)
	}
	m.CPUHistory = n.ordered()
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

func (n *nodeTrack) push(v float64, size int) {
	if len(n.history) < size {
		n.history = append(n.history, v)
		return
	}
	n.history[n.next] = v
	n.next = (n.next + 1) % size
}

func (n *nodeTrack) ordered() []float64 {
	out := make([]float64, 0, len(n.history))
	out = append(out, n.history[n.next:]...)
	return append(out, n.history[:n.next]...)
}
