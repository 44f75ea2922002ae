package ui

import (
	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
)

// Component is one view of the console's body (a detail page, the full help, the health view, the log
// view, a dialog). The list panes are the base of the console; every view opened over them is kept on a
// stack. Keys, mouse events, the body and the help line belong to the view on top; every other message is
// delivered to each view on the stack, so a view below the top still receives its asynchronous results
// (a triage report, log lines) and must ignore what is not meant for it.
//
// Update returns the view to keep in its place: usually itself, another view to replace it (a step of a
// wizard), or nil to leave the stack (esc on a detail page, an answered dialog). Closing is synchronous,
// so a dialog never sees a second key after it answered.
//
// To add a view:
//  1. write it in its own file as a Component (it reads the shared *ProgramContext for styles, keys and
//     flags, and asks the root for things with messages: OpenView (below), runActionMsg and
//     confirmRebootMsg (dispatch.go), openLogsMsg (logsview.go), openHealthMsg (healthview.go));
//  2. register how it opens, in the same file: registerLauncher in an init function (its key then works in
//     the list and shows in help; see launcher) — or, from another view, return OpenView(v). Views are
//     pointers: the stack compares them to see whether Update replaced one.
//
// Optional behaviour is declared by implementing refresher (the view re-checks what it shows when an
// action ends), modal (the view takes every key, ctrl+c included) or escCancelsAction (esc cancels a
// running action before the view sees it).
type Component interface {
	Init() tea.Cmd
	Update(msg tea.Msg) (Component, tea.Cmd)
	View() string // exactly the size given by SetSize, or less (the root pads it)
	SetSize(width, height int)
	help.KeyMap
}

// refresher is a view that shows state an action may change; the root calls Refresh when one ends.
type refresher interface{ Refresh() tea.Cmd }

// modal is a dialog: it gets every key, ctrl+c included, until it answers. box is the dialog alone; the
// root draws it over what lies beneath, so the user still sees what the question is about.
type modal interface {
	modal()
	box() string
}

// escCancelsAction is a view on which esc first cancels a running action (the health view, whose restart
// and reboot run while it is shown).
type escCancelsAction interface{ escCancelsAction() }

// openViewMsg asks the root to push a view; see OpenView.
type openViewMsg struct{ view Component }

// OpenView is the command a view returns to open another view over itself.
func OpenView(v Component) tea.Cmd { return func() tea.Msg { return openViewMsg{v} } }

// top is the view on top of the stack, nil when the list is shown.
func (m *Model) top() Component {
	if len(m.stack) == 0 {
		return nil
	}
	return m.stack[len(m.stack)-1]
}

// push sizes a view to the body, puts it on top and starts it.
func (m *Model) push(v Component) tea.Cmd {
	b := m.ctx.Layout.Body
	v.SetSize(b.W, b.H)
	m.stack = append(m.stack[:len(m.stack):len(m.stack)], v)
	return v.Init()
}

// updateTop gives msg (a key or a mouse event) to the top view.
func (m *Model) updateTop(msg tea.Msg) tea.Cmd {
	i := len(m.stack) - 1
	next, cmd := m.stack[i].Update(msg)
	return tea.Batch(cmd, m.replace(i, next))
}

// broadcast gives msg to every view on the stack, bottom first.
func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for i := 0; i < len(m.stack); i++ {
		next, cmd := m.stack[i].Update(msg)
		cmds = append(cmds, cmd, m.replace(i, next))
		if next == nil {
			i-- // the next view moved into this place
		}
	}
	return tea.Batch(cmds...)
}

// replace puts next at index i of the stack, or removes the view there when next is nil; a new view is
// sized and started. The stack is copied first: a Model is a value, and an older copy keeps its own stack.
func (m *Model) replace(i int, next Component) tea.Cmd {
	if next == m.stack[i] {
		return nil
	}
	stack := append([]Component(nil), m.stack...)
	m.stack = stack
	if next == nil {
		m.stack = append(stack[:i], stack[i+1:]...)
		return nil
	}
	stack[i] = next
	b := m.ctx.Layout.Body
	next.SetSize(b.W, b.H)
	return next.Init()
}

// refreshViews asks every view that shows changeable state to check it again.
func (m *Model) refreshViews() tea.Cmd {
	var cmds []tea.Cmd
	for _, v := range m.stack {
		if r, ok := v.(refresher); ok {
			cmds = append(cmds, r.Refresh())
		}
	}
	return tea.Batch(cmds...)
}

// resizeViews gives every view on the stack the body's size.
func (m *Model) resizeViews() {
	b := m.ctx.Layout.Body
	for _, v := range m.stack {
		v.SetSize(b.W, b.H)
	}
}
