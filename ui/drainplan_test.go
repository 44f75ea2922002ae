package ui

import (
	"context"
	"errors"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/view"
)

// planReader is a view.DrainPlanFunc that records the options it was asked with and answers from plans.
type planReader struct {
	mu    sync.Mutex
	asked []request.DrainOptions
	err   error
}

func (r *planReader) read(_ context.Context, nodes []string, opts request.DrainOptions) ([]model.DrainPlan, error) {
	r.mu.Lock()
	r.asked = append(r.asked, opts)
	r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	var out []model.DrainPlan
	for _, n := range nodes {
		p := model.DrainPlan{Node: n, Pods: []string{"windows-apps/iis-frontend-1", "windows-apps/sql-0"}}
		p.Budgets = []model.PlanBudget{{Name: "windows-apps/sql-pdb", DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1,
			Pods: []string{"windows-apps/sql-0"}}}
		if !opts.Force {
			p = model.DrainPlan{Node: n, Blocker: "the drain could not start: cannot delete Pods that declare no controller (use --force to override): windows-apps/scratch"}
		}
		out = append(out, p)
	}
	return out, nil
}

func planModel(t *testing.T, r *planReader) Model {
	t.Helper()
	opts := testOptions()
	opts.Runner = newScriptedRunner()
	opts.DrainPlan = r.read
	m := New(NewProgramContext(opts), nil)
	m = update(m, snapshotMsg{fixtureSnapshot()})
	return update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
}

// TestRebootConfirmationShowsWhatTheDrainWouldEvict: R reads the drain's plan and the confirmation lists
// the pods and the PodDisruptionBudget that would block; toggling force reads it again with the new
// options, and an answer to older options is dropped.
func TestRebootConfirmationShowsWhatTheDrainWouldEvict(t *testing.T) {
	r := &planReader{}
	m := planModel(t, r)
	m, cmd := keyCmd(m, "R")
	require.True(t, isTop[*drainForm](m))
	assert.Contains(t, screen(m), "reading what the drain would evict")
	m = pump(t, m, cmd, func(m Model) bool { return !topOf[*drainForm](m).plan.loading })
	out := screen(m)
	assert.Contains(t, out, "evicts 2 pod(s): windows-apps/iis-frontend-1, windows-apps/sql-0")
	assert.Contains(t, out, "PodDisruptionBudget windows-apps/sql-pdb: 0 disruption(s) allowed")
	assert.Contains(t, out, "WOULD BLOCK")
	require.Len(t, r.asked, 1)
	assert.Equal(t, request.DefaultDrainOptions(), r.asked[0], "the plan of the options the form shows")

	form := topOf[*drainForm](m)
	stale := drainPlanMsg{form: form, seq: form.plan.seq}
	m, cmd = keyCmd(update(m, press("up", "up")...), "space") // the cursor on force: untick it
	require.NotNil(t, cmd, "force changes which pods go: the plan is read again")
	m = update(m, stale) // the answer to the older options arrives late: dropped
	assert.True(t, topOf[*drainForm](m).plan.loading)
	m = pump(t, m, cmd, func(m Model) bool { return !topOf[*drainForm](m).plan.loading })
	assert.False(t, r.asked[len(r.asked)-1].Force)
	assert.Contains(t, screen(m), "cannot delete Pods that declare no controller")
}

func TestRebootConfirmationSaysWhenThePlanCannotBeRead(t *testing.T) {
	m := planModel(t, &planReader{err: errors.New("pods is forbidden")})
	m, cmd := keyCmd(m, "R")
	m = pump(t, m, cmd, func(m Model) bool { return !topOf[*drainForm](m).plan.loading })
	assert.Contains(t, screen(m), "could not read what the drain would evict: pods is forbidden")
	_, cmd = keyCmd(m, "enter")
	require.NotNil(t, cmd, "the reboot can still be confirmed")
	assert.True(t, cmd().(view.FormResult).Confirmed)
}

// TestGoldenRebootFormWithPlan80x24 / 160x45: the confirmation with the plan and a blocking budget.
func TestGoldenRebootFormWithPlan80x24(t *testing.T)  { goldenRebootPlan(t, 80, 24) }
func TestGoldenRebootFormWithPlan160x45(t *testing.T) { goldenRebootPlan(t, 160, 45) }

func goldenRebootPlan(t *testing.T, w, h int) {
	opts := testOptions()
	opts.Runner = newScriptedRunner()
	opts.DrainPlan = (&planReader{}).read
	snapshots := make(chan *model.Snapshot, 1)
	snapshots <- fixtureSnapshot()
	tm := teatest.NewTestModel(t, New(NewProgramContext(opts), snapshots), teatest.WithInitialTermSize(w, h))
	waitForScreen(t, tm, "context admin")
	tm.Send(keyPress("R"))
	waitForScreen(t, tm, "WOULD")
	finalScreen(t, tm)
}
