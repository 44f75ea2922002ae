package ui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// helpView is the full help of the view it was opened from (the list or a detail page).
type helpView struct {
	ctx *ProgramContext
	of  help.KeyMap
}

func newHelpView(ctx *ProgramContext, of help.KeyMap) *helpView { return &helpView{ctx: ctx, of: of} }

func (h *helpView) Init() tea.Cmd    { return nil }
func (h *helpView) SetSize(int, int) {}

func (h *helpView) Update(msg tea.Msg) (Component, tea.Cmd) {
	if msg, ok := msg.(tea.KeyPressMsg); ok && key.Matches(msg, h.ctx.Keys.Back, h.ctx.Keys.Help) {
		return nil, nil
	}
	return h, nil
}

func (h *helpView) View() string {
	hm := newHelp(h.ctx)
	return lipgloss.NewStyle().Padding(1, 2).Render(hm.FullHelpView(h.of.FullHelp()))
}

func (h *helpView) ShortHelp() []key.Binding  { return []key.Binding{h.ctx.Keys.Back} }
func (h *helpView) FullHelp() [][]key.Binding { return h.of.FullHelp() }

// newHelp is a help model styled by the theme and as wide as the terminal.
func newHelp(ctx *ProgramContext) help.Model {
	hm := help.New()
	hm.Styles = helpStyles(&ctx.Styles)
	hm.SetWidth(ctx.Width)
	return hm
}
