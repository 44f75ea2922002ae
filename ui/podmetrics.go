package ui

import (
	"context"
	"maps"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/pods"
)

// Live pod metrics: once the console has a view.PodMetricsFunc, the root reads the figures of the pods
// of each node an open view shows (a node's details, a pod's details, the health view) — one read per
// node per PodMetricsInterval however many views show it, the second sooner (PodMetricsWarmup) when the
// first had no CPU rate yet — and stops reading a node when no view shows it any more. Each read reaches
// every view that shows the node; a view opened later gets the latest at once.

// podWatcher is a view that shows the figures of one node's pods.
type podWatcher interface {
	PodsNode() string // the node; "" none
	PodFigures() *pods.Figures
	SetPodFigures(*pods.Figures) tea.Cmd
}

// podNodeState is the root's side of one node's reads.
type podNodeState struct {
	seq     int           // the read in flight or last answered, so a stale answer or tick is dropped
	reads   int           // reads answered
	figures *pods.Figures // the latest; nil before the first answer
}

// podMetricsState is every node being read; a Model is a value, so the map is replaced, never changed.
type podMetricsState struct {
	nodes map[string]podNodeState
	seq   int
}

type (
	podMetricsLoadedMsg struct {
		node string
		seq  int
		pods model.NodePods
		err  error
	}
	podMetricsTickMsg struct {
		node string
		seq  int
	}
)

// watchedPodNodes are the nodes whose pods the open views show.
func (m *Model) watchedPodNodes() map[string]bool {
	out := map[string]bool{}
	for _, v := range m.stack {
		if w, ok := v.(podWatcher); ok && w.PodsNode() != "" {
			out[w.PodsNode()] = true
		}
	}
	return out
}

// watchPods starts reading each node an open view shows and is not read yet, and gives every such view
// its node's latest figures when it does not have them (one just opened). The root calls it after every
// message: views open and close in many places.
func (m *Model) watchPods() tea.Cmd {
	if m.ctx.PodMetrics == nil {
		return nil
	}
	var cmds []tea.Cmd
	for _, v := range m.stack {
		w, ok := v.(podWatcher)
		if !ok || w.PodsNode() == "" {
			continue
		}
		st, reading := m.podMetrics.nodes[w.PodsNode()]
		if !reading {
			cmds = append(cmds, m.readPods(w.PodsNode()))
			continue
		}
		if st.figures != nil && w.PodFigures() != st.figures {
			cmds = append(cmds, w.SetPodFigures(st.figures))
		}
	}
	return tea.Batch(cmds...)
}

// readPods starts a read of a node's pods.
func (m *Model) readPods(node string) tea.Cmd {
	m.podMetrics.seq++
	seq, read := m.podMetrics.seq, m.ctx.PodMetrics
	st := m.podMetrics.nodes[node]
	st.seq = seq
	m.setPodNode(node, &st)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), metricsReadTimeout)
		defer cancel()
		np, err := read(ctx, node)
		return podMetricsLoadedMsg{node: node, seq: seq, pods: np, err: err}
	}
}

// setPodNode records a node's state (nil: the node is no longer read).
func (m *Model) setPodNode(node string, st *podNodeState) {
	nodes := maps.Clone(m.podMetrics.nodes)
	if nodes == nil {
		nodes = map[string]podNodeState{}
	}
	if st == nil {
		delete(nodes, node)
	} else {
		nodes[node] = *st
	}
	m.podMetrics.nodes = nodes
}

// applyPodMetrics keeps a read's answer (watchPods hands it to the views) and schedules the node's next
// read, or stops reading the node when no view shows it any more.
func (m *Model) applyPodMetrics(msg podMetricsLoadedMsg) tea.Cmd {
	st, ok := m.podMetrics.nodes[msg.node]
	if !ok || st.seq != msg.seq {
		return nil
	}
	if !m.watchedPodNodes()[msg.node] {
		m.setPodNode(msg.node, nil)
		return nil
	}
	st.reads++
	st.figures = pods.NewFigures(msg.node, msg.pods, msg.err)
	m.setPodNode(msg.node, &st)
	next := m.ctx.PodMetricsInterval
	if st.reads == 1 && m.ctx.PodMetricsWarmup > 0 && msg.err == nil && lacksCPU(msg.pods.Report) {
		next = m.ctx.PodMetricsWarmup
	}
	node, seq := msg.node, msg.seq
	return tea.Tick(next, func(time.Time) tea.Msg { return podMetricsTickMsg{node: node, seq: seq} })
}

// podMetricsTick reads the node again while a view shows it.
func (m *Model) podMetricsTick(msg podMetricsTickMsg) tea.Cmd {
	st, ok := m.podMetrics.nodes[msg.node]
	if !ok || st.seq != msg.seq {
		return nil
	}
	if !m.watchedPodNodes()[msg.node] {
		m.setPodNode(msg.node, nil)
		return nil
	}
	return m.readPods(msg.node)
}

func lacksCPU(r model.PodMetricsReport) bool {
	for _, p := range r.Pods {
		if p.CPUCores == nil {
			return true
		}
	}
	return false
}
