package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/actions/event"
)

// questionDialog asks the user a running action's question (a PodDisruptionBudget blocks a drain) and sends
// the answer back to the action. A choice with Confirm text is asked a second time before it is sent.
type questionDialog struct {
	ctx        *ProgramContext
	width      int
	height     int
	q          event.Question
	reply      chan<- string
	cursor     int
	confirming *event.Choice
}

func newQuestionDialog(ctx *ProgramContext, q event.Question, reply chan<- string) *questionDialog {
	return &questionDialog{ctx: ctx, q: q, reply: reply}
}

func (d *questionDialog) Init() tea.Cmd    { return nil }
func (d *questionDialog) SetSize(w, h int) { d.width, d.height = w, h }
func (d *questionDialog) modal()           {}

// Update sends the answer and leaves the stack; until then it takes every key (ctrl+c too: the action
// waits for an answer, and esc gives the safe one).
func (d *questionDialog) Update(msg tea.Msg) (Component, tea.Cmd) {
	if key, ok := msg.(tea.KeyPressMsg); ok && d.update(key) {
		return nil, nil
	}
	return d, nil
}

func (d *questionDialog) View() string { return placeInBox(d.box(), d.width, d.height) }
func (d *questionDialog) box() string  { return d.view(&d.ctx.Styles, d.width) }

var (
	questionKeys = []key.Binding{
		key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←/→", "choose")),
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "answer")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "safe choice")),
	}
	confirmKeys = []key.Binding{
		key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "confirm")),
		key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n", "go back")),
	}
)

func (d *questionDialog) ShortHelp() []key.Binding {
	if d.confirming != nil {
		return confirmKeys
	}
	return questionKeys
}

func (d *questionDialog) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }

func (d *questionDialog) update(msg tea.KeyPressMsg) (done bool) {
	if d.confirming != nil {
		return d.updateConfirm(msg)
	}
	switch msg.String() {
	case "left", "up", "shift+tab", "h", "k":
		d.cursor = max(0, d.cursor-1)
	case "right", "down", "tab", "l", "j":
		d.cursor = min(len(d.q.Choices)-1, d.cursor+1)
	case "esc":
		d.send(d.q.SafeChoice().Key)
		return true
	case "enter":
		c := d.q.Choices[d.cursor]
		if c.Confirm != "" {
			d.confirming = &c
			return false
		}
		d.send(c.Key)
		return true
	}
	return false
}

// updateConfirm is the second question of a dangerous choice: only "y" takes it.
func (d *questionDialog) updateConfirm(msg tea.KeyPressMsg) bool {
	switch msg.String() {
	case "y", "Y":
		d.send(d.confirming.Key)
		return true
	case "n", "N", "esc", "enter":
		d.confirming = nil
	}
	return false
}

func (d *questionDialog) send(key string) {
	select {
	case d.reply <- key:
	default: // the action was cancelled and no longer listens
	}
}

// view draws the question; when it would not fit the height left above the action panel (80×24), a
// compact form drops the padding, the blank lines and the key hint the footer shows, and then the details,
// so every choice stays on screen.
func (d *questionDialog) view(st *Styles, w int) string {
	out := d.render(st, w, false, true)
	for _, details := range []bool{true, false} {
		if d.height <= 0 || lipgloss.Height(out) <= d.height {
			break
		}
		out = d.render(st, w, true, details)
	}
	return out
}

func (d *questionDialog) render(st *Styles, w int, compact, details bool) string {
	title := d.q.Title
	if d.q.Target != "" {
		title = d.q.Target + ": " + title
	}
	gap, pad := "\n\n", 1
	if compact {
		gap, pad = "\n", 0
	}
	var parts []string
	if details && len(d.q.Detail) > 0 {
		parts = append(parts, strings.Join(d.q.Detail, "\n"))
	}
	box := st.PanelBorder.Padding(pad, 2).Width(min(w, 84))
	if d.confirming != nil {
		parts = append(parts, st.Bad.Render(d.confirming.Confirm), "y confirm · n go back")
	} else {
		inner := box.GetWidth() - box.GetHorizontalFrameSize()
		parts = append(parts, d.buttons(st, inner))
		if !compact {
			parts = append(parts, st.Muted.Render("←/→ choose · enter answer · esc "+d.q.SafeChoice().Label))
		}
	}
	return box.Render(st.DetailTitle.Render(title) + gap + strings.Join(parts, gap))
}

// buttons lays the choices out in a row, or one per line when the row would not fit: a label is never
// broken in the middle.
func (d *questionDialog) buttons(st *Styles, width int) string {
	labels := make([]string, len(d.q.Choices))
	for i, c := range d.q.Choices {
		labels[i] = "[ " + c.Label + " ]"
	}
	sep := "  "
	if lipgloss.Width(strings.Join(labels, sep)) > width {
		sep = "\n"
	}
	for i := range labels {
		if i == d.cursor {
			labels[i] = st.Selected.Render(labels[i])
		}
	}
	return strings.Join(labels, sep)
}
