package dialog

import (
	"strings"

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
	build         func(values []string) (request.Request, error)
	problem       string
	// Answer is the message the form answers with; nil = a view.FormResult, which the root runs. A view that
	// opens a form for itself (the guided setup) sets its own.
	Answer func(req request.Request, ok bool) tea.Msg
}

// Field is one line of a FieldForm: its label, its starting value and what it says when empty.
type Field struct{ Label, Value, Placeholder string }

func NewFieldForm(ctx *view.ProgramContext, title, intro string, fields []Field, build func([]string) (request.Request, error)) *FieldForm {
	f := &FieldForm{ctx: ctx, title: title, intro: intro, build: build}
	for _, fd := range fields {
		ti := NewTextInput(&ctx.Styles)
		ti.Prompt, ti.Placeholder = "", fd.Placeholder
		ti.SetValue(fd.Value)
		f.labels = append(f.labels, fd.Label)
		f.inputs = append(f.inputs, ti)
	}
	return f
}

func (f *FieldForm) Init() tea.Cmd    { return f.inputs[0].Focus() }
func (f *FieldForm) SetSize(w, h int) { f.width, f.height = w, h }

var FieldFormKeys = []key.Binding{
	key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab/↓", "next field")),
	key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next / done")),
	key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
}

func (f *FieldForm) ShortHelp() []key.Binding  { return FieldFormKeys }
func (f *FieldForm) FullHelp() [][]key.Binding { return [][]key.Binding{FieldFormKeys} }

func (f *FieldForm) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
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
	f.problem = ""
	return f, cmd
}

func (f *FieldForm) moveFocus(d int) tea.Cmd {
	f.inputs[f.focus].Blur()
	f.focus = (f.focus + d + len(f.inputs)) % len(f.inputs)
	return f.inputs[f.focus].Focus()
}

// submit builds the request, or keeps the form open saying what is wrong.
func (f *FieldForm) submit() (view.Component, tea.Cmd) {
	values := make([]string, len(f.inputs))
	for i, in := range f.inputs {
		values[i] = in.Value()
	}
	req, err := f.Build(values)
	if err != nil {
		f.problem = err.Error()
		return f, nil
	}
	return nil, f.reply(req, true)
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

func (f *FieldForm) Box() string {
	st := &f.ctx.Styles
	w := 0
	for _, l := range f.labels {
		w = max(w, len(l))
	}
	var b strings.Builder
	b.WriteString(st.DetailTitle.Render(f.title) + "\n\n")
	if f.intro != "" {
		b.WriteString(f.intro + "\n\n")
	}
	for i, l := range f.labels {
		cursor := "  "
		if i == f.focus {
			cursor = f.ctx.Marks.Cursor + " "
		}
		b.WriteString(cursor + st.Muted.Render(l+strings.Repeat(" ", w-len(l))) + "  " + f.inputs[i].View() + "\n")
	}
	if f.problem != "" {
		b.WriteString("\n" + st.Bad.Render(f.problem) + "\n")
	}
	b.WriteString("\n" + st.Muted.Render("enter next / done · tab next field · esc cancel"))
	return st.PanelBorder.Padding(1, 2).Width(min(f.width, 84)).Render(b.String())
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
