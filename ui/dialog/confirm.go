package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/request"
)

// confirmDialog asks yes or no before a request that needs no options (cordon or uncordon of several marked
// nodes); it answers with a formResultMsg like the drain form.
type confirmDialog struct {
	ctx           *ProgramContext
	width, height int
	title, body   string
	req           request.Request
}

func newConfirmDialog(ctx *ProgramContext, req request.Request, title, body string) *confirmDialog {
	return &confirmDialog{ctx: ctx, req: req, title: title, body: body}
}

func (d *confirmDialog) Init() tea.Cmd    { return nil }
func (d *confirmDialog) SetSize(w, h int) { d.width, d.height = w, h }
func (d *confirmDialog) modal()           {}

var confirmDialogKeys = []key.Binding{
	key.NewBinding(key.WithKeys("y", "enter"), key.WithHelp("y/enter", "yes")),
	key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "no")),
}

func (d *confirmDialog) ShortHelp() []key.Binding  { return confirmDialogKeys }
func (d *confirmDialog) FullHelp() [][]key.Binding { return [][]key.Binding{confirmDialogKeys} }

// Update answers on y/enter or n/esc and leaves the stack; other keys are taken and ignored.
func (d *confirmDialog) Update(msg tea.Msg) (Component, tea.Cmd) {
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

func (d *confirmDialog) answer(yes bool) tea.Cmd {
	return func() tea.Msg { return formResultMsg{Confirmed: yes, Request: d.req} }
}

func (d *confirmDialog) View() string { return placeInBox(d.box(), d.width, d.height) }

func (d *confirmDialog) box() string {
	st := &d.ctx.Styles
	return st.PanelBorder.Padding(1, 2).Width(min(d.width, 84)).Render(
		st.DetailTitle.Render(d.title) + "\n\n" + d.body + "\n\n" + st.Muted.Render("y/enter yes · n/esc no"))
}
