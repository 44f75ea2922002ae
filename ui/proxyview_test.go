package ui

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/proxy"
)

// proxyReport is a cluster proxy with one node in step, one out of step and one that could not be read.
func proxyReport() model.ProxyReport {
	return model.ProxyReport{
		Cluster: model.Proxy{HTTP: "http://proxy.corp:3128", HTTPS: "http://proxy.corp:3128", NoProxy: ".cluster.local",
			TrustedCA: []byte("PEM"), TrustedCAName: "user-ca-bundle"},
		Nodes: []model.ProxyNodeStatus{
			{Node: "win-a", CABundle: model.CAInStep},
			{Node: "win-b", Drift: true, CABundle: model.CADiffers, Vars: []model.ProxyVar{
				{Name: "HTTP_PROXY", Want: "http://proxy.corp:3128", Have: "http://proxy.corp:3128"},
				{Name: "NO_PROXY", Want: ".cluster.local", Drift: true}}},
			{Node: "win-c", Error: "ssh: connection refused"},
		}}
}

func TestProxyViewShowsDriftAndSyncsTheNodesOutOfStep(t *testing.T) {
	runner := recordingRunner{requests: make(chan request.Request, 1)}
	opts := testOptions()
	opts.Runner = runner
	opts.Proxy = func(context.Context) (model.ProxyReport, error) { return proxyReport(), nil }
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	assert.Contains(t, screenLines(t, m)[39], "P proxy", "the list offers the proxy view")

	m, cmd := keyCmd(m, "P")
	require.True(t, isTop[*proxy.View](m))
	m = pump(t, m, cmd, func(m Model) bool { return topOf[*proxy.View](m).Loaded() })
	out := screen(m)
	assert.Contains(t, out, `HTTPS_PROXY  "http://proxy.corp:3128"`)
	assert.Contains(t, out, "user-ca-bundle (3 bytes)")
	assert.Contains(t, out, "2 of 3 Windows nodes out of step")
	assert.Contains(t, out, "win-a  in step")
	assert.Contains(t, out, `NO_PROXY     has (not set), wants ".cluster.local"`)
	assert.NotContains(t, out, "HTTP_PROXY   has", "a variable in step is not listed as drift")
	assert.Contains(t, out, "CA bundle    differs")
	assert.Contains(t, out, "win-c  cannot read: ssh: connection refused")

	m, cmd = keyCmd(m, "s")
	require.NotNil(t, cmd)
	m = update(m, cmd())
	require.True(t, isTop[*dialog.Confirm](m), "a sync asks first")
	assert.Contains(t, screen(m), "Sync the cluster proxy to 2 node(s)?")
	m, cmd = keyCmd(m, "y")
	m = pumpAll(m, cmd)
	select {
	case req := <-runner.requests:
		sync, ok := req.(request.ProxySync)
		require.True(t, ok, "%T", req)
		assert.Equal(t, []string{"win-b", "win-c"}, sync.Nodes, "the nodes out of step and the unreadable one")
	case <-time.After(5 * time.Second):
		t.Fatal("the sync did not start")
	}
}

func TestProxyViewReadOnlyHasNoSync(t *testing.T) {
	opts := testOptions()
	opts.ReadOnly = true
	opts.Runner = recordingRunner{requests: make(chan request.Request, 1)}
	opts.Proxy = func(context.Context) (model.ProxyReport, error) { return proxyReport(), nil }
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	m, cmd := keyCmd(m, "P")
	m = pump(t, m, cmd, func(m Model) bool { return topOf[*proxy.View](m).Loaded() })
	assert.NotContains(t, screenLines(t, m)[39], "sync")
	_, cmd = keyCmd(m, "s")
	assert.Nil(t, cmd, "s does nothing read-only")
}

// TestGoldenProxy is the Proxy view as a real program draws it.
func TestGoldenProxy(t *testing.T) {
	opts := testOptions()
	opts.Runner = recordingRunner{requests: make(chan request.Request, 1)}
	opts.Proxy = func(context.Context) (model.ProxyReport, error) { return proxyReport(), nil }
	snapshots := make(chan *model.Snapshot, 1)
	snapshots <- fixtureSnapshot()
	tm := teatest.NewTestModel(t, New(NewProgramContext(opts), snapshots), teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("context admin")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	tm.Send(keyPress("P"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("cannot read")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	require.NoError(t, tm.Quit())
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	require.True(t, ok)
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, final.View().Content)))
}

// TestProxyViewMasksTheProxyPassword: the cluster's proxy URL is shown with its userinfo masked.
func TestProxyViewMasksTheProxyPassword(t *testing.T) {
	rep := proxyReport()
	rep.Cluster.HTTP, rep.Cluster.HTTPS = "http://admin:hunter2@127.0.0.1:3128", "admin:hunter2@127.0.0.1:3129"
	opts := testOptions()
	opts.Proxy = func(context.Context) (model.ProxyReport, error) { return rep, nil }
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	m, cmd := keyCmd(m, "P")
	m = pump(t, m, cmd, func(m Model) bool { return topOf[*proxy.View](m).Loaded() })
	out := screen(m)
	assert.NotContains(t, out, "hunter2")
	assert.Contains(t, out, `HTTP_PROXY   "http://REDACTED@127.0.0.1:3128"`)
	assert.Contains(t, out, `HTTPS_PROXY  "REDACTED@127.0.0.1:3129"`)
}
