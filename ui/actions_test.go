package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/theme"
)

func TestStepRowsWrapAtTheWidth(t *testing.T) {
	st := styles.New(theme.New(theme.Options{NoColor: true}))
	steps := []ActionUpdate{{Step: "cordon", State: StepDone}, {Step: "drain", State: StepDone, Progress: 2, Total: 3},
		{Step: "restart", State: StepRunning}, {Step: "down"}}
	rows := stepRows(&st, steps, 30)
	require.Len(t, rows, 2)
	assert.Equal(t, "✓ cordon   ✓ drain (2/3)", stripANSI(rows[0]))
	assert.Equal(t, "… restart   · down", stripANSI(rows[1]))
	assert.Len(t, stepRows(&st, steps, 200), 1, "everything on one line when it fits")
	assert.Empty(t, stepRows(&st, nil, 30))
}

func TestActionPanelEnvelope(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m.running = &runningAction{id: 7, req: request.Reboot{Nodes: []string{"ip-127-0-45-7"}}, msgs: make(chan tea.Msg)}
	m.openActionPanel(7, "reboot ip-127-0-45-7")
	assert.Equal(t, 22, m.ctx.Layout.Body.H, "the list makes room for the panel")
	ev := func(id ActionID, e event.Event) tea.Msg {
		e.Time, e.Target = fixedNow, "ip-127-0-45-7"
		return actionEventMsg{ID: id, Event: e}
	}
	m = update(m,
		ev(7, event.Event{Kind: event.StepDone, Step: "drain node"}),
		ev(7, event.Event{Kind: event.StepProgress, Step: "reboot host", N: 1, Of: 3}),
		ev(7, event.Event{Kind: event.StepLog, Message: "waiting for SSH on 127.0.45.7:22"}),
		ev(8, event.Event{Kind: event.StepLog, Message: "from another run"}),
	)
	out := strings.Join(screenLines(t, m), "\n")
	assert.Contains(t, out, "reboot ip-127-0-45-7")
	assert.Contains(t, out, "✓ drain node")
	assert.Contains(t, out, "… reboot host (1/3)")
	assert.Contains(t, out, "waiting for SSH on 127.0.45.7:22")
	assert.NotContains(t, out, "from another run", "updates of another run are not shown here")
	m.closeActionPanel()
	assert.Equal(t, 34, m.ctx.Layout.Body.H)
}

// TestActionPanelWrapsAndNamesEachNode: a long hint wraps instead of being cut (its end is the how-to); a
// single-node action does not repeat the node on each line; several nodes get one step row each, named
// once, and every node's end is in the panel.
func TestActionPanelWrapsAndNamesEachNode(t *testing.T) {
	st := styles.New(theme.New(theme.Options{NoColor: true}))
	at := func(e event.Event) event.Event { e.Time = fixedNow; return e }

	one := &actionPanel{title: "reboot win-a"}
	one.apply(updateFromEvent(at(event.Event{Kind: event.StepStarted, Target: "win-a", Step: "drain", Message: "evicting 2 pods"}), false))
	one.apply(updateFromEvent(at(event.Event{Kind: event.Finished, Target: "win-a", Outcome: event.Cancelled, Message: "reboot cancelled",
		Hint: "node left cordoned: run wmcon uncordon win-a to make it schedulable again"}), false))
	out := stripANSI(one.view(&st, 40, 14, nil))
	assert.Contains(t, out, "12:00:00 evicting 2 pods", "no node name on a single node's lines")
	assert.NotContains(t, out, "12:00:00 win-a")
	flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ", "╭", " ", "╰", " ", "─", " ", "╮", " ", "╯", " ").Replace(out)), " ")
	assert.Contains(t, flat, "schedulable again", "the end of the hint is shown, wrapped")

	many := &actionPanel{title: request.Reboot{Nodes: []string{"win-a", "win-b"}}.Title()}
	for _, e := range []event.Event{
		{Kind: event.StepDone, Target: "win-a", Step: "cordon"}, {Kind: event.StepDone, Target: "win-b", Step: "cordon"},
		{Kind: event.StepDone, Target: "win-a", Step: "drain"},
		{Kind: event.Finished, Target: "win-a", Outcome: event.Succeeded, Message: "rebooted in 3m"},
		{Kind: event.Finished, Target: "win-b", Outcome: event.Failed, Message: "not rebooted", Err: "host unreachable"},
	} {
		many.apply(updateFromEvent(at(e), true))
	}
	out = stripANSI(many.view(&st, 80, 16, nil))
	assert.Contains(t, out, "reboot 2 nodes: win-a, win-b", "a readable title, not a Go slice")
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		rows = append(rows, strings.TrimSpace(strings.Trim(l, "│")))
	}
	assert.Subset(t, rows, []string{"win-a:", "✓ cordon   ✓ drain", "win-b:", "✓ cordon"}, "one step row per node, named once")
	assert.Contains(t, out, "win-a: SUCCEEDED rebooted in 3m")
	assert.Contains(t, out, "win-b: FAILED not rebooted")
}

func TestRequestTitles(t *testing.T) {
	assert.Equal(t, "reboot win-a", request.Reboot{Nodes: []string{"win-a"}}.Title())
	assert.Equal(t, "cordon 5 nodes: a, b, c and 2 more", request.Cordon{Nodes: []string{"a", "b", "c", "d", "e"}}.Title())
}

// TestActionPanelNamesTheAuditLog: a change's end names the audit log its record went to, at 80 and 160
// columns (issue 25, Also).
func TestActionPanelNamesTheAuditLog(t *testing.T) {
	st := styles.New(theme.New(theme.Options{NoColor: true}))
	for _, width := range []int{80, 160} {
		p := &actionPanel{title: "cordon win-a"}
		p.apply(updateFromEvent(event.Event{Time: fixedNow, Kind: event.Finished, Target: "win-a", Outcome: event.Succeeded,
			Message: "cordoned", Audit: "/tmp/wmcon-demo-123/audit.log"}, false))
		out := stripANSI(p.view(&st, width, 10, nil))
		flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ", "╭", " ", "╰", " ", "─", " ", "╮", " ", "╯", " ").Replace(out)), " ")
		assert.Contains(t, flat, "SUCCEEDED cordoned — recorded in the audit log /tmp/wmcon-demo-123/audit.log", "at %d columns", width)
	}
}
