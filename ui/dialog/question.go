package dialog

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/view"
)

// Question asks the user a running action's question (a PodDisruptionBudget blocks a drain) and sends
// the answer back to the action. A choice with Confirm text is asked a second time before it is sent.
type Question struct {
	ctx        *view.ProgramContext
	width      int
	height     int
	q          event.Question
	reply      chan<- string
	cursor     int
	confirming *event.Choice
}

func NewQuestion(ctx *view.ProgramContext, q event.Question, reply chan<- string) *Question {
	return &Question{ctx: ctx, q: q, reply: reply}
}

func (d *Question) Init() tea.Cmd    { return nil }
func (d *Question) SetSize(w, h int) { d.width, d.height = w, h }

// Update sends the answer and leaves the stack; until then it takes every key (ctrl+c too: the action
// waits for an answer, and esc gives the safe one).
func (d *Question) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	if key, ok := msg.(tea.KeyPressMsg); ok && d.update(key) {
		return nil, nil
	}
	return d, nil
}

func (d *Question) View() string { return layout.PlaceInBox(d.Box(), d.width, d.height) }
func (d *Question) Box() string  { return d.view(&d.ctx.Styles, d.width) }

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

func (d *Question) ShortHelp() []key.Binding {
	if d.confirming != nil {
		return confirmKeys
	}
	return questionKeys
}

func (d *Question) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }

func (d *Question) update(msg tea.KeyPressMsg) (done bool) {
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
func (d *Question) updateConfirm(msg tea.KeyPressMsg) bool {
	switch msg.String() {
	case "y", "Y":
		d.send(d.confirming.Key)
		return true
	case "n", "N", "esc", "enter":
		d.confirming = nil
	}
	return false
}

func (d *Question) send(key string) {
	select {
	case d.reply <- key:
	default: // the action was cancelled and no longer listens
	}
}

// view draws the question; when it would not fit the height left above the action panel (80×24), a
// compact form drops the padding, the blank lines and the key hint the footer shows, and then the details,
// so every choice stays on screen.
func (d *Question) view(st *styles.Styles, w int) string {
	out := d.render(st, w, false, true)
	for _, details := range []bool{true, false} {
		if d.height <= 0 || lipgloss.Height(out) <= d.height {
			break
		}
		out = d.render(st, w, true, details)
	}
	return out
}

func (d *Question) render(st *styles.Styles, w int, compact, details bool) string {
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
func (d *Question) buttons(st *styles.Styles, width int) string {
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
