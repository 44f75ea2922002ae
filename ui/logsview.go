package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/logview"
	"github.com/wmcon/wmcon/ui/view"
)

// logTailLines is how much of a log the view shows before following it.
const logTailLines = 1000

// openLogsMsg asks the root for the log view of a service on nodes.
type openLogsMsg struct {
	service string
	nodes   []string
}

// openLogs opens the log view of a service on one or more nodes (merged in time order), following it;
// closing it returns to the view it was opened from.
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
		Request: logline.Request{Nodes: infos, Service: service, Follow: true, Tail: logTailLines},
		Start:   m.ctx.Logs, Theme: m.ctx.Theme, Now: m.ctx.Now,
	})
	return m.push(&logsView{logs: lv})
}

// logsView puts the log view component on the stack; closing it stops its stream.
type logsView struct{ logs logview.Model }

func (v *logsView) Init() tea.Cmd    { return v.logs.Init() }
func (v *logsView) SetSize(w, h int) { v.logs.SetSize(w, h) }
func (v *logsView) View() string     { return v.logs.View() }

func (v *logsView) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	if _, ok := msg.(logview.CloseMsg); ok {
		v.logs.Stop()
		return nil, nil
	}
	var cmd tea.Cmd
	v.logs, cmd = v.logs.Update(msg)
	return v, cmd
}

func (v *logsView) ShortHelp() []key.Binding  { return v.logs.KeyMap().ShortHelp() }
func (v *logsView) FullHelp() [][]key.Binding { return v.logs.KeyMap().FullHelp() }
