package ui

import (
	"context"
	"sync/atomic"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/request"
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
