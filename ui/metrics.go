package ui

import (
	"context"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/layout"
)

// Live node metrics: once the console has a view.MetricsFunc, the root reads every node's figures off the UI
// goroutine, then again every MetricsInterval (the first time sooner, after MetricsWarmup, when the
// source needs two reads for its rates). Each answer rebuilds the Nodes pane's metric columns and reaches
// the open views (details, health) as a metricsMsg. Only one read is in flight at a time.

// metricsView is what the console knows of the nodes' metrics after a read; never changed once built,
// so the panes and views can share it.
type metricsView struct {
	loaded bool   // a read has answered
	source string // where the numbers come from, and why that source
	why    string
	nodes  map[string]*model.NodeMetrics
	errs   map[string]string
}

// node returns a node's figures, or why there are none.
func (v *metricsView) node(name string) (*model.NodeMetrics, string) {
	if !v.loaded {
		return nil, "reading…"
	}
	if m, ok := v.nodes[name]; ok {
		return m, ""
	}
	if e, ok := v.errs[name]; ok {
		return nil, e
	}
	return nil, "not read yet (a node newer than the last read)"
}

func newMetricsView(r model.MetricsReport) *metricsView {
	v := &metricsView{loaded: true, source: r.Source, why: r.Why,
		nodes: make(map[string]*model.NodeMetrics, len(r.Nodes)), errs: make(map[string]string, len(r.Errors))}
	for i := range r.Nodes {
		v.nodes[r.Nodes[i].Node] = &r.Nodes[i]
	}
	for _, e := range r.Errors {
		v.errs[e.Node] = e.Error
	}
	return v
}

// metricsState is the root's side of the refresh loop.
type metricsState struct {
	view  *metricsView // nil when the console reads no metrics
	seq   int          // numbers reads and their ticks, so a stale one is dropped
	reads int          // reads answered
	busy  bool         // a read is in flight
}

type (
	metricsLoadedMsg struct {
		seq int
		rep model.MetricsReport
	}
	metricsTickMsg struct{ seq int }
	// metricsMsg gives the open views the latest figures.
	metricsMsg struct{ view *metricsView }
)

// metricsReadTimeout bounds one read, so a hung source cannot stop the refreshes.
const metricsReadTimeout = 25 * time.Second

// readMetrics starts a read of the snapshot's nodes; nil when there is nothing to read or one is on.
func (m *Model) readMetrics() tea.Cmd {
	if m.ctx.Metrics == nil || m.snap == nil || m.metrics.busy {
		return nil
	}
	m.metrics.seq++
	m.metrics.busy = true
	seq, read := m.metrics.seq, m.ctx.Metrics
	shown := m.nodesOnScreen()
	targets := make([]model.MetricsTarget, 0, len(m.snap.Nodes))
	for i := range m.snap.Nodes {
		n := &m.snap.Nodes[i]
		targets = append(targets, model.MetricsTarget{Name: n.Name, IP: n.InternalIP, Windows: n.Windows, OnScreen: shown[n.Name]})
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), metricsReadTimeout)
		defer cancel()
		return metricsLoadedMsg{seq: seq, rep: read(ctx, targets)}
	}
}

// nodesOnScreen are the nodes whose rows the Nodes pane shows now (its scroll window), and its selected
// node: the per-node metric paths read only these.
func (m *Model) nodesOnScreen() map[string]bool {
	p := &m.panes[paneNodes]
	shown := map[string]bool{}
	if p.selectedKey != "" {
		shown[p.selectedKey] = true
	}
	end := min(len(p.rows), p.offset+max(m.tableHeight()-1, 0))
	for i := max(p.offset, 0); i < end; i++ {
		shown[p.rows[i].Key] = true
	}
	return shown
}

// applyMetrics takes a read's answer, renews the Nodes pane's metric cells, tells the views and schedules
// the next read.
func (m *Model) applyMetrics(msg metricsLoadedMsg) tea.Cmd {
	if msg.seq != m.metrics.seq {
		return nil
	}
	m.metrics.busy = false
	m.metrics.reads++
	old := m.metricsEnv()
	m.metrics.view = newMetricsView(msg.rep)
	m.renewMetricCells(old)
	next := m.ctx.MetricsInterval
	if m.metrics.reads == 1 && m.ctx.MetricsWarmup > 0 {
		next = m.ctx.MetricsWarmup
	}
	seq := m.metrics.seq
	tick := m.ctx.Tick(next, func(time.Time) tea.Msg { return metricsTickMsg{seq} })
	return tea.Batch(tick, m.broadcast(metricsMsg{m.metrics.view}))
}

// renewMetricCells rewrites the metric cells of the Nodes pane's rows whose figures differ from the last
// read's, and refits the columns when a new cell changes a column's width. A read touches nothing else of
// a row, and at rest it has figures for the rows on screen only: rebuilding (and measuring) all 10,000
// rows of a large fleet for it was most of what a read cost the console.
func (m *Model) renewMetricCells(old *metricsView) {
	p, env := &m.panes[paneNodes], m.env()
	if env.Metrics == nil {
		return
	}
	first, cols := len(nodeColumns), p.columns()
	refit, remeasure := false, len(p.natural) != len(cols)
	for i := range p.all {
		r := &p.all[i]
		if len(r.Cells) != len(nodeMetricColumns) || len(r.Tones) != len(nodeMetricColumns) {
			continue
		}
		if was, _ := old.node(r.Key); was == nil {
			if now, _ := env.Metrics.node(r.Key); now == nil {
				continue // no figures before or now: its cells show the None mark either way
			}
		}
		var fresh Row
		addMetricCells(&fresh, r.Key, env)
		if slices.Equal(fresh.Cells, r.Cells[first:]) && slices.Equal(fresh.Tones, r.Tones[first:]) {
			continue
		}
		for k, cell := range fresh.Cells {
			g, s := p.widthChange(cols, first+k, r.Cells[first+k], cell)
			refit, remeasure = refit || g, remeasure || s
		}
		// In place: the filtered rows share these cells.
		copy(r.Cells[first:], fresh.Cells)
		copy(r.Tones[first:], fresh.Tones)
	}
	switch {
	case remeasure:
		p.resize(m.ctx.Layout.Body.W)
	case refit:
		p.widths, p.gap = fitColumns(cols, p.natural, m.ctx.Layout.Body.W)
	}
}

// widthChange notes what replacing a cell of column c does to the column's natural width: a wider cell
// widens it (grew); a narrower one that was the widest may narrow it, which only measuring every row
// tells (shrank).
func (p *listPane) widthChange(cols []Column, c int, was, now string) (grew, shrank bool) {
	if c >= len(p.natural) || was == now {
		return false, false
	}
	w0, w1 := min(layout.TextWidth(was), cols[c].Max), min(layout.TextWidth(now), cols[c].Max)
	switch {
	case w1 > p.natural[c]:
		p.natural[c] = w1
		return true, false
	case w1 < w0 && w0 >= p.natural[c]:
		return false, true
	}
	return false, false
}

// metricsEnv is the metrics the rows show: nil when the console reads none (the columns are not shown).
func (m *Model) metricsEnv() *metricsView {
	if m.ctx.Metrics == nil {
		return nil
	}
	if m.metrics.view == nil {
		return &metricsView{}
	}
	return m.metrics.view
}
