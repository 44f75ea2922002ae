// Package dialog holds the console's small dialogs, which any view may open over itself: a yes/no
// confirmation, a form of a few fields and an action's question. Each takes every key until it answers,
// and is drawn as a box over what it is about (view.Dialog).
package dialog

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/view"
)

// Confirm asks yes or no before a request that needs no options (cordon or uncordon of several marked
// nodes); it answers with a view.FormResult, which the root runs.
type Confirm struct {
	ctx           *view.ProgramContext
	width, height int
	title, body   string
	req           request.Request
}

func NewConfirm(ctx *view.ProgramContext, req request.Request, title, body string) *Confirm {
	return &Confirm{ctx: ctx, req: req, title: title, body: body}
}

func (d *Confirm) Init() tea.Cmd    { return nil }
func (d *Confirm) SetSize(w, h int) { d.width, d.height = w, h }

var ConfirmKeys = []key.Binding{
	key.NewBinding(key.WithKeys("y", "enter"), key.WithHelp("y/enter", "yes")),
	key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "no")),
}

func (d *Confirm) ShortHelp() []key.Binding  { return ConfirmKeys }
func (d *Confirm) FullHelp() [][]key.Binding { return [][]key.Binding{ConfirmKeys} }

// Update answers on y/enter or n/esc and leaves the stack; other keys are taken and ignored.
func (d *Confirm) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return d, nil
	}
	switch k.String() {
	case "y", "Y", "enter":
		return nil, d.answer(true)
	case "n", "N", "esc", "q", "ctrl+c":
		return nil, d.answer(false)
	}
	return d, nil
}

func (d *Confirm) answer(yes bool) tea.Cmd {
	return func() tea.Msg { return view.FormResult{Confirmed: yes, Request: d.req} }
}

func (d *Confirm) View() string { return layout.PlaceInBox(d.Box(), d.width, d.height) }

func (d *Confirm) Box() string {
	st := &d.ctx.Styles
	return st.PanelBorder.Padding(1, 2).Width(min(d.width, 84)).Render(
		st.DetailTitle.Render(d.title) + "\n\n" + d.body + "\n\n" + st.Muted.Render("y/enter yes · n/esc no"))
}
