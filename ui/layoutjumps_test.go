package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/operator"
)

// uncordoned is the fixture with no node cordoned.
func uncordoned() *model.Snapshot {
	s := fixtureSnapshot()
	for i := range s.Nodes {
		s.Nodes[i].Unschedulable = false
	}
	return s
}

// TestColumnsKeepTheirWidthWhenANodeIsCordoned: at 160×45, with and without the metric columns, a node
// cordoned (then rebooting: NotReady,SchedulingDisabled) changes no column's place (the header line stays
// the same): every NAME that was whole stays whole and INTERNAL-IP stays.
func TestColumnsKeepTheirWidthWhenANodeIsCordoned(t *testing.T) {
	for _, withMetrics := range []bool{false, true} {
		m := New(NewProgramContext(testOptions()), nil)
		if withMetrics {
			m = metricsModel(t, 160, 45)
		}
		m = update(m, tea.WindowSizeMsg{Width: 160, Height: 45}, snapshotMsg{uncordoned()})
		before := screenLines(t, m)[4] // the column header
		for _, status := range []model.NodeStatus{model.NodeReady, model.NodeNotReady} {
			s := uncordoned()
			s.Nodes[0].Unschedulable, s.Nodes[0].Status = true, status
			m = update(m, snapshotMsg{s})
			assert.Equal(t, before, screenLines(t, m)[4], "metrics %v, %s,SchedulingDisabled: the columns stay put", withMetrics, status.Word())
			if withMetrics {
				continue // the fixture's long names are cut by the metric columns anyway; the header says they stay so
			}
			for _, n := range s.Nodes {
				assert.Contains(t, screen(m), n.Name, "every NAME whole")
			}
			assert.Contains(t, strings.Join(screenLines(t, m)[5:7], "\n"), s.Nodes[0].InternalIP, "INTERNAL-IP stays")
		}
	}
}

// TestOperatorViewScrollsToTheSSHKey: on a terminal too short for the whole Operator view, its last line
// says how much follows and how to scroll, and pgdn (or ↓) brings the SSH key section into view.
func TestOperatorViewScrollsToTheSSHKey(t *testing.T) {
	runner := operatorRunner{requests: make(chan request.Request, 4)}
	opts := testOptions()
	opts.Runner = runner
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 80, Height: 16}, snapshotMsg{fixtureSnapshot()})
	m, cmd := keyCmd(m, "O")
	m = pump(t, m, cmd, func(m Model) bool { return topOf[*operator.View](m).Loaded() })
	assert.NotContains(t, screen(m), "matches cloud-private-key", "the key section is below the fold")
	assert.Regexp(t, `… \d+ more lines: ↓ or pgdn scrolls`, screen(m))
	m = update(m, press("pgdown")...)
	assert.Contains(t, screen(m), "SSH key  (wmcon key show)")
	for i := 0; i < 20 && !strings.Contains(screen(m), "(matches cloud-private-key)"); i++ {
		m = update(m, press("down")...)
	}
	assert.Contains(t, screen(m), "(matches cloud-private-key)", "↓ reaches the end")
	assert.NotContains(t, screen(m), "more lines: ↓", "nothing more below")
}

// manyWarningsDoctor warns about more than an 80×24 screen holds beside the wizard's choices.
func manyWarningsDoctor(context.Context) (diagnosis.Report, error) {
	var checks []diagnosis.Check
	for i := 1; i <= 12; i++ {
		checks = append(checks, diagnosis.Check{ID: fmt.Sprint("w", i), Title: fmt.Sprint("Warning ", i), Status: diagnosis.CheckWarn,
			Detail: "something the setup can live with", Fix: "look at it when there is time"})
	}
	return diagnosis.Report{Checks: checks}, nil
}

func wizardWithWarnings(t *testing.T, w, h int) Model {
	m := wizardModel(&wizardRunner{state: setupAt(event.SetupOperator, "")}, w, h)
	m.ctx.Doctor = manyWarningsDoctor
	return keys(t, m, wizardIdle, "S")
}

// TestWizardWarningsScroll: at 80×24 the Check step's warnings that do not fit say how many more there are
// and pgdn scrolls them (the choices stay), down to the last; pgup comes back.
func TestWizardWarningsScroll(t *testing.T) {
	m := wizardWithWarnings(t, 80, 24)
	assert.Regexp(t, `… \d+ more lines: pgdn scrolls`, screen(m))
	assert.NotContains(t, screen(m), "Warning 12:")
	for i := 0; i < 10 && !strings.Contains(screen(m), "Warning 12:"); i++ {
		m = keys(t, m, wizardIdle, "pgdown")
	}
	assert.Contains(t, screen(m), "Warning 12:", "pgdn reaches the last warning")
	assert.Contains(t, screen(m), "Acknowledge the warnings", "the choices stay in view")
	m = keys(t, m, wizardIdle, "pgup", "pgup", "pgup", "pgup", "pgup")
	assert.Contains(t, screen(m), "Warning 1:")
}

func TestGoldenWizardWarnings80x24(t *testing.T) {
	m := wizardWithWarnings(t, 80, 24)
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, m.View().Content)))
}

func TestGoldenWizardWarnings160x45(t *testing.T) {
	m := wizardWithWarnings(t, 160, 45)
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, m.View().Content)))
}

// planRunner asks, as configure does, with a plan longer than a small screen.
type planRunner struct{}

func (planRunner) Run(ctx context.Context, req request.Request, sink event.Sink) error {
	rep := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Targets()[0]}
	var plan []string
	for i := 1; i <= 40; i++ {
		plan = append(plan, fmt.Sprintf("step %d: copy C:\\k\\file-%d.exe and check its sha256", i, i))
	}
	_, err := rep.Ask(ctx, event.Question{Title: "Configure 127.0.0.7 with this plan?", Detail: plan, Safe: "cancel",
		Choices: []event.Choice{{Key: "apply", Label: "Apply"}, {Key: "cancel", Label: "Cancel"}}})
	return err
}

func questionWithPlan(t *testing.T, w, h int) Model {
	opts := testOptions()
	opts.Runner = planRunner{}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: w, Height: h}, snapshotMsg{fixtureSnapshot()})
	cmd := m.start(request.Configure{Address: "127.0.0.7", User: "Administrator"})
	m = pump(t, m, cmd, func(m Model) bool { return isTop[*dialog.Question](m) })
	t.Cleanup(m.running.cancel)
	return m
}

// TestQuestionPlanScrolls: a confirmation whose plan is longer than the room above the action panel keeps
// the part of the plan that fits (not one line) with how much follows; pgdn reads on to the last step.
func TestQuestionPlanScrolls(t *testing.T) {
	m := questionWithPlan(t, 80, 24)
	assert.Contains(t, screen(m), "step 1: copy", "the plan shows")
	assert.Contains(t, screen(m), "step 2: copy", "more than one line of it")
	assert.Regexp(t, `… \d+ more lines: pgdn scrolls`, screen(m))
	assert.Contains(t, screen(m), "[ Apply ]")
	for i := 0; i < 40 && !strings.Contains(screen(m), "step 40:"); i++ {
		m = update(m, press("pgdown")...)
	}
	assert.Contains(t, screen(m), "step 40:", "pgdn reaches the end of the plan")
	assert.Contains(t, screen(m), "[ Apply ]", "the choices stay")
}

func TestGoldenQuestionPlan80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, questionWithPlan(t, 80, 24).View().Content)))
}

func TestGoldenQuestionPlan160x45(t *testing.T) {
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, questionWithPlan(t, 160, 45).View().Content)))
}

// cancelledRebootRunner ends a reboot as a cancelled one does after the cordon: the hint names the node.
type cancelledRebootRunner struct{}

func (cancelledRebootRunner) Run(_ context.Context, req request.Request, sink event.Sink) error {
	node := req.Targets()[0]
	rep := event.Reporter{Sink: sink, Action: req.Action(), Target: node, Now: func() time.Time { return fixedNow }}
	rep.Started("cordon", "cordoning")
	rep.Done("cordon", "cordoned")
	rep.Finish(event.Cancelled, "reboot cancelled at step drain after 1s",
		"the node stays cordoned and unschedulable: run wmcon uncordon "+node)
	return nil
}

func cancelledReboot(t *testing.T, w, h int) Model {
	opts := testOptions()
	opts.Runner = cancelledRebootRunner{}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: w, Height: h}, snapshotMsg{fixtureSnapshot()})
	cmd := m.start(request.Reboot{Nodes: []string{fixtureSnapshot().Nodes[0].Name}})
	return pump(t, m, cmd, func(m Model) bool { return m.running != nil && m.running.done })
}

// TestCancelledRebootHintKeepsTheNodeNameWhole: the hint of a cancelled reboot wraps between words, never
// inside the node name, so the command can be copied (80×24 and 160×45).
func TestCancelledRebootHintKeepsTheNodeNameWhole(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 45}} {
		m := cancelledReboot(t, size[0], size[1])
		var words []string // the panel's text, its lines joined: a name cut at a line's end shows as two words
		for _, l := range strings.Split(screen(m), "\n") {
			words = append(words, strings.Fields(strings.Trim(l, " │"))...)
		}
		assert.Contains(t, strings.Join(words, " "), "uncordon "+fixtureSnapshot().Nodes[0].Name, "%v", size)
	}
}

func TestGoldenCancelledReboot80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, cancelledReboot(t, 80, 24).View().Content)))
}

func TestGoldenCancelledReboot160x45(t *testing.T) {
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, cancelledReboot(t, 160, 45).View().Content)))
}
