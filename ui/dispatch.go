package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/configure"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/view"
)

// requestAction turns an action key on the selected node into a confirmation (reboot, drain) or a run
// (cordon, uncordon). One action runs at a time, so its panel and cancel key are never ambiguous.
func (m Model) requestAction(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	if key.Matches(msg, m.ctx.Keys.Health, m.ctx.Keys.Logs) && m.active == paneNodes {
		node, ok := m.selectedNode()
		switch {
		case !ok:
			return m, nil
		case key.Matches(msg, m.ctx.Keys.Logs):
			if marked := m.panes[paneNodes].markedKeys(); len(marked) > 0 {
				return m, m.openLogs("kubelet", marked...) // merged in time order
			}
			return m, m.openLogs("kubelet", node.Name)
		default:
			return m, m.openHealth(node.Name)
		}
	}
	if m.ctx.ReadOnly {
		m.status = "wmcon runs read-only: restart it without --read-only to change the cluster"
		return m, nil
	}
	if m.ctx.Runner == nil {
		m.status = fmt.Sprintf("the %q action is not available here", msg.String())
		return m, nil
	}
	if m.active != paneNodes {
		m.status = "node actions work in the Nodes pane (press 1)"
		return m, nil
	}
	if m.actionRunning() {
		m.status = "an action is running: wait for it, or esc to cancel it"
		return m, nil
	}
	k := m.ctx.Keys
	if key.Matches(msg, k.Upgrade) {
		// The action shows the plan in the panel, then asks before it upgrades the standalone nodes.
		return m, m.start(request.Upgrade{Confirm: true, Drain: request.DefaultDrainOptions()})
	}
	node, ok := m.selectedNode()
	if !ok {
		return m, nil
	}
	if batch := m.panes[paneNodes].markedKeys(); len(batch) > 0 && !key.Matches(msg, k.Health, k.Logs) {
		return m.requestBatch(msg, batch)
	}
	switch {
	case key.Matches(msg, k.Health):
		return m, m.openHealth(node.Name)
	case key.Matches(msg, k.Reboot):
		if !node.Windows {
			m.status = node.Name + " is a Linux node: wmcon reboots Windows nodes (over SSH) only"
			return m, nil
		}
		return m, m.openRebootForm(node.Name)
	case key.Matches(msg, k.Drain):
		return m, m.openForm([]string{node.Name}, drainRequest([]string{node.Name}), "Drain "+node.Name+"?", "cordon, then evict every pod that is not a DaemonSet's; the node stays cordoned")
	case key.Matches(msg, k.Cordon):
		return m, m.start(request.Cordon{Nodes: []string{node.Name}})
	case key.Matches(msg, k.Uncordon):
		return m, m.start(request.Uncordon{Nodes: []string{node.Name}})
	case key.Matches(msg, k.Configure):
		// The action inspects the host, then asks with the plan before it changes anything; a chooser comes
		// first only when there is more than one host to choose from.
		choices := configure.Choices(m.snap, node, m.ctx.Hosts)
		switch {
		case len(choices) == 0:
			m.status = node.Name + " is a Linux node: wmcon configures Windows hosts only"
			return m, nil
		case len(choices) == 1:
			return m, m.start(choices[0].Req)
		}
		return m, m.push(configure.NewHostChooser(m.ctx, choices))
	}
	return m, nil
}

func (m *Model) openRebootForm(node string) tea.Cmd {
	return m.openForm([]string{node}, rebootRequest([]string{node}), "Reboot "+node+"?",
		"cordon → drain → Restart-Computer -Force → wait for SSH → fix the EC2 metadata route (AWS) → Ready → uncordon")
}

// rebootRequest and drainRequest build a confirmation's request from the options the form shows.
func rebootRequest(nodes []string) func(request.DrainOptions) request.Request {
	return func(o request.DrainOptions) request.Request {
		return request.NewReboot(nodes, o)
	}
}

func drainRequest(nodes []string) func(request.DrainOptions) request.Request {
	return func(o request.DrainOptions) request.Request { return request.Drain{Nodes: nodes, Options: o} }
}

func (m *Model) openForm(nodes []string, build func(request.DrainOptions) request.Request, title, intro string) tea.Cmd {
	return m.push(newDrainForm(m.ctx, nodes, build, title, intro))
}

// confirmRebootMsg asks for the reboot confirmation of a node (the health view's reboot key).
type confirmRebootMsg struct{ node string }

// handleActionRequest runs or confirms what a view asked for; one action runs at a time.
func (m *Model) handleActionRequest(msg tea.Msg) tea.Cmd {
	if m.actionRunning() {
		if r, ok := msg.(view.RunAction); ok {
			m.status = "an action is running: wait for it, or esc to cancel it"
			return m.broadcast(view.ActionFinished{Req: r.Req, Outcome: event.Failed, Detail: "not started: another action is running"})
		}
		return nil
	}
	switch msg := msg.(type) {
	case view.RunAction:
		return m.start(msg.Req)
	case confirmRebootMsg:
		if n, ok := m.snap.Node(msg.node); ok {
			return m.openRebootForm(n.Name)
		}
	}
	return nil
}

// start runs a confirmed request and opens its panel.
func (m *Model) start(req request.Request) tea.Cmd {
	m.nextID++
	id := ActionID(m.nextID)
	m.openActionPanel(id, req.Title()+cancelHint)
	ra, cmd := startAction(m.ctx.Runner, id, req)
	m.running = ra
	return cmd
}

// handleActionMsg applies a running action's message and re-arms the wait for the next one.
func (m *Model) handleActionMsg(msg tea.Msg) tea.Cmd {
	ra := m.running
	if ra == nil {
		return nil
	}
	switch msg := msg.(type) {
	case actionEventMsg:
		if msg.Event.Kind == event.Finished && (ra.finish == nil || msg.Event.Outcome != event.Succeeded) {
			e := msg.Event
			ra.finish = &e
		}
		if m.panel != nil && m.panel.id == msg.ID {
			m.panel.apply(updateFromEvent(msg.Event, len(ra.req.Targets()) != 1)) // none named: a fleet-wide action
		}
	case actionQuestionMsg:
		return tea.Batch(waitForAction(ra.msgs), m.push(dialog.NewQuestion(m.ctx, msg.Question, msg.Reply)))
	case actionEndedMsg:
		ra.done = true
		if m.status == cancellingStatus || ra.escArmed {
			m.status = "" // the panel now says how it ended
		}
		refresh := tea.Batch(m.refreshViews(), m.broadcast(ra.finishedMsg(msg.Err)))
		if _, ok := ra.req.(request.MirrorsApply); ok {
			refresh = tea.Batch(refresh, m.loadMirrors()) // the pane shows what the hosts hold now
		}
		if m.panel != nil && m.panel.id == msg.ID {
			if msg.Err != nil && m.panel.err == "" {
				m.panel.apply(ActionUpdate{Err: msg.Err.Error()})
			}
			m.panel.apply(ActionUpdate{Finished: true})
			m.panel.title = trimCancelHint(m.panel.title) + "  (esc closes)"
		}
		return refresh
	}
	return waitForAction(ra.msgs)
}

// cancelHint ends a running action's panel title.
const cancelHint = "  (esc twice or ctrl+c cancels)"

func trimCancelHint(title string) string { return strings.TrimSuffix(title, cancelHint) }

func (m *Model) actionRunning() bool { return m.running != nil && !m.running.done }

// cancelAction cancels the running action's context; the action itself reports where it stopped and how
// to finish (for example a node left cordoned), so the panel stays open to show that.
func (m *Model) cancelAction() {
	m.running.cancel()
	m.status = cancellingStatus
}

const cancellingStatus = "cancelling… the panel will say in which state the node was left"

// escCancel cancels a running action on the second esc in a row: esc is also the key that closes views and
// clears filters, so one press alone must not stop a reboot half-way. ctrl+c cancels at once.
func (m *Model) escCancel() {
	if !m.running.escArmed {
		m.running.escArmed = true
		m.status = "esc again cancels " + m.running.req.Title() + " (ctrl+c cancels at once); any other key keeps it running"
		return
	}
	m.cancelAction()
}

// escapeAction cancels a running action (on a second esc), or closes the panel of a finished one.
func (m *Model) escapeAction() {
	if m.actionRunning() {
		m.escCancel()
		return
	}
	m.closeActionPanel()
}

// selectedNode is the node under the cursor in the Nodes pane.
func (m *Model) selectedNode() (model.NodeInfo, bool) {
	r, ok := m.panes[paneNodes].selected()
	if !ok || m.snap == nil {
		return model.NodeInfo{}, false
	}
	return m.snap.Node(r.Key)
}

// toggleMark marks or unmarks the selected node for a batch action and moves down, as file managers do.
func (m *Model) toggleMark() {
	p := &m.panes[paneNodes]
	r, ok := p.selected()
	if !ok {
		return
	}
	p.marked[r.Key] = !p.marked[r.Key]
	if !p.marked[r.Key] {
		delete(p.marked, r.Key)
	}
	p.rebuild(m.snap, m.env(), m.ctx.Layout.Body.W)
	p.move(1)
	if n := len(p.marked); n > 0 {
		m.status = fmt.Sprintf("%d nodes marked: R, d, c or u acts on all of them (reboots one at a time); space unmarks", n)
	}
}

// requestBatch is requestAction for the marked nodes.
func (m Model) requestBatch(msg tea.KeyPressMsg, nodes []string) (Model, tea.Cmd) {
	k := m.ctx.Keys
	list := strings.Join(nodes, ", ")
	switch {
	case key.Matches(msg, k.Reboot):
		for _, n := range nodes {
			if info, ok := m.snap.Node(n); ok && !info.Windows {
				m.status = n + " is a Linux node: wmcon reboots Windows nodes (over SSH) only; unmark it with space"
				return m, nil
			}
		}
		return m, m.openForm(nodes, rebootRequest(nodes), fmt.Sprintf("Reboot %d nodes, one at a time?", len(nodes)), list)
	case key.Matches(msg, k.Drain):
		return m, m.openForm(nodes, drainRequest(nodes), fmt.Sprintf("Drain %d nodes?", len(nodes)), list)
	case key.Matches(msg, k.Cordon):
		return m, m.push(dialog.NewConfirm(m.ctx, request.Cordon{Nodes: nodes},
			fmt.Sprintf("Cordon %d nodes?", len(nodes)), list+"\n\nNew pods will not be scheduled on them; running pods stay."))
	case key.Matches(msg, k.Uncordon):
		return m, m.push(dialog.NewConfirm(m.ctx, request.Uncordon{Nodes: nodes},
			fmt.Sprintf("Uncordon %d nodes?", len(nodes)), list+"\n\nPods may be scheduled on them again."))
	}
	return m, nil
}

// startBatch starts a batch and clears the marks, which now belong to the running action.
func (m *Model) startBatch(req request.Request) tea.Cmd {
	m.panes[paneNodes].marked = map[string]bool{}
	m.panes[paneNodes].rebuild(m.snap, m.env(), m.ctx.Layout.Body.W)
	return m.start(req)
}
