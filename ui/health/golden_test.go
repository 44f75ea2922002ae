package health_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/ui/health"
	"github.com/wmcon/wmcon/ui/theme"
)

// rootHarness stands in for the console's root model: it sizes the view, answers Refresh with a triage
// (health.Load) and records the other requests, as the root routes them.
type rootHarness struct {
	view     health.Model
	requests []tea.Msg // what the root would route (asserted by the model tests)
}

func (h rootHarness) Init() tea.Cmd { return h.view.Init() }

func (h rootHarness) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		h.view.SetSize(msg.Width, msg.Height-1)
		return h, nil
	case health.Refresh:
		return h, health.Load(context.Background(), msg.Node, func(context.Context, string) (diagnosis.Report, error) {
			return fixtureReport(), nil
		})
	case health.RestartService, health.OpenLogs, health.Reboot, health.Close:
		h.requests = append(h.requests, msg)
		return h, nil
	}
	var cmd tea.Cmd
	h.view, cmd = h.view.Update(msg)
	return h, cmd
}

func (h rootHarness) View() tea.View { return tea.NewView(h.view.View()) }

// TestGoldenHealthView runs the view in a real program: the first triage arrives through Refresh/Load, the
// user moves to the kubelet errors and opens them. Regenerate with: go test ./ui/health -run Golden -update
func TestGoldenHealthView(t *testing.T) {
	view := health.New(health.Options{Node: "win-a", Theme: theme.New(theme.Options{NoColor: true}), Location: time.UTC})
	tm := teatest.NewTestModel(t, rootHarness{view: view}, teatest.WithInitialTermSize(100, 24))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Kubelet errors")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	for _, k := range []string{"down", "down", "enter", "r"} {
		tm.Send(keyPress(k))
	}
	tm.Send(keyPress("up"))
	tm.Send(keyPress("up"))
	tm.Send(keyPress("r"))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(rootHarness)
	teatest.RequireEqualOutput(t, []byte(ansi.Strip(final.view.View())))
}
