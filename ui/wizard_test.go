package ui

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup/steps"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/view"
	"github.com/wmcon/wmcon/ui/wizard"
)

// wizardRunner plays the guided setup's engine: SetupDetect reports its state, a preview reports a plan,
// and a run records the request and moves the state on as the real step would (or, for the request type
// in block, waits until cancelled and says what it left).
type wizardRunner struct {
	mu    sync.Mutex
	state event.Setup
	ran   []request.Request
	block string // a request's Action whose run waits to be cancelled
	fail  string // a request's Action whose run fails
}

const newNode = "win-byoh-7"

// setupAt is a setup whose steps before next are done, on AWS, in mode ("" = not chosen).
func setupAt(next event.SetupStepID, mode string) event.Setup {
	s := event.Setup{Platform: "AWS", MachineSets: true, Mode: mode}
	done := true
	for _, id := range steps.IDs() {
		if id == next && id != event.SetupDone {
			done = false
		}
		st := event.SetupStep{ID: id, Title: wizardTitles[id], Done: done}
		if done {
			st.Evidence = []string{wizardEvidence[id]}
		} else {
			st.Hint = "run wmcon setup --yes"
		}
		s.Steps = append(s.Steps, st)
	}
	if stepIndex(next) > stepIndex(event.SetupMachines) {
		s.Hosts = []event.SetupHost{{Kind: "byoh", Name: "127.0.0.7", Address: "127.0.0.7", User: "Administrator"}}
	}
	if stepIndex(next) > stepIndex(event.SetupConfigure) {
		s.Hosts[0].Node, s.Hosts[0].Ready = newNode, true
		s.Nodes = []event.SetupNode{{Name: newNode, Ready: true, Build: "10.0.20348", Address: "127.0.0.7"}}
		s.Build = "10.0.20348"
	}
	if stepIndex(next) > stepIndex(event.SetupWorkloads) {
		s.RuntimeClass = "windows-10-0-20348"
	}
	s.Next = next
	return s
}

var (
	wizardTitles = map[event.SetupStepID]string{
		event.SetupCheck: "Check the prerequisites", event.SetupOperator: "Install WMCO, or choose standalone mode",
		event.SetupKey: "The SSH key (cloud-private-key)", event.SetupMachines: "Windows machines: a MachineSet or BYOH hosts",
		event.SetupConfigure: "Follow the operator until a Windows node is Ready", event.SetupWorkloads: "Workloads: a RuntimeClass for the node's Windows build",
		event.SetupDone: "Done",
	}
	wizardEvidence = map[event.SetupStepID]string{
		event.SetupCheck: "31 checks: none blocks the setup (1 warnings)", event.SetupOperator: "CSV windows-machine-config-operator.v11.0.1 Succeeded",
		event.SetupKey: "ssh-ed25519 256 bits SHA256:Vq3kV0mW2j8b4yq5bQ8n1h5Zl6Zt2s0Jx3cJ9m1N4aE", event.SetupMachines: "BYOH host 127.0.0.7 (user Administrator)",
		event.SetupConfigure: "byoh 127.0.0.7: node " + newNode + " Ready", event.SetupWorkloads: "RuntimeClass windows-10-0-20348 sends pods to Windows build 10.0.20348",
		event.SetupDone: "a Windows node is Ready and workloads can be sent to it with RuntimeClass windows-10-0-20348",
	}
)

func (r *wizardRunner) Run(ctx context.Context, req request.Request, sink event.Sink) error {
	rep := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Targets()[0], Now: func() time.Time { return fixedNow }}
	if d, ok := req.(request.SetupDetect); ok {
		r.mu.Lock()
		s := r.state
		if d.Standalone && !s.Step(event.SetupOperator).Done {
			s = r.mark(event.SetupOperator)
			s.Mode = event.ModeStandalone
			r.state = s
		}
		r.mu.Unlock()
		rep.Emit(event.Event{Kind: event.SetupState, Setup: &s})
		rep.Finish(event.Succeeded, "detected", "")
		return nil
	}
	if isPreview(req) {
		rep.Emit(event.Event{Kind: event.PlanShown, Plan: &event.Plan{Title: req.Title(), Summary: []string{"would " + req.Action()},
			YAML: "kind: Example\nmetadata:\n  name: " + req.Action() + "\n", Commands: []string{"wmcon " + req.Action()}}})
		rep.Finish(event.Succeeded, "preview: nothing changed", "")
		return nil
	}
	if c, ok := req.(request.Configure); ok && c.DryRun {
		rep.Log("inspect", "host "+c.Address+" inspected")
		rep.Finish(event.Succeeded, "dry run: nothing was changed", "")
		return nil
	}
	r.mu.Lock()
	r.ran = append(r.ran, req)
	r.mu.Unlock()
	switch req.Action() {
	case r.block:
		rep.Started("work", "working")
		<-ctx.Done()
		rep.Finish(event.Cancelled, "stopped part-way", "the Subscription exists: run wmcon operator install --wait to follow it again")
		return ctx.Err()
	case r.fail:
		rep.Finish(event.Failed, "it broke", "run wmcon doctor")
		return nil
	}
	r.mu.Lock()
	r.advance(req)
	r.mu.Unlock()
	rep.Finish(event.Succeeded, req.Title()+" done", "")
	return nil
}

// isPreview: req has Preview set.
func isPreview(req request.Request) bool {
	f := reflect.ValueOf(req).FieldByName("Preview")
	return f.IsValid() && f.Bool()
}

// advance moves the state on as req would.
func (r *wizardRunner) advance(req request.Request) {
	switch req.(type) {
	case request.OperatorInstall:
		r.state = r.mark(event.SetupOperator)
		r.state.Mode = event.ModeOperator
	case request.KeyInstall:
		r.state = r.mark(event.SetupKey)
	case request.BYOHAdd, request.MachineSetGenerate:
		r.state.Hosts = []event.SetupHost{{Kind: "byoh", Name: "127.0.0.7", Address: "127.0.0.7", User: "Administrator"}}
		r.state = r.mark(event.SetupMachines)
	case request.SetupFollow, request.Configure:
		next := setupAt(event.SetupWorkloads, r.state.Mode)
		r.state.Hosts, r.state.Nodes, r.state.Build = next.Hosts, next.Nodes, next.Build
		r.state = r.mark(event.SetupConfigure)
	case request.RuntimeClassEnsure:
		r.state.RuntimeClass = "windows-10-0-20348"
		r.state = r.mark(event.SetupWorkloads)
	}
}

// mark is the state with step id done, and Done when every step before it is.
func (r *wizardRunner) mark(id event.SetupStepID) event.Setup {
	s := r.state
	s.Steps = append([]event.SetupStep(nil), s.Steps...)
	all := true
	s.Next = event.SetupDone
	for i := range s.Steps {
		if s.Steps[i].ID == id {
			s.Steps[i].Done, s.Steps[i].Hint, s.Steps[i].Evidence = true, "", []string{wizardEvidence[id]}
		}
		if s.Steps[i].ID == event.SetupDone {
			s.Steps[i].Done = all
		}
		all = all && s.Steps[i].Done
		if !s.Steps[i].Done && s.Next == event.SetupDone {
			s.Next = s.Steps[i].ID
		}
	}
	return s
}

func (r *wizardRunner) runs() []request.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request.Request(nil), r.ran...)
}

// freshSnapshot is a cluster with Linux nodes only.
func freshSnapshot() *model.Snapshot {
	s := fixtureSnapshot()
	s.Nodes = linuxNodes()
	s.MachineSets = fixtureMachineSets()[2:]
	return s
}

// wizardModel is the console at w×h on a fresh cluster, with the runner and a doctor that warns.
func wizardModel(runner view.Runner, w, h int) Model {
	opts := testOptions()
	opts.Runner = runner
	opts.Hosts = []string{"127.0.0.7"}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: w, Height: h})
	return update(m, snapshotMsg{freshSnapshot()})
}

// driver delivers a model's commands (batches included) back to it, across calls: a command still
// waiting (an action's next event) is kept for the next drive.
type driver struct{ msgs chan tea.Msg }

var drivers sync.Map // *testing.T → *driver

func driverOf(t *testing.T) *driver {
	d, _ := drivers.LoadOrStore(t, &driver{msgs: make(chan tea.Msg, 256)})
	t.Cleanup(func() { drivers.Delete(t) })
	return d.(*driver)
}

func (d *driver) spawn(c tea.Cmd) {
	if c != nil {
		go func() { d.msgs <- c() }()
	}
}

// drive runs cmd and every command that follows from it through the model until until says so.
func drive(t *testing.T, m Model, cmd tea.Cmd, until func(Model) bool) Model {
	t.Helper()
	d := driverOf(t)
	d.spawn(cmd)
	deadline := time.After(10 * time.Second)
	for !until(m) {
		select {
		case msg := <-d.msgs:
			switch msg := msg.(type) {
			case nil:
			case tea.BatchMsg:
				for _, c := range msg {
					d.spawn(c)
				}
			default:
				next, c := m.Update(msg)
				m = next.(Model)
				d.spawn(c)
			}
		case <-deadline:
			t.Fatalf("the wizard did not get there; screen:\n%s", screen(m))
		}
	}
	return m
}

// keys presses keys one after the other, then drives what they started until settled says so.
func keys(t *testing.T, m Model, settled func(Model) bool, ks ...string) Model {
	t.Helper()
	for i, k := range ks {
		var cmd tea.Cmd
		m, cmd = keyCmd(m, k)
		until := func(Model) bool { return true }
		if i == len(ks)-1 {
			until = settled
		}
		m = drive(t, m, cmd, until)
	}
	return m
}

// wizardView is what the tests read of the guided setup on the stack: its wizard.State, and the view.
type wizardView struct {
	view       view.Component
	step       event.SetupStepID
	phase      string
	choices    []string
	files      []string
	smokeDone  bool
	standalone bool
	problem    string
}

func (w *wizardView) stepID() event.SetupStepID { return w.step }

// The wizard's phases the tests wait for (wizard.State.Phase).
const (
	wizChoose  = "choose"
	wizPlan    = "plan"
	wizRunning = "running"
)

var stepIndex = wizard.StepIndex

// wizardOf is the wizard on the stack, nil when it is closed.
func wizardOf(m Model) *wizardView {
	for _, v := range m.stack {
		if w, ok := v.(interface{ State() wizard.State }); ok {
			s := w.State()
			return &wizardView{view: v, step: s.Step, phase: s.Phase, choices: s.Choices, files: s.Files,
				smokeDone: s.SmokeDone, standalone: s.Standalone, problem: s.Problem}
		}
	}
	return nil
}

// wizardIdle: the wizard is on top and waits for the user (no read or step under way), or is closed.
func wizardIdle(m Model) bool {
	w := wizardOf(m)
	if w == nil {
		return !m.actionRunning()
	}
	return m.top() == w.view && (w.phase == wizChoose || w.phase == wizPlan) && !m.actionRunning()
}

// formOpen: a form is on top (the wizard waits for it).
func formOpen(m Model) bool { return isTop[*dialog.FieldForm](m) }

func openWizard(t *testing.T, runner *wizardRunner, w, h int) Model {
	t.Helper()
	m := wizardModel(runner, w, h)
	return keys(t, m, wizardIdle, "S")
}

func TestWizardIsOfferedOnAClusterWithoutWindowsNodes(t *testing.T) {
	runner := &wizardRunner{state: setupAt(event.SetupCheck, "")}
	m := wizardModel(runner, 120, 40)
	assert.Contains(t, screenLines(t, m)[38], "no Windows nodes yet: press S for the guided setup")
	assert.Contains(t, screenLines(t, m)[39], "S guided setup", "the key is in the help line")
	assert.True(t, onList(m), "offered, not forced")

	m = update(m, snapshotMsg{fixtureSnapshot()})
	assert.NotContains(t, screen(m), "no Windows nodes yet", "a Windows node ends the offer")

	ro := testOptions()
	ro.Runner, ro.ReadOnly = runner, true
	m = New(NewProgramContext(ro), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{freshSnapshot()}, keyPress("S"))
	assert.NotContains(t, screen(m), "guided setup", "read-only: the setup changes the cluster, so it is neither offered nor opened")
	assert.True(t, onList(m))
}

// TestWizardResumesAtTheFirstStepNotDone: opened on a cluster where the steps before each one are done,
// the wizard starts at that step, with the earlier ones marked done.
func TestWizardResumesAtTheFirstStepNotDone(t *testing.T) {
	for i, id := range steps.IDs() {
		t.Run(string(id), func(t *testing.T) {
			mode := ""
			if i > 1 {
				mode = event.ModeOperator
			}
			m := openWizard(t, &wizardRunner{state: setupAt(id, mode)}, 120, 40)
			w := wizardOf(m)
			require.NotNil(t, w)
			assert.Equal(t, id, w.stepID())
			out := screen(m)
			assert.Contains(t, out, wizardTitles[id])
			for _, before := range steps.IDs()[:i] {
				assert.Contains(t, out, "✓ "+itoa(stepIndex(before)+1)+" "+wizard.StepName(before))
			}
		})
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// TestWizardFromAFreshClusterToAReadyNode walks every step with WMCO and a BYOH host: each shows its plan
// before it runs, runs in the action panel, and the wizard moves on when the detection says the step is
// done; at the end the new node is selected in the Nodes pane.
func TestWizardFromAFreshClusterToAReadyNode(t *testing.T) {
	// the check passes with a warning: on a fresh cluster the wizard shows it first, to be acknowledged
	runner := &wizardRunner{state: setupAt(event.SetupOperator, "")}
	m := wizardModel(runner, 120, 40)
	m.ctx.Doctor = warningDoctor
	m = keys(t, m, wizardIdle, "S")
	out := screen(m)
	assert.Contains(t, out, "1 warnings (they do not stop the setup)")
	assert.Contains(t, out, "cluster-wide proxy")
	m = keys(t, m, wizardIdle, "enter") // acknowledge
	require.Equal(t, event.SetupOperator, wizardOf(m).stepID())
	out = screen(m)
	assert.Contains(t, out, "Install WMCO through OLM")
	assert.Contains(t, out, "Standalone: no operator")
	assert.Contains(t, out, "the operator configures every Windows Machine", "one sentence on what the choice means")

	m = keys(t, m, wizardIdle, "enter") // install: the preview
	w := wizardOf(m)
	require.Equal(t, wizPlan, w.phase)
	out = screen(m)
	assert.Contains(t, out, "Plan: install WMCO through OLM (preview)")
	assert.Contains(t, out, "kind: Example", "the YAML is shown before anything is done")
	assert.Contains(t, out, "$ wmcon operator-install")
	assert.Empty(t, runner.runs(), "a preview runs nothing")

	m = keys(t, m, wizardIdle, "enter") // confirm: runs in the panel; detection moves on to the key
	assert.Equal(t, []request.Request{request.OperatorInstall{Wait: true}}, runner.runs())
	require.Equal(t, event.SetupKey, wizardOf(m).stepID())
	assert.Contains(t, screen(m), "SUCCEEDED", "the action panel shows the run")

	m = keys(t, m, formOpen, "enter") // generate a key: a form
	m = update(m, tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	for range 40 {
		m = update(m, keyPress("backspace"))
	}
	m = update(m, typeText("/tmp/wizard-key")...)
	m = keys(t, m, wizardIdle, "enter", "enter") // next field, then done: the preview
	require.Equal(t, wizPlan, wizardOf(m).phase, screen(m))
	m = keys(t, m, wizardIdle, "y")
	require.Equal(t, event.SetupMachines, wizardOf(m).stepID())
	gen := runner.runs()[1].(request.KeyInstall)
	assert.True(t, gen.Generate)
	assert.Equal(t, "ed25519", gen.Type)
	assert.Equal(t, []string{"/tmp/wizard-key", "/tmp/wizard-key.pub"}, wizardOf(m).files)

	out = screen(m)
	assert.Contains(t, out, "A Windows MachineSet")
	assert.Contains(t, out, "A Windows host you have (BYOH)")
	m = keys(t, m, formOpen, "down", "enter") // BYOH: the address is offered from the hosts the console knows
	assert.Contains(t, screen(m), "127.0.0.7")
	m = keys(t, m, wizardIdle, "enter", "enter")
	out = screen(m)
	assert.Contains(t, out, "Plan: add BYOH host 127.0.0.7")
	assert.Contains(t, out, "SSH to 127.0.0.7 as Administrator works", "SSH reachability was tried")
	m = keys(t, m, wizardIdle, "enter")
	assert.Equal(t, request.BYOHAdd{Address: "127.0.0.7", User: "Administrator"}, runner.runs()[2])

	require.Equal(t, event.SetupConfigure, wizardOf(m).stepID())
	assert.Contains(t, screen(m), "Follow the operator")
	m = keys(t, m, wizardIdle, "enter")
	assert.Contains(t, screen(m), "nothing is changed: the operator does the work")
	m = keys(t, m, wizardIdle, "enter")
	require.Len(t, runner.runs(), 4, screen(m))
	assert.Equal(t, request.SetupFollow{Hosts: []string{"127.0.0.7"}}, runner.runs()[3])

	require.Equal(t, event.SetupWorkloads, wizardOf(m).stepID())
	assert.Contains(t, screen(m), "Create a RuntimeClass for Windows build 10.0.20348")
	m = keys(t, m, wizardIdle, "enter")
	m = keys(t, m, wizardIdle, "enter")
	assert.Equal(t, request.RuntimeClassEnsure{Build: "10.0.20348"}, runner.runs()[4])
	require.Equal(t, event.SetupWorkloads, wizardOf(m).stepID(), "the smoke test is offered next")
	assert.Contains(t, screen(m), "Run a smoke test pod on "+newNode)
	m = keys(t, m, wizardIdle, "enter")
	m = keys(t, m, wizardIdle, "enter")
	assert.Equal(t, request.SmokeTest{Node: newNode, RuntimeClass: "windows-10-0-20348"}, runner.runs()[5])
	assert.True(t, wizardOf(m).smokeDone)

	withNode := freshSnapshot()
	byoh := windowsNode(newNode, "", "127.0.0.7", time.Minute)
	byoh.BYOH = true
	withNode.Nodes = append([]model.NodeInfo{byoh}, withNode.Nodes...)
	m = update(m, keyPress("2"), snapshotMsg{withNode})                                                                 // the console moved on meanwhile
	m = keys(t, m, func(m Model) bool { n, _ := m.selectedNode(); return wizardIdle(m) && n.Name == newNode }, "enter") // on to Done
	require.Equal(t, event.SetupDone, wizardOf(m).stepID())
	assert.Equal(t, paneNodes, m.active)
	node, ok := m.selectedNode()
	require.True(t, ok)
	assert.Equal(t, newNode, node.Name, "the new node is selected in the Nodes pane")
	m = keys(t, m, wizardIdle, "enter")
	m = keys(t, m, wizardIdle, "enter")
	assert.Equal(t, request.SetupSummary{Node: newNode, Files: []string{"/tmp/wizard-key", "/tmp/wizard-key.pub"}}, runner.runs()[6])
	m = keys(t, m, func(m Model) bool { return wizardOf(m) == nil && m.status != "" }, "down", "enter")
	assert.Contains(t, screen(m), "guided setup closed: every step is done")
}

// TestWizardStandaloneConfiguresTheHost: standalone mode is remembered in the session (nothing in the
// cluster records it), and the configure step configures the BYOH host with wmcon, asking with the plan.
func TestWizardStandaloneConfiguresTheHost(t *testing.T) {
	runner := &wizardRunner{state: setupAt(event.SetupOperator, "")}
	m := openWizard(t, runner, 120, 40)
	m = keys(t, m, wizardIdle, "down", "enter")
	w := wizardOf(m)
	assert.True(t, w.standalone)
	require.Equal(t, event.SetupKey, w.stepID())
	assert.Contains(t, screen(m), "standalone (no operator)")
	assert.Empty(t, runner.runs(), "choosing standalone changes nothing")

	runner.mu.Lock()
	runner.state = runner.mark(event.SetupKey)
	runner.state.Hosts = []event.SetupHost{{Kind: "byoh", Name: "127.0.0.7", Address: "127.0.0.7", User: "Administrator"}}
	runner.state = runner.mark(event.SetupMachines)
	runner.mu.Unlock()
	m = keys(t, m, wizardIdle, "g")
	require.Equal(t, event.SetupConfigure, wizardOf(m).stepID())
	out := screen(m)
	assert.Contains(t, out, "Configure 127.0.0.7 (user Administrator)")
	assert.NotContains(t, out, "A Windows MachineSet")
	m = keys(t, m, formOpen, "enter")
	assert.Contains(t, screen(m), "wmcon installs WMCO's payload")
	m = update(m, typeText("/nonexistent-payload")...)
	m = keys(t, m, formOpen, "enter")
	assert.Contains(t, screen(m), "/nonexistent-payload is not a directory")
	for range 20 {
		m = update(m, keyPress("backspace"))
	}
	m = update(m, typeText(t.TempDir())...)
	m = keys(t, m, wizardIdle, "enter")
	assert.Contains(t, screen(m), "Plan: configure 127.0.0.7 (dry run)", "the engine's preview")
	assert.Empty(t, runner.runs())
	m = keys(t, m, wizardIdle, "enter")
	assert.Equal(t, "127.0.0.7", runner.runs()[0].(request.Configure).Address)
	assert.NotEmpty(t, runner.runs()[0].(request.Configure).PayloadDir, "the payload given")
	assert.Equal(t, "Administrator", runner.runs()[0].(request.Configure).User)
	assert.Equal(t, event.SetupWorkloads, wizardOf(m).stepID())
}

// TestWizardStopsOnABlockingDoctorFailure: a failing prerequisite stops the setup with what to do; it
// cannot be skipped, and checking again after the fix goes on.
func TestWizardStopsOnABlockingDoctorFailure(t *testing.T) {
	state := setupAt(event.SetupCheck, "")
	state.Steps[0].Blocking = "1 doctor check fails: Network type: OpenShiftSDN"
	state.Steps[0].Evidence = []string{"✗ Network type: OpenShiftSDN — migrate the cluster to OVNKubernetes"}
	state.Steps[0].Hint = "run wmcon doctor and fix what each failing check says"
	runner := &wizardRunner{state: state}
	m := openWizard(t, runner, 120, 40)
	out := screen(m)
	assert.Contains(t, out, "blocked: 1 doctor check fails: Network type: OpenShiftSDN")
	assert.Contains(t, out, "migrate the cluster to OVNKubernetes")
	assert.Contains(t, out, "headless: run wmcon doctor")
	assert.Contains(t, out, "✗ 1 Check")
	assert.Equal(t, []string{"Check again"}, choiceLabels(wizardOf(m)))

	m = keys(t, m, wizardIdle, "s")
	assert.Equal(t, event.SetupCheck, wizardOf(m).stepID(), "a blocking failure cannot be skipped")
	assert.Contains(t, screen(m), "the setup cannot go on while a prerequisite fails")

	runner.mu.Lock()
	runner.state = runner.mark(event.SetupCheck)
	runner.mu.Unlock()
	m = keys(t, m, wizardIdle, "enter")
	assert.Equal(t, event.SetupOperator, wizardOf(m).stepID(), "fixed: checking again goes on")
}

// TestWizardCancelSaysWhatWasLeft: esc twice cancels the running step; the panel and the wizard say in
// which state it was left, and the step can be tried again.
func TestWizardCancelSaysWhatWasLeft(t *testing.T) {
	runner := &wizardRunner{state: setupAt(event.SetupOperator, ""), block: request.ActionOperator}
	m := openWizard(t, runner, 120, 40)
	m = keys(t, m, wizardIdle, "enter")
	m, cmd := keyCmd(m, "enter")
	m = drive(t, m, cmd, func(m Model) bool { return m.actionRunning() && len(runner.runs()) == 1 })
	assert.Equal(t, wizRunning, wizardOf(m).phase)
	assert.Contains(t, screen(m), "esc twice cancels")
	m, _ = keyCmd(m, "esc")
	assert.NotNil(t, wizardOf(m), "one esc does not close the wizard while its step runs")
	m, _ = keyCmd(m, "esc")
	m = drive(t, m, nil, wizardIdle)
	out := screen(m)
	assert.Contains(t, out, "CANCELLED stopped part-way")
	assert.Contains(t, out, "the step did not finish: stopped part-way — the Subscription exists")
	assert.Contains(t, wizardOf(m).problem, "run wmcon operator install --wait to follow it again", "the action's hint")
	assert.Equal(t, event.SetupOperator, wizardOf(m).stepID())

	m, _ = keyCmd(m, "esc") // closes the finished panel
	m, cmd = keyCmd(m, "esc")
	m = drive(t, m, cmd, func(m Model) bool { return wizardOf(m) == nil && m.status != "" })
	assert.Contains(t, screen(m), `guided setup closed; next: Install WMCO, or choose standalone mode — S resumes there`)
}

func TestWizardFailedPreviewChangesNothing(t *testing.T) {
	runner := &wizardRunner{state: setupAt(event.SetupKey, event.ModeOperator)}
	m := openWizard(t, runner, 120, 40)
	m = keys(t, m, formOpen, "down", "enter") // from a file
	m = keys(t, m, formOpen, "enter")
	assert.Contains(t, screen(m), "give the path of a private key file", "an empty path keeps the form open")
	m = keys(t, m, wizardIdle, "esc")
	assert.Equal(t, wizChoose, wizardOf(m).phase, "a cancelled form goes back to the choices")
	assert.Empty(t, runner.runs())
}

// TestWizardGoesBackAndSkips: b shows the step before (done, with its evidence), s the one after.
func TestWizardGoesBackAndSkips(t *testing.T) {
	m := openWizard(t, &wizardRunner{state: setupAt(event.SetupMachines, event.ModeOperator)}, 120, 40)
	m = keys(t, m, wizardIdle, "b")
	w := wizardOf(m)
	assert.Equal(t, event.SetupKey, w.stepID())
	assert.Contains(t, screen(m), wizardEvidence[event.SetupKey])
	assert.Equal(t, "Use the existing cloud-private-key", choiceLabels(w)[0])
	m = keys(t, m, wizardIdle, "s", "s")
	assert.Equal(t, event.SetupConfigure, wizardOf(m).stepID())
	assert.Contains(t, screen(m), "no Machine or BYOH host is waiting", "nothing to follow yet")
}

func warningDoctor(context.Context) (diagnosis.Report, error) {
	return diagnosis.Report{Checks: []diagnosis.Check{
		{ID: "network", Title: "Network", Status: diagnosis.CheckOK, Detail: "OVNKubernetes with a hybrid overlay"},
		{ID: "proxy", Title: "Proxy", Status: diagnosis.CheckWarn, Detail: "a cluster-wide proxy is set",
			Fix: "Windows nodes get its variables; check that the hosts reach it"},
	}}, nil
}

func choiceLabels(w *wizardView) []string { return w.choices }

func TestWizardFillsTheBodyExactly(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 45}} {
		m := openWizard(t, &wizardRunner{state: setupAt(event.SetupMachines, event.ModeOperator)}, size[0], size[1])
		screenLines(t, m)
		m = keys(t, m, formOpen, "enter")
		m = keys(t, m, wizardIdle, "esc")
		require.True(t, strings.Contains(screen(m), "Guided setup"))
		screenLines(t, m)
	}
}

// TestGoldenWizard: each step as the wizard opens on it (resumed there), at 80×24; the Check step with a
// blocking failure; then a plan with its YAML at 160×45.
func TestGoldenWizard(t *testing.T) {
	for _, id := range steps.IDs() {
		t.Run(string(id), func(t *testing.T) {
			state := setupAt(id, event.ModeOperator)
			if id == event.SetupCheck {
				state.Mode = ""
				state.Steps[0].Blocking = "1 doctor check fails: Network type: OpenShiftSDN"
				state.Steps[0].Evidence = []string{"✗ Network type: OpenShiftSDN — migrate the cluster to OVNKubernetes"}
			}
			m := openWizard(t, &wizardRunner{state: state}, 80, 24)
			teatest.RequireEqualOutput(t, []byte(asciiScreen(t, m.View().Content)))
		})
	}
}

func TestGoldenWizardPlan160x45(t *testing.T) {
	m := openWizard(t, &wizardRunner{state: setupAt(event.SetupOperator, "")}, 160, 45)
	m = keys(t, m, wizardIdle, "enter")
	require.Equal(t, wizPlan, wizardOf(m).phase)
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, m.View().Content)))
}

// TestWizardChoicesStayVisibleOnASmallScreen: at 80×24 with the action panel open, the step's findings
// give way (cut, or the choices lose their sentences) so every choice stays on screen.
func TestWizardChoicesStayVisibleOnASmallScreen(t *testing.T) {
	m := openWizard(t, &wizardRunner{state: setupAt(event.SetupWorkloads, event.ModeOperator)}, 80, 24)
	m = keys(t, m, wizardIdle, "enter")
	m = keys(t, m, wizardIdle, "enter")
	require.NotNil(t, m.panel, "the step ran in the action panel")
	out := screen(m)
	assert.Contains(t, out, "Run a smoke test pod on "+newNode)
	assert.Contains(t, out, "Go on without a smoke test")
	screenLines(t, m)
}

// TestWizardMachineSetIsConfirmedOnce: the MachineSet's plan (its YAML) is the question; confirming it runs
// the request already confirmed, so the action does not ask a second time.
func TestWizardMachineSetIsConfirmedOnce(t *testing.T) {
	runner := &wizardRunner{state: setupAt(event.SetupMachines, event.ModeOperator)}
	m := openWizard(t, runner, 120, 40)
	require.Equal(t, event.SetupMachines, wizardOf(m).stepID())
	require.Contains(t, screen(m), "A Windows MachineSet")
	m = keys(t, m, formOpen, "enter") // the first choice: a MachineSet
	m = update(m, typeText("ami-0windows2022")...)
	m = keys(t, m, wizardIdle, "enter", "enter", "enter", "enter", "enter", "enter") // through the fields: the preview
	require.Equal(t, wizPlan, wizardOf(m).phase, screen(m))
	m = keys(t, m, wizardIdle, "enter")
	runs := runner.runs()
	require.NotEmpty(t, runs, screen(m))
	req, ok := runs[len(runs)-1].(request.MachineSetGenerate)
	require.True(t, ok, "%#v", runs)
	assert.Equal(t, "ami-0windows2022", req.Image)
	assert.True(t, req.Confirmed, "confirmed once, in the plan")
	assert.False(t, req.Preview)
}
