package ui

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/view"
)

// goldenScreen runs the console as a real program (teatest), feeds it snap and then msgs, quits, and
// compares the final screen, as an ASCII terminal would show it, with testdata/<TestName>.golden.
// Regenerate with: go test ./ui -run Golden -update
func goldenScreen(t *testing.T, snap *model.Snapshot, msgs ...tea.Msg) {
	t.Helper()
	goldenScreenAt(t, testOptions(), 120, 40, snap, msgs...)
}

// goldenScreenAt is goldenScreen with opts on a terminal of w × h.
func goldenScreenAt(t *testing.T, opts Options, w, h int, snap *model.Snapshot, msgs ...tea.Msg) {
	t.Helper()
	goldenScreenWaiting(t, opts, w, h, snap, "context admin", msgs...)
}

// goldenScreenWaiting is goldenScreenAt waiting until the screen shows ready (what a read the console
// starts by itself, such as the metrics, draws) before it sends msgs.
func goldenScreenWaiting(t *testing.T, opts Options, w, h int, snap *model.Snapshot, ready string, msgs ...tea.Msg) {
	t.Helper()
	goldenScreenAs(t, opts, w, h, snap, ready, asciiScreen, msgs...)
}

// goldenScreenAs is goldenScreenWaiting with the final screen turned into the golden's text by render.
func goldenScreenAs(t *testing.T, opts Options, w, h int, snap *model.Snapshot, ready string, render func(testing.TB, string) string, msgs ...tea.Msg) {
	t.Helper()
	snapshots := make(chan *model.Snapshot, 1)
	snapshots <- snap
	tm := teatest.NewTestModel(t, New(NewProgramContext(opts), snapshots),
		teatest.WithInitialTermSize(w, h))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(ready)) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	for _, msg := range msgs {
		tm.Send(msg)
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if !ok {
		t.Fatal("the program did not return the console model")
	}
	teatest.RequireEqualOutput(t, []byte(render(t, final.View().Content)))
}

func TestGoldenNodes(t *testing.T) {
	goldenScreen(t, fixtureSnapshot(), press("j")...)
}

// TestGoldenNodes80x24: on the smallest common terminal, columns that may give way are hidden rather than
// the status or the version's drift mark cut, and the help line starts with ? and the node's action keys.
func TestGoldenNodes80x24(t *testing.T) {
	goldenScreenAt(t, withRunner(), 80, 24, fixtureSnapshot(), press("j")...)
}

func TestGoldenNodes160x45(t *testing.T) {
	goldenScreenAt(t, withRunner(), 160, 45, fixtureSnapshot(), press("j")...)
}

// withRunner is testOptions with actions available (so their keys show), none of them started.
func withRunner() Options {
	opts := testOptions()
	opts.Runner = newScriptedRunner()
	return opts
}

func TestGoldenFilter(t *testing.T) {
	goldenScreen(t, fixtureSnapshot(), append(press("/"), typeText("win")...)...)
}

func TestGoldenNodeDetail(t *testing.T) {
	goldenScreen(t, fixtureSnapshot(), press("j", "j", "enter")...)
}

// TestGoldenNodeDetailRead*: the details with what the view read (pods, events), scrolled to them, with
// the scroll indicator; then the YAML. The model is driven directly, so the read lands before the keys.
func TestGoldenNodeDetailRead80x24(t *testing.T) {
	m := update(openDetail(t, fixtureNodeDetail, 80, 24), press("pgdown", "pgdown")...)
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, m.View().Content)))
}

func TestGoldenNodeDetailRead160x45(t *testing.T) {
	m := update(openDetail(t, fixtureNodeDetail, 160, 45), press("pgdown")...)
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, m.View().Content)))
}

func TestGoldenNodeYAML80x24(t *testing.T) {
	m := update(openDetail(t, fixtureNodeDetail, 80, 24), press("y")...)
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, m.View().Content)))
}

func TestGoldenMachineSetsExpanded(t *testing.T) {
	goldenScreen(t, fixtureSnapshot(), press("2", "space")...)
}

func TestGoldenSecrets(t *testing.T) {
	snap := withKeyHashes(fixtureSnapshot())
	snap.Secrets.UserData.MatchesKey = false
	snap.Secrets.UserData.KeyFingerprint = "SHA256:0ldK3yN0tM4tch1ngTh3Cl0udPr1v4t3K3yXyZ"
	goldenScreen(t, snap, press("3")...)
}

func TestGoldenMirrors(t *testing.T) {
	goldenScreen(t, fixtureSnapshot(), press("4")...)
}

func TestGoldenNotInstalled(t *testing.T) {
	snap := fixtureSnapshot()
	snap.MachineSets = nil
	snap.Resources[model.ResMachineSets] = model.ResourceState{Availability: model.NotInstalled}
	snap.Resources[model.ResMachines] = model.ResourceState{Availability: model.NotInstalled}
	goldenScreen(t, snap, press("2")...)
}

func TestGoldenReconnecting(t *testing.T) {
	snap := fixtureSnapshot()
	snap.Connection = model.Connection{Connected: false, Since: fixedNow.Add(-95 * time.Second),
		LastError: "Get \"https://api.ci-ln-x7k2m9b.aws.example.com:6443/api\": dial tcp: i/o timeout"}
	goldenScreen(t, snap)
}

// actionProgram runs the console with runner as a real program (teatest) at 120×40, showing the fixture.
func actionProgram(t *testing.T, runner view.Runner) *teatest.TestModel {
	t.Helper()
	return actionProgramAt(t, runner, 120, 40)
}

// actionProgramAt is actionProgram on a terminal of w × h.
func actionProgramAt(t *testing.T, runner view.Runner, w, h int) *teatest.TestModel {
	t.Helper()
	opts := testOptions()
	opts.Runner = runner
	snapshots := make(chan *model.Snapshot, 1)
	snapshots <- fixtureSnapshot()
	tm := teatest.NewTestModel(t, New(NewProgramContext(opts), snapshots), teatest.WithInitialTermSize(w, h))
	waitForScreen(t, tm, "context admin")
	return tm
}

func waitForScreen(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(text)) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// finalScreen quits the program and compares its last screen with the golden file. A run still waiting
// (on a question or on the test) is cancelled, so no action outlives its test.
func finalScreen(t *testing.T, tm *teatest.TestModel) {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if !ok {
		t.Fatal("the program did not return the console model")
	}
	if final.running != nil {
		t.Cleanup(final.running.cancel)
	}
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, final.View().Content)))
}

// TestGoldenRebootForm: R on a Windows node opens the confirmation with the documented drain options;
// the cursor is moved to "disable eviction" and the box ticked, which shows the selection and the warning
// the next enter on Run gives.
func TestGoldenRebootForm(t *testing.T) {
	tm := actionProgram(t, newScriptedRunner())
	tm.Send(keyPress("R"))
	waitForScreen(t, tm, "Restart-Computer")
	for _, k := range []string{"up", "space", "down", "enter"} {
		tm.Send(keyPress(k))
	}
	waitForScreen(t, tm, "DELETES pods")
	finalScreen(t, tm)
}

// TestGoldenPDBQuestion: the reboot's drain is blocked by a PodDisruptionBudget and asks what to do; the
// steps so far are in the panel below.
func TestGoldenPDBQuestion(t *testing.T) {
	runner := newScriptedRunner()
	tm := actionProgram(t, runner)
	tm.Send(keyPress("R"))
	waitForScreen(t, tm, "Restart-Computer")
	tm.Send(keyPress("enter"))
	waitForScreen(t, tm, "sql-pdb")
	tm.Send(keyPress("right"))
	finalScreen(t, tm)
}

// TestGoldenActionPanel: a reboot answered "Delete instead" (confirmed with y) runs to the end; the panel
// shows every step, the log lines and the outcome, and says esc closes it.
func TestGoldenActionPanel(t *testing.T)       { goldenActionPanel(t, 120, 40) }
func TestGoldenActionPanel80x24(t *testing.T)  { goldenActionPanel(t, 80, 24) }
func TestGoldenActionPanel160x45(t *testing.T) { goldenActionPanel(t, 160, 45) }
func TestGoldenPDBQuestion80x24(t *testing.T)  { goldenPDBQuestion(t, 80, 24) }
func TestGoldenPDBQuestion160x45(t *testing.T) { goldenPDBQuestion(t, 160, 45) }

// TestGoldenHelp80x24 / 160x45: ? shows every key group, the action keys included, at both sizes.
func TestGoldenHelp80x24(t *testing.T) {
	goldenScreenAt(t, withRunner(), 80, 24, fixtureSnapshot(), keyPress("?"))
}
func TestGoldenHelp160x45(t *testing.T) {
	goldenScreenAt(t, withRunner(), 160, 45, fixtureSnapshot(), keyPress("?"))
}

// goldenPDBQuestion: the reboot's drain blocked by a PodDisruptionBudget, its question open, at w × h.
func goldenPDBQuestion(t *testing.T, w, h int) {
	tm := actionProgramAt(t, newScriptedRunner(), w, h)
	tm.Send(keyPress("R"))
	waitForScreen(t, tm, "Restart-Computer")
	tm.Send(keyPress("enter"))
	waitForScreen(t, tm, "sql-pdb")
	finalScreen(t, tm)
}

func goldenActionPanel(t *testing.T, w, h int) {
	runner := newScriptedRunner()
	tm := actionProgramAt(t, runner, w, h)
	tm.Send(keyPress("R"))
	waitForScreen(t, tm, "Restart-Computer")
	tm.Send(keyPress("enter"))
	waitForScreen(t, tm, "sql-pdb")
	for _, k := range []string{"right", "right", "enter", "y"} {
		tm.Send(keyPress(k))
	}
	select {
	case answer := <-runner.answers:
		if answer != "disable-eviction" {
			t.Fatalf("answered %q", answer)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the question was not answered")
	}
	close(runner.release)
	waitForScreen(t, tm, "SUCCEEDED")
	finalScreen(t, tm)
}

// TestGoldenBYOHStall80x24: with WMCO installed, one wrong windows-instances entry stalls every BYOH host;
// the header's banner line says so on every view, naming the entry and the command that fixes it.
func TestGoldenBYOHStall80x24(t *testing.T) {
	goldenScreenAt(t, withRunner(), 80, 24, byohSnapshot())
}

// TestGoldenBYOHStallMachineSets80x24: the BYOH group's header says it too, above the entry and its problem.
func TestGoldenBYOHStallMachineSets80x24(t *testing.T) {
	goldenScreenAt(t, withRunner(), 80, 24, byohSnapshot(), press("2")...)
}

func TestGoldenBYOHStall160x45(t *testing.T) {
	goldenScreenAt(t, withRunner(), 160, 45, byohSnapshot(), press("2")...)
}
