// Package helpview is the full help of a view or of the list: its key groups laid out in columns.
package helpview

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/view"
)

// View is the full help of the view it was opened from (the list or a detail page).
type View struct {
	ctx *view.ProgramContext
	of  help.KeyMap
}

// New is the full help of of, the view (or list) it is opened from.
func New(ctx *view.ProgramContext, of help.KeyMap) *View { return &View{ctx: ctx, of: of} }

func (h *View) Init() tea.Cmd    { return nil }
func (h *View) SetSize(int, int) {}

func (h *View) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	if msg, ok := msg.(tea.KeyPressMsg); ok && key.Matches(msg, h.ctx.Keys.Back, h.ctx.Keys.Help) {
		return nil, nil
	}
	return h, nil
}

func (h *View) View() string {
	st := &h.ctx.Styles
	return lipgloss.NewStyle().Padding(1, 2).Render(grid(st, h.of.FullHelp(), h.ctx.Width-4))
}

// helpColumnRows is the most keys a help column holds; a longer group continues in the next column.
const helpColumnRows = 8

// grid lays the key groups out as columns, as many side by side as fit width, the rest on further
// rows: nothing is cut at 80 columns, where one row of every group side by side would not fit.
func grid(st *styles.Styles, groups [][]key.Binding, width int) string {
	var columns []string
	for _, g := range groups {
		var enabled []key.Binding
		for _, b := range g {
			if b.Enabled() {
				enabled = append(enabled, b)
			}
		}
		for len(enabled) > 0 {
			n := min(len(enabled), helpColumnRows)
			columns = append(columns, helpColumn(st, enabled[:n]))
			enabled = enabled[n:]
		}
	}
	const gap = "   "
	var rows []string
	var row []string
	rowWidth := 0
	for _, c := range columns {
		w := lipgloss.Width(c)
		if len(row) > 0 && rowWidth+len(gap)+w > width {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, rowWidth = nil, 0
		}
		if len(row) > 0 {
			row = append(row, gap)
			rowWidth += len(gap)
		}
		row = append(row, c)
		rowWidth += w
	}
	if len(row) > 0 {
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	}
	return strings.Join(rows, "\n\n")
}

// helpColumn is one column of keys and what they do, the keys aligned.
func helpColumn(st *styles.Styles, keys []key.Binding) string {
	kw := 0
	for _, b := range keys {
		kw = max(kw, lipgloss.Width(b.Help().Key))
	}
	lines := make([]string, len(keys))
	for i, b := range keys {
		k := b.Help().Key
		lines[i] = st.HelpKey.Render(k+strings.Repeat(" ", kw-lipgloss.Width(k))) + " " + st.HelpDesc.Render(b.Help().Desc)
	}
	return strings.Join(lines, "\n")
}

func (h *View) ShortHelp() []key.Binding  { return []key.Binding{h.ctx.Keys.Back} }
func (h *View) FullHelp() [][]key.Binding { return h.of.FullHelp() }
