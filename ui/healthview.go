package ui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/health"
	"github.com/wmcon/wmcon/ui/view"
)

// openHealthMsg asks the root for the health view of a node.
type openHealthMsg struct{ node string }

// openHealth shows the health view of a node; its Init asks for the first triage.
func (m *Model) openHealth(node string) tea.Cmd {
	if m.ctx.Triage == nil {
		m.status = "the health view is not available here"
		return nil
	}
	n, known := m.snap.Node(node)
	if known && !n.Windows {
		m.status = node + " is a Linux node: the health view checks what WMCO runs on Windows nodes; for Linux nodes use oc describe node " + node
		return nil
	}
	v := newHealthView(m.ctx, node)
	if known {
		v.seen = nodeState(n)
	}
	if mv := m.metricsEnv(); mv != nil {
		v.setMetrics(mv)
	}
	return m.push(v)
}

// healthView puts the health component on the stack: it runs the triages the component asks for and
// turns its other requests (restart, reboot, logs) into the root's.
type healthView struct {
	ctx    *view.ProgramContext
	health health.Model
	seen   string // the node's state when last checked (see nodeState); a change checks it again
}

func newHealthView(ctx *view.ProgramContext, node string) *healthView {
	h := health.New(health.Options{Node: node, Theme: ctx.Theme, ReadOnly: ctx.ReadOnly})
	return &healthView{ctx: ctx, health: h}
}

func (v *healthView) node() string { return v.health.Node() }

func (v *healthView) Init() tea.Cmd     { return v.health.Init() }
func (v *healthView) SetSize(w, h int)  { v.health.SetSize(w, h) }
func (v *healthView) View() string      { return v.health.View() }
func (v *healthView) EscCancelsAction() {}
func (v *healthView) CommandKeys() []binding.CommandKey {
	return v.health.CommandKeys()
}
func (v *healthView) ShortHelp() []key.Binding  { return v.health.ShortHelp() }
func (v *healthView) FullHelp() [][]key.Binding { return v.health.FullHelp() }

// Refresh checks the node again, showing that a check is under way.
func (v *healthView) Refresh() tea.Cmd { return v.health.Refresh() }

func (v *healthView) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case snapshotMsg:
		return v, v.nodeChanged(msg.snap)
	case metricsMsg:
		v.setMetrics(msg.view)
	case health.Refresh:
		if msg.Node == v.node() {
			return v, health.Load(context.Background(), msg.Node, v.ctx.Triage)
		}
	case health.RestartService:
		if msg.Node == v.node() {
			return v, view.Send(view.RunAction{Req: request.RestartService{Nodes: []string{msg.Node}, Service: msg.Service}})
		}
	case health.Reboot:
		if msg.Node == v.node() {
			return v, view.Send(confirmRebootMsg{node: msg.Node})
		}
	case health.OpenLogs:
		if msg.Node == v.node() {
			return v, view.Send(openLogsMsg{service: msg.Service, nodes: []string{msg.Node}})
		}
	case health.Close:
		if msg.Node == v.node() {
			return nil, nil
		}
	default:
		var cmd tea.Cmd
		v.health, cmd = v.health.Update(msg)
		return v, cmd
	}
	return v, nil
}

// setMetrics gives the health view the node's latest figures with their history, or why there are none.
func (v *healthView) setMetrics(mv *metricsView) {
	f, why := mv.node(v.node())
	source := mv.source
	if mv.why != "" {
		source += " (" + mv.why + ")"
	}
	v.health.SetMetrics(health.Metrics{Source: source, Figures: f, Why: why})
}

// nodeChanged checks the node again when what the triage reads of it changed (readiness, conditions,
// cordon, taints, WMCO's annotations), not on every heartbeat.
func (v *healthView) nodeChanged(snap *model.Snapshot) tea.Cmd {
	n, ok := snap.Node(v.node())
	if !ok {
		return nil
	}
	state := nodeState(n)
	if state == v.seen {
		return nil
	}
	v.seen = state
	return v.Refresh()
}

func nodeState(n model.NodeInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%t|%s|%s|%s|%t", n.Status, n.Unschedulable, n.WMCOVersion, n.DesiredVersion, strings.Join(n.Taints, ","), n.RebootRequired)
	for _, c := range n.Conditions {
		fmt.Fprintf(&b, "|%s=%s/%s", c.Type, c.Status, c.Reason)
	}
	return b.String()
}
