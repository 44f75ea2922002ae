package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/view"
	"github.com/wmcon/wmcon/ui/wizard"
)

// What the root does for the guided setup: it offers it on a cluster with no Windows nodes, tells views
// how an action they asked for ended (view.ActionFinished), selects the new node, and shows what a
// closing view says.

// handleWizardMsg handles what the guided setup asks of the root (view.SelectNode, view.Status); it
// reports whether msg was one of them.
func (m *Model) handleWizardMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case view.SelectNode:
		m.selectNode(msg.Node)
		return nil, true
	case view.Status:
		m.status = msg.Text
		return nil, true
	}
	return nil, false
}

// selectNode shows the Nodes pane with the node under the cursor (its filter cleared when it hid it); a
// node the snapshots do not list yet is selected when it appears.
func (m *Model) selectNode(name string) {
	_ = m.showPane(paneNodes) // the Nodes pane reads nothing when shown
	m.pendingSelect = name
	m.selectPending()
}

func (m *Model) selectPending() {
	name := m.pendingSelect
	if name == "" || m.snap == nil {
		return
	}
	if _, ok := m.snap.Node(name); !ok {
		return
	}
	m.pendingSelect = ""
	p := &m.panes[paneNodes]
	if p.indexOf(name) < 0 && (p.query != "" || p.windowsOnly) {
		p.windowsOnly = false
		p.setQuery("")
		p.rebuild(m.snap, m.env(), m.ctx.Layout.Body.W)
	}
	if i := p.indexOf(name); i >= 0 {
		p.setCursor(i)
	}
}

// offerSetup offers the guided setup once, on the first snapshot that lists the nodes and has no Windows
// node: a line under the list, until a Windows node appears or the setup is opened.
func (m *Model) offerSetup(snap *model.Snapshot) {
	if !wizard.Available(m.ctx) || snap.Resources[model.ResNodes].Availability != model.Available {
		return
	}
	windows := false
	for _, n := range snap.Nodes {
		windows = windows || n.Windows
	}
	switch {
	case windows:
		m.setupOffer = ""
	case !m.setupOffered:
		m.setupOffered = true
		m.setupOffer = "no Windows nodes yet: press " + wizard.Key.Help().Key + " for the guided setup (operator, key, machines, a Ready node)"
	}
}

// finishedMsg is how the running action ended, for the views.
func (ra *runningAction) finishedMsg(err error) view.ActionFinished {
	msg := view.ActionFinished{Req: ra.req, Outcome: event.Succeeded}
	if ra.finish != nil {
		msg.Outcome, msg.Message = ra.finish.Outcome, ra.finish.Message
		if ra.finish.Outcome != event.Succeeded {
			msg.Detail = view.FailureText(*ra.finish)
		}
	}
	if err != nil && msg.Outcome == event.Succeeded {
		msg.Outcome, msg.Detail = event.Failed, err.Error()
	}
	return msg
}
