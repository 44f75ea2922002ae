package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/view"
)

// drainForm is the confirmation dialog of reboot and drain: it shows the drain options, lets the user change
// them, and answers with a view.FormResult. Turning eviction off (which ignores PodDisruptionBudgets) asks
// once more before the action starts.
type drainForm struct {
	ctx     *view.ProgramContext
	width   int
	height  int
	nodes   []string                                   // the nodes the drain is for, whose plan is shown
	plan    drainPlanState                             // what the drain would evict (see drainplan.go)
	opts    request.DrainOptions                       // as the form shows them
	build   func(request.DrainOptions) request.Request // the request to run with them
	title   string
	intro   string
	cursor  int // a field, then the Run and Cancel buttons
	warned  bool
	warning string
}

const (
	fieldGrace = iota
	fieldTimeout
	fieldDaemonSets
	fieldEmptyDir
	fieldForce
	fieldDisableEviction
	buttonRun
	buttonCancel
)

func newDrainForm(ctx *view.ProgramContext, nodes []string, build func(request.DrainOptions) request.Request, title, intro string) *drainForm {
	// The cursor starts on Run: the defaults are the documented procedure, so enter confirms at once.
	return &drainForm{ctx: ctx, nodes: nodes, opts: request.DefaultDrainOptions(), build: build, title: title, intro: intro, cursor: buttonRun}
}

func (f *drainForm) Init() tea.Cmd    { return f.loadPlan() }
func (f *drainForm) SetSize(w, h int) { f.width, f.height = w, h }

// Update answers with a view.FormResult and leaves the stack at once, so a second enter cannot start the
// action twice.
func (f *drainForm) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	if p, ok := msg.(drainPlanMsg); ok {
		f.takePlan(p)
		return f, nil
	}
	key, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return f, nil
	}
	done, cmd := f.update(key)
	if done {
		return nil, cmd
	}
	return f, cmd
}

func (f *drainForm) View() string { return layout.PlaceInBox(f.Box(), f.width, f.height) }
func (f *drainForm) Box() string  { return f.view(&f.ctx.Styles, f.width) }

// formKeys are the form's keys, for the help line.
var formKeys = []key.Binding{
	key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "move")),
	key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "toggle")),
	key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←/→", "change")),
	key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
	key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
}

func (f *drainForm) ShortHelp() []key.Binding  { return formKeys }
func (f *drainForm) FullHelp() [][]key.Binding { return [][]key.Binding{formKeys} }

func (f *drainForm) update(msg tea.KeyPressMsg) (done bool, cmd tea.Cmd) {
	d := &f.opts
	switch msg.String() {
	case "up", "k", "shift+tab":
		f.cursor = max(0, f.cursor-1)
	case "down", "j", "tab":
		f.cursor = min(buttonCancel, f.cursor+1)
	case "left", "-":
		f.adjust(-1)
	case "right", "+":
		f.adjust(1)
	case "space":
		return false, f.toggle(d)
	case "enter":
		return f.enter(d)
	case "esc", "q", "ctrl+c":
		return true, f.answer(false)
	}
	return false, nil
}

func (f *drainForm) enter(d *request.DrainOptions) (bool, tea.Cmd) {
	switch f.cursor {
	case buttonCancel:
		return true, f.answer(false)
	case buttonRun:
		if d.DisableEviction && !f.warned {
			f.warned = true
			f.warning = "Eviction off DELETES pods without honouring PodDisruptionBudgets. Press enter on Run again to confirm."
			return false, nil
		}
		return true, f.answer(true)
	}
	return false, f.toggle(d)
}

// toggle flips the option under the cursor; the three that change which pods the drain takes read the
// plan again.
func (f *drainForm) toggle(d *request.DrainOptions) tea.Cmd {
	switch f.cursor {
	case fieldDaemonSets:
		d.IgnoreDaemonSets = !d.IgnoreDaemonSets
	case fieldEmptyDir:
		d.DeleteEmptyDirData = !d.DeleteEmptyDirData
	case fieldForce:
		d.Force = !d.Force
	case fieldDisableEviction:
		d.DisableEviction = !d.DisableEviction
		f.warned, f.warning = false, ""
		return nil
	default:
		return nil
	}
	return f.loadPlan()
}

// adjust changes the numeric fields in sensible steps: 5 s of grace, 1 minute of timeout.
func (f *drainForm) adjust(dir int) {
	d := &f.opts
	switch f.cursor {
	case fieldGrace:
		d.GracePeriodSeconds = max(-1, d.GracePeriodSeconds+5*dir)
		if d.GracePeriodSeconds == 4 { // stepping up from -1 lands on 0, then 5, 10, ...
			d.GracePeriodSeconds = 0
		}
	case fieldTimeout:
		d.Timeout = max(time.Minute, d.Timeout+time.Duration(dir)*time.Minute)
	}
}

func (f *drainForm) answer(ok bool) tea.Cmd {
	msg := view.FormResult{Confirmed: ok, Request: f.build(f.opts)}
	return func() tea.Msg { return msg }
}

// view draws the dialog; when it would not fit the height (80×24 with a plan), a compact form drops the
// padding, the key hint the footer already shows, and details the plan down to a line per node, so Run
// and Cancel stay on screen.
func (f *drainForm) view(st *styles.Styles, w int) string {
	full := f.render(st, w, false)
	if f.height > 0 && lipgloss.Height(full) > f.height {
		return f.render(st, w, true)
	}
	return full
}

func (f *drainForm) render(st *styles.Styles, w int, compact bool) string {
	d := f.opts
	grace := "pod's own"
	if d.GracePeriodSeconds >= 0 {
		grace = fmt.Sprintf("%ds", d.GracePeriodSeconds)
	}
	rows := []string{
		"grace period        ‹ " + grace + " ›",
		"timeout             ‹ " + d.Timeout.String() + " ›",
		check(d.IgnoreDaemonSets) + " ignore DaemonSets",
		check(d.DeleteEmptyDirData) + " delete emptyDir data",
		check(d.Force) + " force (pods without a controller)",
		check(d.DisableEviction) + " disable eviction (delete pods; ignores PodDisruptionBudgets)",
		"[ Run ]",
		"[ Cancel ]",
	}
	for i := range rows {
		if i == f.cursor {
			rows[i] = st.Selected.Render("▶ " + rows[i])
		} else {
			rows[i] = "  " + rows[i]
		}
	}
	plan, gap, pad := f.planLines(st), "\n\n", 1
	if compact {
		plan, gap, pad = f.compactPlanLines(st), "\n", 0
	}
	body := f.intro
	if len(plan) > 0 {
		body += gap + strings.Join(plan, "\n")
	}
	body += gap + strings.Join(rows, "\n")
	if f.warning != "" {
		body += gap + st.Bad.Render(f.warning)
	}
	if !compact {
		body += gap + st.Muted.Render("↑/↓ move · space toggle · ←/→ change · enter run · esc cancel")
	}
	return st.PanelBorder.Padding(pad, 2).Width(min(w, 84)).Render(st.DetailTitle.Render(f.title) + gap + body)
}

func check(on bool) string {
	if on {
		return "[x]"
	}
	return "[ ]"
}
