package session

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui"
)

// consoleDriver runs the console's model as the program would, without a terminal: every command's
// message goes back to Update, and tests wait for text on the screen.
type consoleDriver struct {
	t    *testing.T
	m    tea.Model
	msgs chan tea.Msg
}

func newConsoleDriver(t *testing.T, m tea.Model, w, h int) *consoleDriver {
	d := &consoleDriver{t: t, m: m, msgs: make(chan tea.Msg, 256)}
	d.spawn(m.Init())
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	return d
}

func (d *consoleDriver) spawn(c tea.Cmd) {
	if c != nil {
		go func() { d.msgs <- c() }()
	}
}

func (d *consoleDriver) send(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			d.spawn(c)
		}
	default:
		next, cmd := d.m.Update(msg)
		d.m = next
		d.spawn(cmd)
	}
}

func (d *consoleDriver) screen() string { return ansi.Strip(d.m.View().Content) }

// press sends keys ("enter", "down" or one character).
func (d *consoleDriver) press(keys ...string) {
	for _, k := range keys {
		switch k {
		case "enter":
			d.send(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "down":
			d.send(tea.KeyPressMsg{Code: tea.KeyDown})
		default:
			d.send(tea.KeyPressMsg{Code: []rune(k)[0], Text: k})
		}
	}
}

// waitFor runs the console until the screen shows every text.
func (d *consoleDriver) waitFor(timeout time.Duration, texts ...string) {
	d.t.Helper()
	deadline := time.After(timeout)
	for {
		s := d.screen()
		all := true
		for _, text := range texts {
			all = all && strings.Contains(s, text)
		}
		if all {
			return
		}
		select {
		case msg := <-d.msgs:
			d.send(msg)
		case <-deadline:
			d.t.Fatalf("the screen never showed %q:\n%s", texts, s)
		}
	}
}

// TestDemoWizardRunsTheEngine: the console's guided setup over the demo cluster with the session's real
// Runner. The demo has WMCO, the key and machines, and two of its Machines are not Ready nodes yet, so the
// wizard opens at the configure/follow step; skipped, the workloads step previews the RuntimeClass for the
// nodes' Windows build, creates it when confirmed (the detection then sees it), the Done step selects the
// new node in the Nodes pane and the summary is recorded in the audit log.
func TestDemoWizardRunsTheEngine(t *testing.T) {
	audit := t.TempDir() + "/audit.log"
	t.Setenv("WMCON_AUDIT_LOG", audit)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := New(ctx, Options{Demo: true, SSH: SSHOptions{SSHConfig: ""}})
	require.NoError(t, err)
	defer s.Close()

	opts := ui.Options{NoColor: true, Runner: s.Runner, Hosts: s.Demo.BareHosts(),
		Doctor: func(ctx context.Context) (diagnosis.Report, error) { return s.Doctor(ctx, nil) }}
	d := newConsoleDriver(t, ui.New(ui.NewProgramContext(opts), s.Watcher.Snapshots()), 160, 45)
	d.waitFor(30*time.Second, "context demo", "Ready")
	assert.NotContains(t, d.screen(), "no Windows nodes yet", "the demo has Windows nodes: no offer")

	d.press("S")
	d.waitFor(30*time.Second, "5 of 7", "Follow the operator until a Windows node is Ready", "Follow the operator")
	scr := d.screen()
	assert.Contains(t, scr, "✓ 4 Machines")
	assert.Contains(t, scr, "byoh 127.0.0.5: node ip-127-0-0-5.ec2.internal Ready", "the evidence the detection found")

	d.press("s")
	d.waitFor(10*time.Second, "6 of 7", "Create a RuntimeClass for Windows build 10.0.20348")
	d.press("enter")
	d.waitFor(30*time.Second, "Plan: RuntimeClass windows-10-0-20348 for Windows build 10.0.20348", "kind: RuntimeClass",
		"node.kubernetes.io/windows-build: 10.0.20348")
	st := detect(ctx, t, s)
	assert.Empty(t, st.RuntimeClass, "the preview created nothing")

	d.press("enter")
	d.waitFor(30*time.Second, "Run a smoke test pod on", "created RuntimeClass windows-10-0-20348", "✓ 6 Workloads")
	assert.Equal(t, "windows-10-0-20348", detect(ctx, t, s).RuntimeClass, "the cluster has it")

	d.press("down", "enter") // no smoke test
	d.waitFor(10*time.Second, "7 of 7", ": selected in the Nodes pane")
	node := ""
	for _, l := range strings.Split(d.screen(), "\n") {
		if i := strings.Index(l, "new node "); i >= 0 {
			node = strings.Fields(l[i+len("new node "):])[0]
			node = strings.TrimSuffix(node, ":")
		}
	}
	require.NotEmpty(t, node)

	d.press("enter")
	d.waitFor(10*time.Second, "Plan: Setup summary")
	d.press("enter")
	d.waitFor(30*time.Second, "last run: SUCCEEDED", "setup summary recorded in the audit log", "Close the wizard")
	log, err := os.ReadFile(audit)
	require.NoError(t, err)
	assert.Contains(t, string(log), request.ActionRuntimeClass, "the RuntimeClass's creation is audited")
	assert.Contains(t, string(log), request.ActionSetupSummary, "so is the summary")
	assert.NotContains(t, string(log), request.ActionSetupDetect, "reads and previews are not")

	d.press("down", "enter") // close the wizard: the Nodes pane shows the new node selected
	d.waitFor(10*time.Second, "guided setup closed")
	assert.Contains(t, d.screen(), "▶ "+node, "the new node is selected")
}

func detect(ctx context.Context, t *testing.T, s *Session) event.Setup {
	t.Helper()
	var got *event.Setup
	err := s.Runner.Run(ctx, request.SetupDetect{}, event.EmitFunc(func(e event.Event) {
		if e.Setup != nil {
			got = e.Setup
		}
	}))
	require.NoError(t, err)
	require.NotNil(t, got)
	return *got
}
