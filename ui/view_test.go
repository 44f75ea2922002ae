package ui

import (
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/ui/view"
)

// stubView records what reaches it: x closes it, n replaces it with its successor.
type stubView struct {
	name      string
	got       []string
	w, h      int
	inits     int
	refreshes int
	next      *stubView
}

type pingMsg struct{}

func (v *stubView) Init() tea.Cmd    { v.inits++; return nil }
func (v *stubView) SetSize(w, h int) { v.w, v.h = w, h }
func (v *stubView) View() string     { return "view " + v.name }
func (v *stubView) Refresh() tea.Cmd { v.refreshes++; return nil }
func (v *stubView) ShortHelp() []key.Binding {
	return []key.Binding{key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "close "+v.name))}
}
func (v *stubView) FullHelp() [][]key.Binding { return [][]key.Binding{v.ShortHelp()} }

func (v *stubView) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		v.got = append(v.got, msg.String())
		switch msg.String() {
		case "x":
			return nil, nil
		case "n":
			return v.next, nil
		}
	case pingMsg:
		v.got = append(v.got, "ping")
	}
	return v, nil
}

func TestViewStack(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	below, above := &stubView{name: "below"}, &stubView{name: "above"}
	m = update(m, view.OpenMsg{View: below}, view.OpenMsg{View: above})
	require.Len(t, m.stack, 2)
	assert.Equal(t, 1, above.inits)
	assert.Equal(t, m.ctx.Layout.Body.W, above.w, "a pushed view gets the body's size")

	lines := screenLines(t, m)
	assert.Contains(t, lines[4], "view above", "the body is the top view")
	assert.Contains(t, lines[39], "x close above", "the help line is the top view's")

	m = update(m, keyPress("j"), pingMsg{})
	assert.Equal(t, []string{"j", "ping"}, above.got, "keys go to the top")
	assert.Equal(t, []string{"ping"}, below.got, "other messages reach every view")

	m = update(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	assert.Equal(t, 100, below.w, "every view is resized")

	m.running = &runningAction{id: 1}
	update(m, actionEndedMsg{ID: 1})
	assert.Equal(t, 1, below.refreshes, "views are refreshed when an action ends")
	assert.Equal(t, 1, above.refreshes)

	next := &stubView{name: "next"}
	above.next = next
	m = update(m, keyPress("n"))
	assert.Same(t, next, m.top(), "a view can replace itself")
	assert.Equal(t, 1, next.inits)
	assert.Equal(t, 100, next.w)

	older := m
	m = update(m, keyPress("x"))
	assert.Same(t, below, m.top(), "a view that returns nil leaves the stack")
	assert.Same(t, next, older.top(), "an older copy of the model keeps its own stack")
	m = update(m, keyPress("x"))
	assert.True(t, onList(m))
	assert.Contains(t, screen(m), "NAME", "the list is shown again")
}
