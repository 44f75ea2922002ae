package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/ui/view"
)

// top is the view on top of the stack, nil when the list is shown.
func (m *Model) top() view.Component {
	if len(m.stack) == 0 {
		return nil
	}
	return m.stack[len(m.stack)-1]
}

// push sizes a view to the body, puts it on top and starts it.
func (m *Model) push(v view.Component) tea.Cmd {
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
func (m *Model) replace(i int, next view.Component) tea.Cmd {
	if next == m.stack[i] {
		return nil
	}
	stack := append([]view.Component(nil), m.stack...)
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
		if r, ok := v.(view.Refresher); ok {
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
