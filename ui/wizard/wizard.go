// Package wizard is the console's guided setup (S): from a cluster with no Windows nodes to a Ready Windows
// node, one step at a time, each previewed before it runs in the action panel.
package wizard

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup/steps"
	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/view"
)

// The guided setup: from a cluster with no Windows nodes to a Ready Windows node, selected in the Nodes
// pane. Seven steps (steps.All): check, operator, key, machines, configure / follow, workloads,
// done. The wizard learns where the setup stands from request.SetupDetect, which reads only the cluster,
// so reopening it (after a quit, a crash or a day) starts at the first step not done. Every step shows
// what it will do (the preview's plan: summary, YAML, commands) before it does it, and can be confirmed,
// skipped or gone back to. What a step changes runs in the action panel, where esc twice cancels it and
// the action says in which state it left things.

// Key opens the guided setup.
var Key = binding.New("S", "guided setup", "S")

// Launcher opens the wizard with Key where it is Available.
var Launcher = view.Launcher{
	Key:       Key,
	Available: Available,
	Open:      func(ctx *view.ProgramContext, _ view.Selection) view.Component { return newWizardView(ctx) },
}

// Available: the wizard changes the cluster, so it needs a runner and a console that may write.
func Available(ctx *view.ProgramContext) bool { return ctx.CanChange() }

type wizardPhase int

const (
	wizDetecting  wizardPhase = iota // reading where the setup stands
	wizChoose                        // the step's state and its choices
	wizForm                          // a form the wizard opened asks for what only the user knows
	wizPreviewing                    // the chosen way's preview runs
	wizPlan                          // the plan is shown: confirm, skip or back
	wizRunning                       // the step's action runs in the panel
)

// wizardChoice is one way to take a step.
type wizardChoice struct {
	label string
	about string // one sentence on what it means
	pick  func(w *wizardView) tea.Cmd
}

// wizardView is the guided setup on the view stack.
type wizardView struct {
	ctx           *view.ProgramContext
	width, height int
	runCtx        context.Context // the reads' context, cancelled when the wizard closes
	stop          context.CancelFunc
	seq           uint64 // numbers the reads, so a stale answer is dropped

	setup     *event.Setup // the last detection; nil before the first
	detectErr string
	warnings  []string // the doctor's warnings, shown on the Check step
	acked     bool     // the warnings were acknowledged
	opened    bool     // the first detection placed the wizard
	closed    bool

	standalone bool // chose standalone mode (nothing in the cluster records it)
	smokeDone  bool // the smoke test passed in this session (it leaves nothing behind to detect)
	files      []string
	payload    string // the payload the standalone hosts get (a directory or an image), as last given
	node       string // the new Ready Windows node, once there is one

	step    int // index in steps.All
	phase   wizardPhase
	choices []wizardChoice
	cursor  int
	scroll  int // first line of the step's text shown (long plans scroll)

	plan    *event.Plan     // the preview being confirmed
	notes   []string        // what the preview's other reads found
	pending request.Request // what confirming runs
	problem string          // why the last preview or run did not get the step done
	last    string          // how the step's last run ended
}

func newWizardView(ctx *view.ProgramContext) *wizardView {
	runCtx, stop := context.WithCancel(context.Background())
	return &wizardView{ctx: ctx, runCtx: runCtx, stop: stop}
}

func (w *wizardView) Init() tea.Cmd     { return w.detect() }
func (w *wizardView) SetSize(wd, h int) { w.width, w.height = wd, h }
func (w *wizardView) EscCancelsAction() {}

func (w *wizardView) stepID() event.SetupStepID { return steps.All[w.step].ID }

var (
	wizardChooseKeys = []key.Binding{
		binding.New("↑/↓", "choose", "up", "down"),
		binding.New("enter", "take it", "enter"),
		binding.New("s", "skip step", "s"),
		binding.New("b", "back a step", "b"),
		binding.New("g", "detect again", "g"),
		binding.New("esc", "close", "esc"),
	}
	wizardPlanKeys = []key.Binding{
		binding.New("enter/y", "do it", "enter", "y"),
		binding.New("n", "other choices", "n"),
		binding.New("↑/↓", "scroll", "up", "down"),
		binding.New("s", "skip step", "s"),
		binding.New("b", "back a step", "b"),
		binding.New("esc", "close", "esc"),
	}
	wizardRunKeys = []key.Binding{binding.New("esc esc", "cancel the step", "esc")}
)

func (w *wizardView) ShortHelp() []key.Binding {
	switch w.phase {
	case wizPlan:
		return wizardPlanKeys
	case wizRunning:
		return wizardRunKeys
	}
	return wizardChooseKeys
}

func (w *wizardView) FullHelp() [][]key.Binding { return [][]key.Binding{w.ShortHelp()} }

func (w *wizardView) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case wizardDetectedMsg:
		if msg.owner == w && msg.seq == w.seq {
			return w, w.detected(msg)
		}
	case wizardPreviewMsg:
		if msg.owner == w && msg.seq == w.seq {
			w.previewed(msg)
		}
	case wizardFormMsg:
		if msg.owner == w {
			return w, w.formAnswered(msg)
		}
	case view.ActionFinished:
		if w.phase == wizRunning && w.pending != nil && reflect.DeepEqual(msg.Req, w.pending) {
			return w, w.ran(msg)
		}
	case tea.KeyPressMsg:
		return w.key(msg)
	}
	return w, nil
}

// key handles the wizard's keys; esc closes it (saying where the setup stands), unless a step runs.
func (w *wizardView) key(msg tea.KeyPressMsg) (view.Component, tea.Cmd) {
	k := msg.String()
	switch {
	case w.phase == wizRunning:
		return w, nil // the panel has the keys that matter: esc twice cancels the step
	case w.phase != wizChoose && w.phase != wizPlan && k != "esc":
		return w, nil // a read or a form is on its way: keys typed ahead must not skip steps
	}
	switch k {
	case "esc", "q":
		w.closed = true
		return w.close(nil)
	case "b", "left":
		if w.step > 0 {
			w.show(w.step - 1)
		}
		return w, nil
	case "s":
		return w, w.skip()
	case "g":
		w.phase = wizDetecting
		return w, w.detect()
	case "up", "k":
		return w, w.move(-1)
	case "down", "j":
		return w, w.move(1)
	}
	switch w.phase {
	case wizChoose:
		if k == "enter" && w.cursor < len(w.choices) {
			w.problem, w.last = "", ""
			return w.close(w.choices[w.cursor].pick(w))
		}
	case wizPlan:
		switch k {
		case "enter", "y":
			return w, w.confirm()
		case "n":
			w.show(w.step)
		}
	}
	return w, nil
}

func (w *wizardView) move(d int) tea.Cmd {
	if w.phase == wizChoose && len(w.choices) > 0 {
		w.cursor = max(0, min(len(w.choices)-1, w.cursor+d))
		return nil
	}
	w.scroll = max(0, w.scroll+d)
	return nil
}

// skip goes to the next step, except past a Check that blocks: what fails there would fail every later step.
func (w *wizardView) skip() tea.Cmd {
	if w.stepID() == event.SetupCheck && w.setup != nil && w.setup.Step(event.SetupCheck).Blocking != "" {
		w.problem = "the setup cannot go on while a prerequisite fails: fix it, then g checks again"
		return nil
	}
	if w.step < len(steps.All)-1 {
		w.show(w.step + 1)
	}
	return w.onDone()
}

// close leaves the stack when the wizard was closed (esc, or the last choice of Done), telling the root
// where the setup stands.
func (w *wizardView) close(cmd tea.Cmd) (view.Component, tea.Cmd) {
	if !w.closed {
		return w, cmd
	}
	w.stop()
	return nil, tea.Batch(cmd, w.closing())
}

// closing is what the root is told when the wizard closes: where the setup stands.
func (w *wizardView) closing() tea.Cmd {
	text := "guided setup closed"
	if w.setup != nil {
		next := w.setup.Next
		if next == event.SetupDone {
			text += ": every step is done"
		} else {
			text += fmt.Sprintf("; next: %s — %s resumes there", w.setup.Step(next).Title, Key.Help().Key)
		}
	}
	return func() tea.Msg { return view.Status{Text: text} }
}

// detected places the wizard after a detection: at the first step not done when it opens, or, after a
// step ran, at the next step not done after it (a step skipped earlier stays skipped).
func (w *wizardView) detected(msg wizardDetectedMsg) tea.Cmd {
	w.warnings = msg.warnings
	if msg.res.setup == nil {
		w.detectErr = cmp.Or(msg.res.failed, "the detection reported nothing")
		w.phase = wizChoose
		w.choices = []wizardChoice{{label: "Detect again", pick: func(w *wizardView) tea.Cmd { w.phase = wizDetecting; return w.detect() }}}
		return nil
	}
	w.detectErr = ""
	w.setup = msg.res.setup
	if w.setup.Mode == event.ModeStandalone {
		w.standalone = true
	}
	w.node = steps.NewNode(*w.setup)
	switch {
	case !w.opened:
		w.opened = true
		w.show(stepIndex(w.setup.Next))
		if len(w.warnings) > 0 && w.setup.Next == event.SetupOperator {
			w.show(0) // a fresh setup: the doctor's warnings first, to be acknowledged
		}
	case w.setup.Step(w.stepID()).Done && w.stepID() != event.SetupWorkloads && w.stepID() != event.SetupDone:
		w.show(w.nextUndone(w.step))
	default:
		w.show(w.step)
	}
	return w.onDone()
}

// onDone selects the new node in the Nodes pane when the wizard reaches Done.
func (w *wizardView) onDone() tea.Cmd {
	if w.stepID() != event.SetupDone || w.node == "" {
		return nil
	}
	node := w.node
	return func() tea.Msg { return view.SelectNode{Node: node} }
}

// nextUndone is the first step after i that is not done (Done when all are).
func (w *wizardView) nextUndone(i int) int {
	for j := i + 1; j < len(steps.All); j++ {
		if !w.setup.Step(steps.All[j].ID).Done {
			return j
		}
	}
	return len(steps.All) - 1
}

func stepIndex(id event.SetupStepID) int {
	for i, s := range steps.IDs() {
		if s == id {
			return i
		}
	}
	return 0
}

// show puts step i on screen with its choices.
func (w *wizardView) show(i int) {
	w.step, w.phase, w.cursor, w.scroll = i, wizChoose, 0, 0
	w.plan, w.notes, w.pending = nil, nil, nil
	w.choices = w.stepChoices()
}

// previewed shows a preview's plan, or why there is none.
func (w *wizardView) previewed(msg wizardPreviewMsg) {
	w.notes = msg.extra
	if !msg.ok {
		w.phase, w.pending = wizChoose, nil
		w.problem = "the preview failed, nothing was changed: " + msg.main.failed
		return
	}
	w.plan = msg.main.plan
	if w.plan == nil {
		w.plan = &event.Plan{Title: w.pending.Title(), Summary: msg.main.lines}
	}
	w.phase, w.scroll = wizPlan, 0
}

// previewThen shows the preview of req and, once confirmed, runs run.
func (w *wizardView) previewThen(req, run request.Request, extra ...probe) tea.Cmd {
	w.phase, w.pending, w.problem = wizPreviewing, run, ""
	return w.preview(req, extra...)
}

// planThen shows a plan the wizard writes itself (for a step with no preview of its own) and, once
// confirmed, runs run.
func (w *wizardView) planThen(p event.Plan, run request.Request) tea.Cmd {
	w.phase, w.pending, w.plan, w.problem, w.scroll = wizPlan, run, &p, "", 0
	return nil
}

// confirm runs the confirmed step in the action panel.
func (w *wizardView) confirm() tea.Cmd {
	if w.pending == nil {
		return nil
	}
	w.phase = wizRunning
	req := w.pending
	return func() tea.Msg { return view.RunAction{Req: req} }
}

// ran is told how the step's action ended; the wizard detects again to see what it changed.
func (w *wizardView) ran(msg view.ActionFinished) tea.Cmd {
	w.last = strings.ToUpper(string(msg.Outcome))
	if msg.Message != "" {
		w.last += " " + msg.Message
	}
	if msg.Outcome != event.Succeeded {
		w.problem = "the step did not finish: " + cmp.Or(msg.Detail, "see the action panel for what happened") +
			" — the panel says in which state it left things; enter tries again"
	}
	switch msg.Req.(type) {
	case request.KeyInstall:
		if r := msg.Req.(request.KeyInstall); r.Generate && msg.Outcome == event.Succeeded {
			w.files = append(w.files, r.Out, r.Out+".pub")
		}
	case request.SmokeTest:
		w.smokeDone = w.smokeDone || msg.Outcome == event.Succeeded
	}
	w.phase = wizDetecting
	return w.detect()
}

// formAnswered takes a form's request to its preview.
func (w *wizardView) formAnswered(msg wizardFormMsg) tea.Cmd {
	w.phase = wizChoose
	if !msg.ok {
		return nil
	}
	switch r := msg.req.(type) {
	case request.MachineSetGenerate:
		preview := r.WithPreview()
		r.Confirmed = true // confirming the preview is the confirmation: the action does not ask again
		return w.previewThen(preview, r)
	case request.BYOHAdd:
		probe := w.answers().Configure(event.SetupHost{Address: r.Address, User: r.User})
		probe.DryRun = true
		return w.previewThen(r.WithPreview(), r, sshProbe(probe))
	case request.Previewer: // the key, a standalone host's configuration
		return w.previewThen(r.WithPreview(), r)
	}
	return nil
}

// openForm opens a form whose answer comes back to the wizard.
func (w *wizardView) openForm(f *dialog.FieldForm) tea.Cmd {
	w.phase = wizForm
	return view.Open(f)
}

// sshProbe tries a BYOH host before it is added: a dry run of wmcon configure reaches it over SSH,
// inspects it and reads what configuring it needs, changing nothing.
func sshProbe(dry request.Configure) probe {
	who := dry.Address + " as " + dry.User
	return probe{req: dry, describe: func(r readResult) string {
		if r.failed != "" {
			return "a dry run of wmcon configure on " + who + " failed (SSH, or what configuring needs next): " + r.failed
		}
		return "SSH to " + who + " works: a dry run of wmcon configure reached and inspected the host (nothing changed)"
	}}
}
