package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/request"
)

// fieldForm asks for a few values (a MachineSet's image, a BYOH host's address) and answers with a
// formResultMsg carrying the request they build. enter moves to the next field and, on the last, submits;
// values the request cannot be built from are named in the form, which stays open; esc cancels.
type fieldForm struct {
	ctx           *ProgramContext
	width, height int
	title, intro  string
	labels        []string
	inputs        []textinput.Model
	focus         int
	build         func(values []string) (request.Request, error)
	problem       string
	// answer is the message the form answers with; nil = a formResultMsg, which the root runs. A view that
	// opens a form for itself (the guided setup) sets its own.
	answer func(req request.Request, ok bool) tea.Msg
}

// formField is one line of a fieldForm: its label, its starting value and what it says when empty.
type formField struct{ label, value, placeholder string }

func newFieldForm(ctx *ProgramContext, title, intro string, fields []formField, build func([]string) (request.Request, error)) *fieldForm {
	f := &fieldForm{ctx: ctx, title: title, intro: intro, build: build}
	for _, fd := range fields {
		ti := newFilterInput(&ctx.Styles)
		ti.Prompt, ti.Placeholder = "", fd.placeholder
		ti.SetValue(fd.value)
		f.labels = append(f.labels, fd.label)
		f.inputs = append(f.inputs, ti)
	}
	return f
}

func (f *fieldForm) Init() tea.Cmd    { return f.inputs[0].Focus() }
func (f *fieldForm) SetSize(w, h int) { f.width, f.height = w, h }
func (f *fieldForm) modal()           {}

var fieldFormKeys = []key.Binding{
	key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab/↓", "next field")),
	key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next / done")),
	key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
}

func (f *fieldForm) ShortHelp() []key.Binding  { return fieldFormKeys }
func (f *fieldForm) FullHelp() [][]key.Binding { return [][]key.Binding{fieldFormKeys} }

func (f *fieldForm) Update(msg tea.Msg) (Component, tea.Cmd) {
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

func (f *fieldForm) moveFocus(d int) tea.Cmd {
	f.inputs[f.focus].Blur()
	f.focus = (f.focus + d + len(f.inputs)) % len(f.inputs)
	return f.inputs[f.focus].Focus()
}

// submit builds the request, or keeps the form open saying what is wrong.
func (f *fieldForm) submit() (Component, tea.Cmd) {
	values := make([]string, len(f.inputs))
	for i, in := range f.inputs {
		values[i] = in.Value()
	}
	req, err := f.build(values)
	if err != nil {
		f.problem = err.Error()
		return f, nil
	}
	return nil, f.reply(req, true)
}

func (f *fieldForm) reply(req request.Request, ok bool) tea.Cmd {
	if f.answer != nil {
		msg := f.answer(req, ok)
		return func() tea.Msg { return msg }
	}
	return func() tea.Msg { return formResultMsg{Confirmed: ok, Request: req} }
}

func (f *fieldForm) View() string { return placeInBox(f.box(), f.width, f.height) }

func (f *fieldForm) box() string {
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
