package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/logview"
)

// logTailLines is how much of a log the view shows before following it.
const logTailLines = 1000

// openLogs opens the log view of a service on one or more nodes (merged in time order), following it;
// esc/q returns to where it was opened.
func (m *Model) openLogs(service string, nodes ...string) tea.Cmd {
	if m.ctx.Logs == nil {
		m.status = "the log view is not available here"
		return nil
	}
	var infos []model.NodeInfo
	for _, node := range nodes {
		n, ok := m.snap.Node(node)
		if !ok {
			m.status = "node " + node + " is gone"
			return nil
		}
		if !n.Windows {
			m.status = node + " is a Linux node: wmcon shows the logs of Windows nodes' services (use oc adm node-logs)"
			return nil
		}
		infos = append(infos, n)
	}
	lv := logview.New(logview.Options{
		Request: actions.LogRequest{Nodes: infos, Service: service, Follow: true, Tail: logTailLines},
		Start:   m.ctx.Logs, NoColor: m.ctx.Styles.NoColor, Now: m.ctx.Now,
	})
	b := m.ctx.Layout.Body
	lv.SetSize(b.W, b.H)
	m.logs, m.logsBack, m.mode = &lv, m.mode, modeLogs
	return m.logs.Init()
}

// handleLogsMsg routes the log view's batches and its request to close. It reports whether msg was one.
func (m *Model) handleLogsMsg(msg tea.Msg) (tea.Cmd, bool) {
	if m.logs == nil {
		return nil, false
	}
	switch msg.(type) {
	case logview.LinesMsg:
		lv, cmd := m.logs.Update(msg)
		m.logs = &lv
		return cmd, true
	case logview.CloseMsg:
		m.logs.Stop()
		m.logs, m.mode = nil, m.logsBack
		return nil, true
	}
	return nil, false
}

func (m *Model) handleLogsKey(msg tea.KeyPressMsg) tea.Cmd {
	lv, cmd := m.logs.Update(msg)
	m.logs = &lv
	return cmd
}
