package ui

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
)

func TestLogViewFollowsAndClosesBackToTheList(t *testing.T) {
	requested := make(chan logline.Request, 1)
	opts := testOptions()
	opts.Logs = func(ctx context.Context, req logline.Request, out func([]logline.Line), notices event.Sink) error {
		requested <- req
		out([]logline.Line{
			{Node: req.Nodes[0].Name, Service: req.Service, Text: `I1122 06:35:33.597886    2856 kubelet.go:2421] "Syncing pods"`},
			{Node: req.Nodes[0].Name, Service: req.Service, Text: `E1122 06:35:38.597506    2856 kubelet_pods.go:401] "Error on log rotation"`},
		})
		<-ctx.Done()
		return nil
	}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	node, _ := m.selectedNode()

	m, cmd := keyCmd(m, "l")
	require.True(t, isTop[*logsView](m))
	m = pump(t, m, cmd, func(m Model) bool { return topOf[*logsView](m).logs.Buffer().Len() == 2 })
	req := <-requested
	assert.Equal(t, "kubelet", req.Service)
	assert.True(t, req.Follow)
	assert.Equal(t, node.Name, req.Nodes[0].Name)
	out := screen(m)
	assert.Contains(t, out, "Syncing pods")
	assert.Contains(t, out, "Error on log rotation")

	m, cmd = keyCmd(m, "q")
	require.NotNil(t, cmd)
	m = update(m, cmd())
	assert.True(t, onList(m), "closing the log view returns to the list")
	assert.Empty(t, m.stack, "the log view left the stack")
}

func TestLogsOfMarkedNodesAreMerged(t *testing.T) {
	requested := make(chan logline.Request, 1)
	opts := testOptions()
	opts.Runner = newScriptedRunner()
	opts.Logs = func(ctx context.Context, req logline.Request, out func([]logline.Line), notices event.Sink) error {
		requested <- req
		<-ctx.Done()
		return nil
	}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	first, _ := m.selectedNode()
	m = update(m, press("space")...)
	second, _ := m.selectedNode()
	m = update(m, press("space")...)
	m, cmd := keyCmd(m, "l")
	require.True(t, isTop[*logsView](m))
	go cmd()
	select {
	case req := <-requested:
		require.Len(t, req.Nodes, 2)
		assert.Equal(t, []string{first.Name, second.Name}, []string{req.Nodes[0].Name, req.Nodes[1].Name})
	case <-time.After(10 * time.Second):
		t.Fatal("the log stream was not started")
	}
	topOf[*logsView](m).logs.Stop()
}

// TestLogSaveResultReachesTheScreen: s, a path, enter: the save runs as a command and its result ("saved N
// lines to PATH", or why not) shows in the log view's status line through the console's root.
func TestLogSaveResultReachesTheScreen(t *testing.T) {
	opts := testOptions()
	opts.Logs = func(ctx context.Context, req logline.Request, out func([]logline.Line), notices event.Sink) error {
		out([]logline.Line{{Node: req.Nodes[0].Name, Service: req.Service, Text: "I1122 06:35:33.597886 2856 kubelet.go:2421] one"}})
		<-ctx.Done()
		return nil
	}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	m, cmd := keyCmd(m, "l")
	m = pump(t, m, cmd, func(m Model) bool { return topOf[*logsView](m).logs.Buffer().Len() == 1 })
	t.Cleanup(topOf[*logsView](m).logs.Stop)

	saveAs := func(m Model, path string) Model {
		m = update(m, press("s")...)
		for range 200 {
			m = update(m, press("backspace")...)
		}
		m = update(m, typeText(path)...)
		m, cmd := keyCmd(m, "enter")
		require.NotNil(t, cmd, "the save runs as a command")
		return update(m, cmd())
	}
	path := t.TempDir() + "/kubelet.log"
	m = saveAs(m, path)
	assert.Contains(t, screen(m), "saved 1 lines to "+path)
	m = saveAs(m, t.TempDir()+"/missing/dir/kubelet.log")
	assert.Contains(t, screen(m), "not saved:")
}
