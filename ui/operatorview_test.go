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

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/operator"
)

// operatorRunner answers the Operator view's reads as the real actions report them, and hands every other
// request to the test; the uninstall asks its question as the real one does.
type operatorRunner struct{ requests chan request.Request }

func (r operatorRunner) Run(ctx context.Context, req request.Request, sink event.Sink) error {
	rep := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Targets()[0]}
	switch req.(type) {
	case request.OperatorStatus:
		for _, l := range []string{"namespace openshift-windows-machine-config-operator: present",
			"OperatorGroup windows-machine-config-operator targets [openshift-windows-machine-config-operator]",
			"Subscription windows-machine-config-operator: source redhat-operators, channel stable, approval Automatic, state AtLatestKnown",
			"CSV windows-machine-config-operator.v11.0.1: Succeeded install strategy completed with no errors"} {
			rep.Log("state", l)
		}
		rep.Finish(event.Succeeded, "WMCO 11.0.1 installed (CSV windows-machine-config-operator.v11.0.1 Succeeded)", "")
		return nil
	case request.KeyShow:
		rep.Log("key", "cloud-private-key: ED25519 256 bits SHA256:Vq3kV0mW2j8b4yq5bQ8n1h5Zl6Zt2s0Jx3cJ9m1N4aE")
		rep.Log("key", "windows-user-data: ED25519 SHA256:Vq3kV0mW2j8b4yq5bQ8n1h5Zl6Zt2s0Jx3cJ9m1N4aE (matches cloud-private-key)")
		rep.Finish(event.Succeeded, "cloud-private-key: ED25519 256 bits SHA256:Vq3kV0mW2j8b4yq5bQ8n1h5Zl6Zt2s0Jx3cJ9m1N4aE", "")
		return nil
	case request.OperatorUninstall:
		r.requests <- req
		ans, err := rep.Ask(ctx, event.Question{Title: "Uninstall WMCO?", Detail: []string{"Windows nodes, secrets and the namespace stay"},
			Choices: []event.Choice{{Key: "keep", Label: "keep it"}, {Key: "uninstall", Label: "uninstall", Confirm: "Delete the Subscription and CSV of WMCO?"}}})
		if err != nil || ans != "uninstall" {
			rep.Finish(event.Cancelled, "nothing changed", "")
			return nil
		}
		rep.Finish(event.Succeeded, "WMCO uninstalled; Windows nodes left as they are", "")
		return nil
	}
	r.requests <- req
	rep.Finish(event.Succeeded, "done", "")
	return nil
}

func operatorModel(t *testing.T, readOnly bool) (Model, operatorRunner) {
	runner := operatorRunner{requests: make(chan request.Request, 4)}
	opts := testOptions()
	opts.Runner, opts.ReadOnly, opts.KeyFile = runner, readOnly, "/home/admin/.ssh/id_ed25519"
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	m, cmd := keyCmd(m, "O")
	require.True(t, isTop[*operator.View](m), "O opens the Operator view")
	m = pump(t, m, cmd, func(m Model) bool { return topOf[*operator.View](m).Loaded() })
	return m, runner
}

func nextRequest(t *testing.T, r operatorRunner) request.Request {
	t.Helper()
	select {
	case req := <-r.requests:
		return req
	case <-time.After(5 * time.Second):
		t.Fatal("no request reached the runner")
		return nil
	}
}

func TestOperatorViewShowsTheOperatorAndTheKey(t *testing.T) {
	m, _ := operatorModel(t, false)
	out := screen(m)
	assert.Contains(t, out, "Operator (OLM)  (wmcon operator status)")
	assert.Contains(t, out, "WMCO 11.0.1 installed (CSV windows-machine-config-operator.v11.0.1 Succeeded)")
	assert.Contains(t, out, "Subscription windows-machine-config-operator: source redhat-operators")
	assert.Contains(t, out, "SSH key  (wmcon key show)")
	assert.Contains(t, out, "windows-user-data: ED25519 SHA256:Vq3kV0mW2j8b4yq5bQ8n1h5Zl6Zt2s0Jx3cJ9m1N4aE (matches cloud-private-key)")
	assert.Contains(t, screenLines(t, m)[39], "i install WMCO", "the help line offers the actions")

	m = update(m, keyPress("esc"))
	assert.False(t, isTop[*operator.View](m), "esc closes it")
	assert.NotContains(t, screenLines(t, m)[39], "operator & key", "quiet: the help line keeps room for the pane's keys")
	m, cmd := keyCmd(m, "?")
	m = pumpAll(m, cmd)
	assert.Contains(t, screen(m), "O operator & key", "the full help lists it")
}

func TestOperatorViewInstallsThroughTheRunner(t *testing.T) {
	m, runner := operatorModel(t, false)
	m, open := keyCmd(m, "i")
	m = update(m, open())
	require.True(t, isTop[*dialog.FieldForm](m), "i asks for the install's options")
	assert.Contains(t, screen(m), "Install WMCO through OLM")
	var cmd tea.Cmd
	for range 3 {
		m, cmd = keyCmd(m, "enter")
	}
	m = pumpAll(m, cmd)
	req, ok := nextRequest(t, runner).(request.OperatorInstall)
	require.True(t, ok)
	assert.Equal(t, request.OperatorInstall{Channel: "stable", Approval: "Automatic", Source: "redhat-operators", Wait: true}, req)
	assert.NotNil(t, m.panel, "the install runs in the action panel")

	_, err := operator.NewInstallForm(m.ctx).Build([]string{"stable", "Sometimes", "redhat-operators"})
	assert.ErrorContains(t, err, `approval "Sometimes": use Automatic or Manual`)
}

func TestOperatorViewInstallsAKey(t *testing.T) {
	m, runner := operatorModel(t, false)
	m, open := keyCmd(m, "f")
	m = update(m, open())
	require.True(t, isTop[*dialog.FieldForm](m))
	assert.Contains(t, screen(m), "/home/admin/.ssh/id_ed25519", "the console's key file is offered")
	m, cmd := keyCmd(m, "enter")
	m = pumpAll(m, cmd)
	assert.Equal(t, request.KeyInstall{File: "/home/admin/.ssh/id_ed25519"}, nextRequest(t, runner))

	require.True(t, isTop[*operator.View](m), "the view stays under the action panel")
	m, open = keyCmd(m, "n")
	m = update(m, open())
	require.True(t, isTop[*dialog.FieldForm](m), "n asks where the new key goes")
	assert.Contains(t, screen(m), "Generate a key pair")
	m, _ = keyCmd(m, "enter")
	m, cmd = keyCmd(m, "enter")
	pumpAll(m, cmd)
	gen, ok := nextRequest(t, runner).(request.KeyInstall)
	require.True(t, ok)
	assert.True(t, gen.Generate)
	assert.Equal(t, "ed25519", gen.Type)
	assert.NotEmpty(t, gen.Out)
}

func TestOperatorViewUninstallAsksInADialog(t *testing.T) {
	m, runner := operatorModel(t, false)
	m, cmd := keyCmd(m, "x")
	require.NotNil(t, cmd)
	m = pump(t, m, cmd, func(m Model) bool { return isTop[*dialog.Question](m) })
	assert.IsType(t, request.OperatorUninstall{}, nextRequest(t, runner))
	assert.Contains(t, screen(m), "Uninstall WMCO?")
	assert.Contains(t, screen(m), "Windows nodes, secrets and the namespace stay")
}

func TestOperatorViewReadOnlyOnlyShows(t *testing.T) {
	m, runner := operatorModel(t, true)
	out := screen(m)
	assert.Contains(t, out, "WMCO 11.0.1 installed")
	assert.Contains(t, out, "read-only: installing, uninstalling and changing the key are off")
	assert.NotContains(t, screenLines(t, m)[39], "install")
	for _, k := range []string{"i", "x", "f", "n"} {
		var cmd tea.Cmd
		m, cmd = keyCmd(m, k)
		m = pumpAll(m, cmd)
		assert.True(t, isTop[*operator.View](m), "%s does nothing under --read-only", k)
	}
	select {
	case req := <-runner.requests:
		t.Fatalf("a change reached the runner under --read-only: %T", req)
	default:
	}
}

func goldenOperator(t *testing.T, w, h int) {
	opts := testOptions()
	opts.Runner = operatorRunner{requests: make(chan request.Request, 4)}
	snapshots := make(chan *model.Snapshot, 1)
	snapshots <- fixtureSnapshot()
	tm := teatest.NewTestModel(t, New(NewProgramContext(opts), snapshots), teatest.WithInitialTermSize(w, h))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("context admin")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	tm.Send(keyPress("O"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("generate a key")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	require.NoError(t, tm.Quit())
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	require.True(t, ok)
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, final.View().Content)))
}

// The Operator view as a real program draws it, at the smallest supported size and a large one.
func TestGoldenOperator80x24(t *testing.T)  { goldenOperator(t, 80, 24) }
func TestGoldenOperator160x45(t *testing.T) { goldenOperator(t, 160, 45) }
