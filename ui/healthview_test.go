package ui

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
)

func TestHealthViewRestartsAStoppedService(t *testing.T) {
	runner := recordingRunner{requests: make(chan request.Request, 1)}
	triaged := make(chan string, 4)
	var calls atomic.Int32
	opts := testOptions()
	opts.Runner = runner
	opts.Triage = func(_ context.Context, node string) (diagnosis.Report, error) {
		triaged <- node
		calls.Add(1)
		return diagnosis.Report{Node: node, Checks: []diagnosis.Check{
			{ID: "service/kubelet", Title: "Service kubelet", Status: diagnosis.CheckFail, Detail: "stopped", Service: "kubelet", Restartable: true},
			{ID: "ready", Title: "Node Ready", Status: diagnosis.CheckOK, Detail: "Ready"},
		}}, nil
	}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	node, _ := m.selectedNode()

	m, cmd := keyCmd(m, "h")
	require.True(t, isTop[*healthView](m))
	m = pump(t, m, cmd, func(m Model) bool { _, ok := topOf[*healthView](m).health.Report(); return ok })
	assert.Equal(t, node.Name, <-triaged)
	out := screen(m)
	assert.Contains(t, out, "Health of "+node.Name)
	assert.Contains(t, out, "Service kubelet")

	m, cmd = keyCmd(m, "r")
	m = pump(t, m, cmd, func(m Model) bool { return m.running != nil && m.running.done && calls.Load() == 2 })
	req := <-runner.requests
	assert.Equal(t, request.RestartService{Nodes: []string{node.Name}, Service: "kubelet"}, req)
	assert.Equal(t, node.Name, <-triaged, "the node is checked again after the restart")

	require.NotNil(t, m.panel, "the restart's panel is open over the view")
	m = update(m, press("esc")...)
	assert.Nil(t, m.panel, "the first esc closes the finished action's panel")
	require.True(t, isTop[*healthView](m), "and leaves the view under it open")
	m, cmd = keyCmd(m, "esc")
	require.NotNil(t, cmd, "esc asks the root to close the health view")
	m = update(m, cmd())
	assert.True(t, onList(m))
	assert.Empty(t, m.stack, "the health view left the stack")
}

// TestComponentsShareTheConsoleTheme: --ascii and --no-color reach the health view through the one theme.
func TestComponentsShareTheConsoleTheme(t *testing.T) {
	opts := testOptions()
	opts.ASCII = true
	opts.Triage = func(_ context.Context, node string) (diagnosis.Report, error) {
		return diagnosis.Report{Node: node, Checks: []diagnosis.Check{
			{ID: "service/kubelet", Title: "Service kubelet", Status: diagnosis.CheckFail, Detail: "stopped", Service: "kubelet"},
		}}, nil
	}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	m, cmd := keyCmd(m, "h")
	m = pump(t, m, cmd, func(m Model) bool { _, ok := topOf[*healthView](m).health.Report(); return ok })
	content := m.View().Content
	assert.Contains(t, stripANSI(content), "> x Service kubelet", "ASCII cursor and failure marks")
	assert.NotContains(t, content, "\x1b[9", "no colours")
}

// TestHealthViewChecksAgainWhenTheNodeChanges: a snapshot in which the node's readiness changed runs the
// triage again; one that changes nothing the triage reads does not.
func TestHealthViewChecksAgainWhenTheNodeChanges(t *testing.T) {
	triaged := make(chan string, 4)
	opts := testOptions()
	opts.Triage = func(_ context.Context, node string) (diagnosis.Report, error) {
		triaged <- node
		return diagnosis.Report{Node: node}, nil
	}
	m := New(NewProgramContext(opts), nil)
	snap := fixtureSnapshot()
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{snap})
	m, cmd := keyCmd(m, "h")
	m = pump(t, m, cmd, func(m Model) bool { _, ok := topOf[*healthView](m).health.Report(); return ok })
	<-triaged

	same := fixtureSnapshot()
	same.Nodes[0].Created = same.Nodes[0].Created.Add(-1) // not something the triage reads
	next, cmd := m.Update(snapshotMsg{same})
	m = next.(Model)
	m = pumpAll(m, cmd)
	assert.Empty(t, triaged, "an unrelated change runs no triage")

	changed := fixtureSnapshot()
	changed.Nodes[0].Status = model.NodeNotReady
	next, cmd = m.Update(snapshotMsg{changed})
	m = next.(Model)
	pumpAll(m, cmd)
	select {
	case node := <-triaged:
		assert.Equal(t, changed.Nodes[0].Name, node)
	default:
		t.Fatal("the node turned NotReady and was not checked again")
	}
}

// TestHealthRefusesLinuxNodes: h on a Linux node says why instead of opening an empty view.
func TestHealthRefusesLinuxNodes(t *testing.T) {
	opts := testOptions()
	opts.Triage = func(context.Context, string) (diagnosis.Report, error) { return diagnosis.Report{}, nil }
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	for i := 0; i < 20; i++ {
		if n, ok := m.selectedNode(); ok && !n.Windows {
			break
		}
		m = update(m, press("j")...)
	}
	m = update(m, press("h")...)
	assert.False(t, isTop[*healthView](m))
	assert.Contains(t, screen(m), "is a Linux node: the health view checks what WMCO runs on Windows nodes")
}

// pumpAll runs cmd and what it leads to, batches included, skipping commands that do not answer within a
// moment (ticks, waits on channels): enough for commands that finish at once, such as a stub's triage.
// pumpWait is how long pumpAll waits for a command before taking it for a timer (a tick, a re-check)
// and leaving it: long enough for any other command on a loaded machine (200 ms was not, in CI). A
// timer shorter than this would be followed forever: pump those paths with pump and a condition.
const pumpWait = 2 * time.Second

func pumpAll(m Model, cmd tea.Cmd) Model {
	if cmd == nil {
		return m
	}
	msgs := make(chan tea.Msg, 1)
	go func() { msgs <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-msgs:
	case <-time.After(pumpWait):
		return m
	}
	switch msg := msg.(type) {
	case nil:
		return m
	case tea.BatchMsg:
		for _, c := range msg {
			m = pumpAll(m, c)
		}
		return m
	}
	next, more := m.Update(msg)
	return pumpAll(next.(Model), more)
}

// TestHealthViewShowsTheNodesHistory: the health view opens with the node's figures the console has,
// and the next metrics read reaches it.
func TestHealthViewShowsTheNodesHistory(t *testing.T) {
	opts := metricsOptions()
	opts.Triage = func(_ context.Context, node string) (diagnosis.Report, error) {
		return diagnosis.Report{Node: node, Checks: []diagnosis.Check{{ID: "ready", Title: "Node Ready", Status: diagnosis.CheckOK, Detail: "Ready"}}}, nil
	}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	var targets []model.MetricsTarget
	for _, n := range fixtureSnapshot().Nodes {
		targets = append(targets, model.MetricsTarget{Name: n.Name, IP: n.InternalIP, Windows: n.Windows})
	}
	m = update(m, metricsLoadedMsg{seq: m.metrics.seq, rep: fixtureMetrics(context.Background(), targets)})
	cmd := m.openHealth(nodeBusy)
	m = pump(t, m, cmd, func(m Model) bool { _, ok := topOf[*healthView](m).health.Report(); return ok })
	out := screen(m)
	assert.Contains(t, out, "CPU          97%")
	assert.Contains(t, out, "min 20%  max 97%")
	assert.Contains(t, out, "last 12m, one point per 30s · windows_exporter via the API server's node proxy")

	rep := fixtureMetrics(context.Background(), targets)
	rep.Nodes[0].CPUPercent = f(99)
	m.metrics.busy = true
	m = update(m, metricsLoadedMsg{seq: m.metrics.seq, rep: rep})
	assert.Contains(t, screen(m), "CPU          99%", "a new read reaches the open view")

	cmd = m.openHealth(nodeDown)
	m = pump(t, m, cmd, func(m Model) bool { _, ok := topOf[*healthView](m).health.Report(); return ok })
	assert.Contains(t, screen(m), "Metrics: not available: the windows_exporter service is not running")
}
