package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui/theme"
)

func TestStepRowsWrapAtTheWidth(t *testing.T) {
	st := NewStyles(theme.New(theme.Options{NoColor: true}))
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
	m.running = &runningAction{id: 7, req: request.Reboot{Nodes: []string{"ip-10-0-45-7"}}, msgs: make(chan tea.Msg)}
	m.openActionPanel(7, "reboot ip-10-0-45-7")
	assert.Equal(t, 22, m.ctx.Layout.Body.H, "the list makes room for the panel")
	ev := func(id ActionID, e event.Event) tea.Msg {
		e.Time, e.Target = fixedNow, "ip-10-0-45-7"
		return actionEventMsg{ID: id, Event: e}
	}
	m = update(m,
		ev(7, event.Event{Kind: event.StepDone, Step: "drain node"}),
		ev(7, event.Event{Kind: event.StepProgress, Step: "reboot host", N: 1, Of: 3}),
		ev(7, event.Event{Kind: event.StepLog, Message: "waiting for SSH on 10.0.45.7:22"}),
		ev(8, event.Event{Kind: event.StepLog, Message: "from another run"}),
	)
	out := strings.Join(screenLines(t, m), "\n")
	assert.Contains(t, out, "reboot ip-10-0-45-7")
	assert.Contains(t, out, "✓ drain node")
	assert.Contains(t, out, "… reboot host (1/3)")
	assert.Contains(t, out, "waiting for SSH on 10.0.45.7:22")
	assert.NotContains(t, out, "from another run", "updates of another run are not shown here")
	m.closeActionPanel()
	assert.Equal(t, 34, m.ctx.Layout.Body.H)
}
