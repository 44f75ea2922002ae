package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/configure"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/view"
)

// scriptedRunner plays a reboot: two steps, a PodDisruptionBudget question, then the outcome. It records
// what it was asked and answered, and stops early if cancelled.
type scriptedRunner struct {
	requests chan request.Request
	answers  chan string
	release  chan struct{} // closed by the test to let the run finish
}

func newScriptedRunner() *scriptedRunner {
	return &scriptedRunner{requests: make(chan request.Request, 4), answers: make(chan string, 4), release: make(chan struct{})}
}

func (r *scriptedRunner) Run(ctx context.Context, req request.Request, sink event.Sink) error {
	r.requests <- req
	rep := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Targets()[0], Now: func() time.Time { return fixedNow }}
	rep.Started("cordon", "cordoning")
	rep.Done("cordon", "cordoned")
	rep.Started("drain", "evicting 2 pods")
	answer, err := rep.Ask(ctx, event.Question{Title: "a PodDisruptionBudget blocks the drain",
		Detail: []string{"budget windows-apps/sql-pdb allows 0 disruptions", "pod windows-apps/sql-0"},
		Safe:   "abort",
		Choices: []event.Choice{{Key: "wait", Label: "Wait for the budget to allow it"}, {Key: "abort", Label: "Abort (the node stays cordoned)"},
			{Key: "disable-eviction", Label: "Delete the pods instead (disable eviction)", Confirm: "Delete pods, ignoring budgets?"}}})
	if err != nil {
		return err
	}
	r.answers <- answer
	select {
	case <-r.release:
	case <-ctx.Done():
		hint := "node left cordoned: " + event.Run("uncordon", req.Targets()[0])
		rep.Failed("drain", ctx.Err(), hint)
		rep.Finish(event.Cancelled, "reboot cancelled", hint)
		return nil
	}
	rep.Done("drain", "2 pods deleted")
	rep.Finish(event.Succeeded, "rebooted", "")
	return nil
}

// pump delivers the messages a command produces until the next one would block, as the program would.
func pump(t *testing.T, m Model, cmd tea.Cmd, until func(Model) bool) Model {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for cmd != nil && !until(m) {
		msgs := make(chan tea.Msg, 1)
		go func(c tea.Cmd) { msgs <- c() }(cmd)
		select {
		case msg := <-msgs:
			var next tea.Model
			next, cmd = m.Update(msg)
			m = next.(Model)
		case <-deadline:
			t.Fatalf("the action did not reach the expected state; screen:\n%s", screen(m))
		}
	}
	return m
}

func actionModel(runner view.Runner) Model {
	opts := testOptions()
	opts.Runner = runner
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	return update(m, snapshotMsg{fixtureSnapshot()})
}

func keyCmd(m Model, k string) (Model, tea.Cmd) {
	next, cmd := m.Update(keyPress(k))
	return next.(Model), cmd
}

func TestRebootFromTheConsole(t *testing.T) {
	runner := newScriptedRunner()
	m := actionModel(runner)
	node, ok := m.selectedNode()
	require.True(t, ok)
	require.True(t, node.Windows, "the fixture lists Windows nodes first")

	m = update(m, press("R")...)
	require.True(t, isTop[*drainForm](m), "R opens the confirmation with the drain options")
	out := screen(m)
	assert.Contains(t, out, "Reboot "+node.Name+"?")
	assert.Contains(t, out, "[x] ignore DaemonSets")
	assert.Contains(t, out, "[x] delete emptyDir data")
	assert.Contains(t, out, "[ ] disable eviction")

	m, cmd := keyCmd(m, "enter") // the cursor starts on Run
	require.NotNil(t, cmd)
	m = update(m, cmd()) // the form's answer starts the action
	require.NotNil(t, m.running)
	req := <-runner.requests
	assert.Equal(t, request.Reboot{Nodes: []string{node.Name}, Drain: request.DefaultDrainOptions(), MaxUnavailable: 1}, req)

	m = pump(t, m, waitForAction(m.running.msgs), func(m Model) bool { return isTop[*dialog.Question](m) })
	out = screen(m)
	assert.Contains(t, out, "a PodDisruptionBudget blocks the")
	assert.Contains(t, out, "sql-pdb")
	assert.Contains(t, out, "✓ cordon")

	m = update(m, press("right", "right", "enter")...)
	require.True(t, isTop[*dialog.Question](m), "the dangerous choice is asked a second time")
	assert.Contains(t, screen(m), "Delete pods, ignoring budgets?")
	m = update(m, press("y")...)
	assert.False(t, isTop[*dialog.Question](m))
	assert.Equal(t, "disable-eviction", <-runner.answers)

	close(runner.release)
	m = pump(t, m, waitForAction(m.running.msgs), func(m Model) bool { return m.running.done })
	out = screen(m)
	assert.Contains(t, out, "✓ drain")
	assert.Contains(t, out, "SUCCEEDED rebooted")
	m = update(m, press("esc")...)
	assert.Nil(t, m.panel, "esc closes a finished action's panel")
}

func TestCancellingAnActionSaysWhereTheNodeWasLeft(t *testing.T) {
	m := runToDrain(t, newScriptedRunner())
	m, _ = keyCmd(m, "ctrl+c")
	assert.False(t, m.running.done, "ctrl+c cancels the action instead of quitting")
	m = pump(t, m, waitForAction(m.running.msgs), func(m Model) bool { return m.running.done })
	node, _ := m.selectedNode()
	flat := func(m Model) string {
		return strings.Join(strings.Fields(strings.NewReplacer("│", " ").Replace(screen(m))), " ")
	}
	// The action names the command; the console adds the key that does it on the selected node.
	assert.Contains(t, flat(m), "node left cordoned: press u or run wmcon uncordon "+node.Name)
	// Once another node is selected, u would act on that one: the hint names the command only.
	moved := update(m, press("j")...)
	other, _ := moved.selectedNode()
	require.NotEqual(t, node.Name, other.Name)
	assert.Contains(t, flat(moved), "node left cordoned: run wmcon uncordon "+node.Name)
	assert.NotContains(t, flat(moved), "press u")
	_, cmd := keyCmd(m, "ctrl+c")
	require.NotNil(t, cmd)
	assert.Equal(t, tea.Quit(), cmd(), "with nothing running ctrl+c quits")
}

func TestRebootRefusesLinuxNodes(t *testing.T) {
	m := actionModel(newScriptedRunner())
	// move to the first Linux node
	for i := 0; i < 20; i++ {
		if n, ok := m.selectedNode(); ok && !n.Windows {
			break
		}
		m = update(m, press("j")...)
	}
	n, _ := m.selectedNode()
	require.False(t, n.Windows)
	m = update(m, press("R")...)
	assert.False(t, isTop[*drainForm](m))
	assert.Contains(t, screen(m), "is a Linux node: wmcon reboots Windows nodes (over SSH) only")
}

type failingRunner struct{}

func (failingRunner) Run(context.Context, request.Request, event.Sink) error {
	return errors.New("cannot reach the API server")
}

func TestRunnerErrorIsShown(t *testing.T) {
	m := actionModel(failingRunner{})
	m, cmd := keyCmd(m, "c")
	require.NotNil(t, cmd)
	m = pump(t, m, cmd, func(m Model) bool { return m.running.done })
	assert.Contains(t, screen(m), "cannot reach the API server")
}

// recordingRunner records requests and finishes each at once.
type recordingRunner struct{ requests chan request.Request }

func (r recordingRunner) Run(ctx context.Context, req request.Request, sink event.Sink) error {
	r.requests <- req
	event.Reporter{Sink: sink, Action: req.Action(), Target: req.Targets()[0]}.Finish(event.Succeeded, "done", "")
	return nil
}

func TestMarkedNodesRebootAsOneBatch(t *testing.T) {
	runner := recordingRunner{requests: make(chan request.Request, 1)}
	m := actionModel(runner)
	first, _ := m.selectedNode()
	m = update(m, press("space")...)
	second, _ := m.selectedNode()
	m = update(m, press("space")...)
	require.True(t, first.Windows && second.Windows)
	out := screen(m)
	assert.Contains(t, out, markPrefix+first.Name[:10], "marked nodes are shown")
	assert.Contains(t, out, "2 nodes marked")

	m = update(m, press("R")...)
	require.True(t, isTop[*drainForm](m))
	assert.Contains(t, screen(m), "Reboot 2 nodes, one at a time?")
	m, cmd := keyCmd(m, "enter")
	m = update(m, cmd()) // the form's answer starts the batch
	req := <-runner.requests
	assert.Equal(t, request.Reboot{Nodes: []string{first.Name, second.Name}, Drain: request.DefaultDrainOptions(), MaxUnavailable: 1}, req,
		"one at a time")
	assert.Empty(t, m.panes[paneNodes].marked, "the marks belong to the started batch")
}

func TestMarkedLinuxNodeRefusesABatchReboot(t *testing.T) {
	m := actionModel(newScriptedRunner())
	for i := 0; i < 20; i++ {
		if n, ok := m.selectedNode(); ok && !n.Windows {
			break
		}
		m = update(m, press("j")...)
	}
	linux, _ := m.selectedNode()
	m = update(m, press("space", "R")...)
	assert.False(t, isTop[*drainForm](m))
	assert.Contains(t, screen(m), linux.Name+" is a Linux node")
}

func TestReservedActionKeysDoNothingYet(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	before := screen(m)
	for _, k := range []string{"R", "c", "u", "d", "l", "h"} {
		var cmd tea.Cmd
		next, cmd := m.Update(keyPress(k))
		assert.Nil(t, cmd, k)
		assert.Equal(t, before, screen(next.(Model)), k)
	}
}

func TestReadOnlyRefusesActions(t *testing.T) {
	opts := testOptions()
	opts.ReadOnly = true
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	assert.Contains(t, screenLines(t, m)[0], "read-only")
	m, _ = m.requestAction(keyPress("R"))
	assert.Contains(t, screen(m), "restart it without --read-only")
}

// runToDrain starts a reboot of the selected node and answers the PDB question with abort, leaving the
// scripted action waiting in its drain until it is released or cancelled.
func runToDrain(t *testing.T, runner *scriptedRunner) Model {
	t.Helper()
	m := actionModel(runner)
	m = update(m, press("R")...)
	m, cmd := keyCmd(m, "enter")
	m = update(m, cmd())
	<-runner.requests
	m = pump(t, m, waitForAction(m.running.msgs), func(m Model) bool { return isTop[*dialog.Question](m) })
	m = update(m, press("esc")...)
	assert.Equal(t, "abort", <-runner.answers)
	return m
}

// TestOneEscDoesNotCancelAReboot: esc also closes views and clears filters, so one press only says what a
// second would do; the action goes on and succeeds.
func TestOneEscDoesNotCancelAReboot(t *testing.T) {
	runner := newScriptedRunner()
	m := runToDrain(t, runner)
	m = update(m, press("esc")...)
	assert.Contains(t, screen(m), "esc again cancels")
	close(runner.release)
	m = pump(t, m, waitForAction(m.running.msgs), func(m Model) bool { return m.running.done })
	assert.Contains(t, screen(m), "SUCCEEDED rebooted")
}

// TestTwoEscInARowCancel: a key between two escs disarms; two in a row cancel, and once the panel says how
// it ended the "cancelling…" line is gone.
func TestTwoEscInARowCancel(t *testing.T) {
	runner := newScriptedRunner()
	m := runToDrain(t, runner)
	m = update(m, press("esc", "j", "esc")...)
	assert.False(t, m.running.done)
	assert.Contains(t, screen(m), "esc again cancels", "armed again, not cancelled")
	m = update(m, press("esc")...)
	assert.Contains(t, screen(m), "cancelling…")
	m = pump(t, m, waitForAction(m.running.msgs), func(m Model) bool { return m.running.done })
	out := screen(m)
	assert.Contains(t, out, "node left cordoned: run wmcon uncordon")
	assert.NotContains(t, out, "cancelling…", "no stale line after the panel says how it ended")
}

// TestBatchCordonAsksFirst: c on marked nodes opens a question naming them; n changes nothing, y runs it.
func TestBatchCordonAsksFirst(t *testing.T) {
	runner := newScriptedRunner()
	m := actionModel(runner)
	m = update(m, press("space", "space", "c")...)
	require.True(t, isTop[*dialog.Confirm](m), "marked nodes are not cordoned without a question")
	assert.Contains(t, screen(m), "Cordon 2 nodes?")
	m, cmd := keyCmd(m, "n")
	m = update(m, cmd())
	assert.Nil(t, m.running, "no: nothing runs")
	assert.False(t, isTop[*dialog.Confirm](m))

	m = update(m, press("c")...)
	m, cmd = keyCmd(m, "y")
	m = update(m, cmd())
	require.NotNil(t, m.running)
	t.Cleanup(m.running.cancel) // the scripted runner would go on to ask its question
	req := <-runner.requests
	cordon, ok := req.(request.Cordon)
	require.True(t, ok, "%T", req)
	assert.Len(t, cordon.Nodes, 2)
}

func TestConfigureFromTheConsoleAsksWithThePlan(t *testing.T) {
	runner := newScriptedRunner()
	m := actionModel(runner)
	node, ok := m.selectedNode()
	require.True(t, ok)
	require.True(t, node.Windows)

	m, cmd := keyCmd(m, "C")
	require.NotNil(t, cmd)
	require.NotNil(t, m.running, "C starts the configure action at once: it inspects, then asks with the plan")
	assert.Equal(t, request.Configure{Node: node.Name, Confirm: true}, <-runner.requests)
	assert.Contains(t, screen(m), "configure "+node.Name)
	m = pump(t, m, cmd, func(m Model) bool { return isTop[*dialog.Question](m) })
	assert.Contains(t, screen(m), "✓ cordon", "the action's steps show inline while it asks")
}

// With an unconfigured host besides the selected node's (the demo's bare host), C asks which one; choosing
// the host starts the configure action by address, which then inspects it and asks with the plan.
func TestConfigureOffersAnUnconfiguredHost(t *testing.T) {
	runner := newScriptedRunner()
	opts := testOptions()
	opts.Runner = runner
	opts.Hosts = []string{"127.0.0.7"}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m = update(m, snapshotMsg{fixtureSnapshot()})
	node, ok := m.selectedNode()
	require.True(t, ok)
	require.True(t, node.Windows)

	m = update(m, press("C")...)
	require.True(t, isTop[*configure.HostChooser](m), "two hosts to choose from: C asks which")
	out := screen(m)
	assert.Contains(t, out, "Configure which Windows host?")
	assert.Contains(t, out, "the host of node "+node.Name)
	assert.Contains(t, out, "the unconfigured host at 127.0.0.7")
	assert.Nil(t, m.running, "nothing runs before a host is chosen")

	m = update(m, press("down")...)
	m, cmd := keyCmd(m, "enter")
	require.NotNil(t, cmd)
	m = update(m, cmd())
	require.NotNil(t, m.running)
	t.Cleanup(m.running.cancel)
	assert.Equal(t, request.Configure{Address: "127.0.0.7", Confirm: true}, <-runner.requests)

	// esc on the chooser runs nothing.
	m2 := New(NewProgramContext(opts), nil)
	m2 = update(m2, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	m2 = update(m2, press("C")...)
	m2, cmd = keyCmd(m2, "esc")
	m2 = update(m2, cmd())
	assert.Nil(t, m2.running)
	assert.False(t, isTop[*configure.HostChooser](m2))
}

// A host that has become a node is no longer offered.
func TestConfigureChoicesDropAHostThatJoined(t *testing.T) {
	snap := fixtureSnapshot()
	win := snap.Nodes[0]
	require.True(t, win.Windows)
	choices := configure.Choices(snap, win, []string{win.InternalIP, "127.0.0.7"})
	require.Len(t, choices, 2)
	assert.Equal(t, request.Configure{Node: win.Name, Confirm: true}, choices[0].Req)
	assert.Equal(t, request.Configure{Address: "127.0.0.7", Confirm: true}, choices[1].Req)
	linux := model.NodeInfo{Name: "linux-1"}
	assert.Empty(t, configure.Choices(snap, linux, nil), "a Linux node and no host: nothing to configure")
}

// upgradeRunner plays an upgrade as the action reports it: the plan in the panel, the question, then one
// node's steps and end per node once answered.
type upgradeRunner struct {
	requests chan request.Request
	answers  chan string
}

func (r upgradeRunner) Run(ctx context.Context, req request.Request, sink event.Sink) error {
	r.requests <- req
	now := func() time.Time { return fixedNow }
	plan := event.Reporter{Sink: sink, Action: req.Action(), Now: now}
	plan.Started("plan", "reading the nodes' versions and the target")
	plan.Log("plan", "  1. win-std-a  version 9.0.0 → 10.0.0: cordon, drain, reconfigure, Ready, uncordon")
	plan.Log("plan", "  2. win-std-b  version 9.0.0 → 10.0.0: cordon, drain, reconfigure, Ready, uncordon")
	plan.Done("plan", "2 nodes to upgrade to 10.0.0, 1 at a time")
	answer, err := plan.Ask(ctx, event.Question{Title: "Upgrade 2 nodes to 10.0.0?", Detail: []string{"1. win-std-a", "2. win-std-b"},
		Choices: []event.Choice{{Key: "cancel", Label: "Cancel (change nothing)"}, {Key: "upgrade", Label: "Upgrade, one node at a time"}}})
	if err != nil {
		return err
	}
	r.answers <- answer
	for _, n := range []string{"win-std-a", "win-std-b"} {
		rep := event.Reporter{Sink: sink, Action: req.Action(), Target: n, Now: now}
		rep.Started("cordon", "marking the node unschedulable")
		rep.Done("cordon", "cordoned")
		rep.Finish(event.Succeeded, "upgraded to 10.0.0 in 1m", "")
	}
	return nil
}

func TestUpgradeFromTheConsoleShowsThePlanThenAsks(t *testing.T) {
	runner := upgradeRunner{requests: make(chan request.Request, 1), answers: make(chan string, 1)}
	m := actionModel(runner)
	m, cmd := keyCmd(m, "U")
	require.NotNil(t, cmd)
	require.NotNil(t, m.running, "U starts the upgrade: it plans, shows the plan and asks")
	assert.Equal(t, request.Upgrade{Confirm: true, Drain: request.DefaultDrainOptions()}, <-runner.requests)
	m = pump(t, m, cmd, func(m Model) bool { return isTop[*dialog.Question](m) })
	out := screen(m)
	assert.Contains(t, out, "Upgrade 2 nodes to 10.0.0?")
	assert.Contains(t, out, "1. win-std-a  version 9.0.0 → 10.0.0", "the plan is in the panel")

	m = update(m, press("right", "enter")...)
	assert.Equal(t, "upgrade", <-runner.answers)
	m = pump(t, m, waitForAction(m.running.msgs), func(m Model) bool { return m.running.done })
	out = screen(m)
	assert.Contains(t, out, "│ all nodes:", "the plan's step is the action's own")
	assert.Contains(t, out, "win-std-a:", "each node's steps are named: the upgrade has no one target")
	assert.Contains(t, out, "win-std-b: SUCCEEDED upgraded to 10.0.0")
}

func TestUpgradeKeyRefusedReadOnly(t *testing.T) {
	runner := upgradeRunner{requests: make(chan request.Request, 1)}
	opts := testOptions()
	opts.Runner, opts.ReadOnly = runner, true
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	m, _ = keyCmd(m, "U")
	assert.Nil(t, m.running, "nothing runs read-only")
	assert.Empty(t, runner.requests)
}
