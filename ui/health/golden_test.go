package health_test

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/model"
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

// fixtureMetrics is an hour of a busy node's figures, one point per 30 s: CPU pinned for the last
// 10 minutes, C: filling up, traffic in a wave.
func fixtureMetrics() health.Metrics {
	var cpu, mem, disk, rx, tx, pods []float64
	for i := range 121 {
		c := 30 + 20*math.Sin(float64(i)/8)
		if i > 100 {
			c = 96
		}
		cpu = append(cpu, c)
		mem = append(mem, 60+float64(i)/6)
		disk = append(disk, 20-float64(i)/7.5)
		rx = append(rx, 2e6+1.5e6*math.Sin(float64(i)/5))
		tx = append(tx, 4e5+2e5*math.Cos(float64(i)/5))
		pods = append(pods, float64(12+i/20))
	}
	f := func(v float64) *float64 { return &v }
	return health.Metrics{Source: "Prometheus at https://thanos-querier (PromQL)", Figures: &model.NodeMetrics{
		Node: "win-a", CPUPercent: f(96), MemoryUsedPercent: f(80), MemoryTotalBytes: f(16 << 30),
		Volume: "C:", VolumeFreePercent: f(4), VolumeFreeBytes: f(5 << 30), NetRxBytesPerSec: f(rx[120]), NetTxBytesPerSec: f(tx[120]),
		CPUHistory: cpu, MemoryHistory: mem, VolumeFreeHistory: disk, NetRxHistory: rx, NetTxHistory: tx, HistoryStep: 30 * time.Second,
		PodsRunning: f(18), PodsHistory: pods,
	}}
}

// TestGoldenHealthViewMetrics: above the checks, the node's last hour — CPU (pinned: marked), memory,
// disk free (under 10 %: marked), network in and out, pods running — each with its current value, min
// and max.
// Regenerate with: go test ./ui/health -run Golden -update
func TestGoldenHealthViewMetrics(t *testing.T) {
	view := health.New(health.Options{Node: "win-a", Theme: theme.New(theme.Options{NoColor: true}), Location: time.UTC})
	view.SetMetrics(fixtureMetrics())
	tm := teatest.NewTestModel(t, rootHarness{view: view}, teatest.WithInitialTermSize(120, 24))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Kubelet errors")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(rootHarness)
	out := ansi.Strip(final.view.View())
	assert.Contains(t, out, "CPU          96%")
	assert.Contains(t, out, "min 10%  max 96%")
	assert.Contains(t, out, "Pods running 18")
	assert.Contains(t, out, "last 1h, one point per 30s · Prometheus at https://thanos-querier (PromQL)")
	teatest.RequireEqualOutput(t, []byte(out))
}

// Without figures the view says why in one line, and the checks keep the rest of the screen.
func TestHealthViewMetricsUnavailable(t *testing.T) {
	view := health.New(health.Options{Node: "win-a", Theme: theme.New(theme.Options{NoColor: true, ASCII: true}), Location: time.UTC})
	view.SetMetrics(health.Metrics{Source: "windows_exporter via the node proxy", Why: "connection refused"})
	view, _ = view.Update(health.ReportMsg{Node: "win-a", Report: fixtureReport()})
	lines := strings.Split(ansi.Strip(view.View()), "\n")
	require.GreaterOrEqual(t, len(lines), 3)
	assert.Equal(t, "Metrics: not available: connection refused", lines[1])
}
