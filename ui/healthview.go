package ui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/ui/health"
)

// openHealth shows the health view of a node and asks for its first triage.
func (m *Model) openHealth(node string) tea.Cmd {
	if m.ctx.Triage == nil {
		m.status = "the health view is not available here"
		return nil
	}
	st := health.DefaultStyles(m.ctx.Styles.NoColor)
	h := health.New(health.Options{Node: node, Styles: &st, ASCII: m.ctx.Marks.Drift == "!", ReadOnly: m.ctx.ReadOnly})
	b := m.ctx.Layout.Body
	h.SetSize(b.W, b.H)
	m.health = &h
	m.mode = modeHealth
	return h.Init()
}

// handleHealthMsg routes what the health view asks for: a triage, a service restart, the log view, a reboot
// (confirmed first, as from the list) or closing. It reports whether msg was one of them.
func (m *Model) handleHealthMsg(msg tea.Msg) (tea.Cmd, bool) {
	if m.health == nil {
		return nil, false
	}
	switch msg := msg.(type) {
	case health.Refresh:
		return health.Load(context.Background(), msg.Node, m.ctx.Triage), true
	case health.ReportMsg:
		h, cmd := m.health.Update(msg)
		m.health = &h
		return cmd, true
	case health.RestartService:
		if m.actionRunning() {
			m.status = "an action is running: wait for it, or esc to cancel it"
			return nil, true
		}
		return m.start(ActionRequest{Kind: "restart-service", Nodes: []string{msg.Node}, Service: msg.Service}), true
	case health.Reboot:
		if n, ok := m.snap.Node(msg.Node); ok && !m.actionRunning() {
			m.openRebootForm(n.Name)
		}
		return nil, true
	case health.OpenLogs:
		return m.openLogs(msg.Service, msg.Node), true
	case health.Close:
		m.health, m.mode = nil, modeList
		return nil, true
	}
	return nil, false
}

// refreshHealthAfterAction checks the node again when an action that changed it ends.
func (m *Model) refreshHealthAfterAction() tea.Cmd {
	if m.health == nil || m.ctx.Triage == nil {
		return nil
	}
	// Asking through the view's own refresh key makes it show that a check is under way.
	h, cmd := m.health.Update(tea.KeyPressMsg{Code: 'g', Text: "g"})
	m.health = &h
	return cmd
}
