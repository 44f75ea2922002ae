package dialog

import (
	"context"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/view"
)

// FieldForm asks for a few values (a MachineSet's image, a BYOH host's address) and answers with a
// view.FormResult carrying the request they build. enter moves to the next field and, on the last, submits;
// values the request cannot be built from are named in the form, which stays open; esc cancels.
type FieldForm struct {
	ctx           *view.ProgramContext
	width, height int
	title, intro  string
	labels        []string
	inputs        []textinput.Model
	focus         int
	hints         []string
	build         func(values []string) (request.Request, error)
	problem       string
	problemAt     int  // the field the problem is about, or -1: said below the fields
	checking      bool // Check runs: the form waits for its answer
	// Check, when set, tries a request the values built before the form answers (the cluster decides what
	// it accepts, e.g. a MachineSet's preview); what it refuses keeps the form open, said next to its field.
	Check func(ctx context.Context, req request.Request) error
	// Answer is the message the form answers with; nil = a view.FormResult, which the root runs. A view that
	// opens a form for itself (the guided setup) sets its own.
	Answer func(req request.Request, ok bool) tea.Msg
}

// Field is one line of a FieldForm: its label, its starting value and what it says when empty.
type Field struct{ Label, Value, Placeholder string }

func NewFieldForm(ctx *view.ProgramContext, title, intro string, fields []Field, build func([]string) (request.Request, error)) *FieldForm {
	f := &FieldForm{ctx: ctx, title: title, intro: intro, build: build, problemAt: -1}
	for _, fd := range fields {
		ti := NewTextInput(&ctx.Styles)
		// The hint is drawn by the form, whole: the input would cut its placeholder to the input's width.
		ti.Prompt, ti.Placeholder = "", ""
		ti.SetValue(fd.Value)
		f.labels = append(f.labels, fd.Label)
		f.hints = append(f.hints, fd.Placeholder)
		f.inputs = append(f.inputs, ti)
	}
	return f
}

// checkedMsg is Check's answer for form.
type checkedMsg struct {
	form *FieldForm
	req  request.Request
	err  error
}

// checkTimeout bounds Check: the form waits for it.
const checkTimeout = 30 * time.Second

func (f *FieldForm) Init() tea.Cmd { return f.inputs[0].Focus() }

func (f *FieldForm) SetSize(w, h int) { f.width, f.height = w, h }

var FieldFormKeys = []key.Binding{
	key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab/↓", "next field")),
	key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next / done")),
	key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
}

func (f *FieldForm) ShortHelp() []key.Binding  { return FieldFormKeys }
func (f *FieldForm) FullHelp() [][]key.Binding { return [][]key.Binding{FieldFormKeys} }

func (f *FieldForm) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	if c, ok := msg.(checkedMsg); ok && c.form == f {
		f.checking = false
		if c.err != nil {
			f.setProblem(c.err)
			return f, f.moveFocus(f.problemAt - f.focus)
		}
		return nil, f.reply(c.req, true)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || f.checking {
		if ok && k.String() == "esc" {
			return nil, f.reply(nil, false)
		}
		return f, nil
	}
	switch k.String() {
	case "esc", "ctrl+c":
		return nil, f.reply(nil, false)
	case "tab", "down":
		return f, f.moveFocus(1)
	case "shift+tab", "up":
		return f, f.moveFocus(-1)
	case "enter":
		if f.focus < len(f.inputs)-1 {
			return f, f.moveFocus(1)
		}
		return f.submit()
	}
	var cmd tea.Cmd
	f.inputs[f.focus], cmd = f.inputs[f.focus].Update(msg)
	f.problem, f.problemAt = "", -1
	return f, cmd
}

func (f *FieldForm) moveFocus(d int) tea.Cmd {
	f.inputs[f.focus].Blur()
	f.focus = (f.focus + d + len(f.inputs)) % len(f.inputs)
	return f.inputs[f.focus].Focus()
}

// setProblem records what is wrong and the field it names, if any: a field is named by its label
// ("replicas \"x\": …") or by the flag headless takes it as ("--image is required on AWS: …").
func (f *FieldForm) setProblem(err error) {
	f.problem, f.problemAt = err.Error(), -1
	for i, l := range f.labels {
		flag := "--" + strings.ReplaceAll(l, " ", "-")
		if strings.HasPrefix(f.problem, l+" ") || strings.Contains(f.problem, flag+" ") || strings.HasSuffix(f.problem, flag) {
			f.problemAt = i
			return
		}
	}
}

// submit builds the request, or keeps the form open saying what is wrong.
func (f *FieldForm) submit() (view.Component, tea.Cmd) {
	values := make([]string, len(f.inputs))
	for i, in := range f.inputs {
		values[i] = in.Value()
	}
	req, err := f.Build(values)
	if err != nil {
		f.setProblem(err)
		if f.problemAt >= 0 {
			return f, f.moveFocus(f.problemAt - f.focus)
		}
		return f, nil
	}
	if f.Check == nil {
		return nil, f.reply(req, true)
	}
	f.checking, f.problem, f.problemAt = true, "", -1
	check := f.Check
	return f, func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
		defer cancel()
		return checkedMsg{form: f, req: req, err: check(ctx, req)}
	}
}

// Build is the request the values make, or what is wrong with them (as the form would say it).
func (f *FieldForm) Build(values []string) (request.Request, error) { return f.build(values) }

func (f *FieldForm) reply(req request.Request, ok bool) tea.Cmd {
	if f.Answer != nil {
		msg := f.Answer(req, ok)
		return func() tea.Msg { return msg }
	}
	return func() tea.Msg { return view.FormResult{Confirmed: ok, Request: req} }
}

func (f *FieldForm) View() string { return layout.PlaceInBox(f.Box(), f.width, f.height) }

// boxWidth is the form's width on the screen; its text is narrower by the border and padding.
func (f *FieldForm) boxWidth() int  { return min(f.width, 84) }
func (f *FieldForm) textWidth() int { return max(20, f.boxWidth()-6) }

func (f *FieldForm) labelWidth() int {
	w := 0
	for _, l := range f.labels {
		w = max(w, layout.TextWidth(l))
	}
	return w
}

// valueWidth is the column a field's value and hint take, right of the cursor and the labels.
func (f *FieldForm) valueWidth() int { return max(10, f.textWidth()-f.labelWidth()-4) }

// Box draws the fields, each with its hint: an empty field shows it in its value's place (cut to the
// column when it is not focused), and the focused field shows it whole, wrapped below it when it does not
// fit there. What is wrong is said below the field it names.
func (f *FieldForm) Box() string {
	st := &f.ctx.Styles
	lw, vw := f.labelWidth(), f.valueWidth()
	indent := strings.Repeat(" ", lw+4)
	under := func(style lipgloss.Style, text string) []string {
		var out []string
		for _, l := range layout.Wrap([]string{text}, vw) {
			out = append(out, indent+style.Render(l))
		}
		return out
	}
	lines := []string{st.DetailTitle.Render(f.title), ""}
	if f.intro != "" {
		lines = append(append(lines, layout.Wrap([]string{f.intro}, f.textWidth())...), "")
	}
	for i, l := range f.labels {
		cursor := "  "
		if i == f.focus {
			cursor = f.ctx.Marks.Cursor + " "
		}
		value, hint := f.inputs[i].View(), f.hints[i]
		empty := f.inputs[i].Value() == ""
		switch {
		case hint == "":
		case empty && i != f.focus:
			value = st.Muted.Render(layout.Truncate(hint, vw, "…"))
		case empty && layout.TextWidth(hint) < vw:
			value += st.Muted.Render(hint)
			hint = ""
		case i != f.focus:
			hint = ""
		}
		lines = append(lines, cursor+st.Muted.Render(layout.PadRight(l, lw))+"  "+value)
		if i == f.focus && hint != "" {
			lines = append(lines, under(st.Muted, hint)...)
		}
		if i == f.problemAt {
			lines = append(lines, under(st.Bad, f.problem)...)
		}
	}
	switch {
	case f.checking:
		lines = append(lines, "", st.Muted.Render("checking with the cluster…"))
	case f.problem != "" && f.problemAt < 0:
		lines = append(append(lines, ""), st.Bad.Render(strings.Join(layout.Wrap([]string{f.problem}, f.textWidth()), "\n")))
	}
	pad := 1
	if len(lines)+4 > f.height { // a short terminal keeps every line of the form rather than its margins
		pad = 0
	}
	return st.PanelBorder.Padding(pad, 2).Width(f.boxWidth()).Render(strings.Join(lines, "\n"))
}

// NewTextInput is a one-line text input in the console's styles: no blinking cursor (it would redraw on a
// timer), and no colours without them. The list's filter prompt is one.
func NewTextInput(st *styles.Styles) textinput.Model {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "type to filter"
	ts := textinput.DefaultDarkStyles()
	ts.Cursor.Blink = false // a blinking cursor would redraw on a timer
	if st.NoColor {
		plain := textinput.StyleState{Text: lipgloss.NewStyle(), Prompt: lipgloss.NewStyle(),
			Placeholder: lipgloss.NewStyle(), Suggestion: lipgloss.NewStyle()}
		ts.Focused, ts.Blurred = plain, plain
	}
	ti.SetStyles(ts)
	return ti
}
