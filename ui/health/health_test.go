package health_test

import (
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/ui/health"
	"github.com/wmcon/wmcon/ui/theme"
)

var checkedAt = time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC)

// fixtureReport is a node whose kubelet stopped: the triage as actions.Triage orders it.
func fixtureReport() diagnosis.Report {
	return diagnosis.Report{Node: "win-a", Time: checkedAt, Checks: []diagnosis.Check{
		{ID: "service:kubelet", Title: "Service kubelet", Status: diagnosis.CheckFail, Service: "kubelet", Restartable: true,
			Detail:   "stopped: without the kubelet the node runs no pods and turns NotReady",
			Fix:      "start it: run wmcon restart-service win-a kubelet; if it stops again, read its log: run wmcon logs win-a --service kubelet",
			Evidence: []string{"depends on containerd (Running)"}},
		{ID: "node-ready", Title: "Node Ready", Status: diagnosis.CheckFail,
			Detail: "Ready is Unknown (NodeStatusUnknown) since 2026-03-01 11:58:00 UTC (2m ago): Kubelet stopped posting node status.",
			Fix:    "look at the host first: SSH, the kubelet and containerd services and the kubelet's errors"},
		{ID: "kubelet-errors", Title: "Kubelet errors", Status: diagnosis.CheckWarn, Service: "kubelet",
			Detail: "1 error line in the last 200 lines of C:\\var\\log\\kubelet\\kubelet.log", Fix: "read them in context: run wmcon logs win-a --service kubelet",
			Evidence: []string{`E0301 11:57:59.000001    4242 run.go:74] "command failed" err="failed to load kubelet config file"`}},
		{ID: "events", Title: "Recent events", Status: diagnosis.CheckUnknown, Detail: "cannot list events: forbidden",
			Fix: "events need permission to list events in default and openshift-machine-api"},
		{ID: "host-ssh", Title: "SSH to the host", Status: diagnosis.CheckOK, Detail: "the host answers over SSH at 127.0.0.12"},
		{ID: "service:containerd", Title: "Service containerd", Status: diagnosis.CheckOK, Service: "containerd", Detail: "running"},
	}}
}

func keyPress(k string) tea.KeyPressMsg {
	special := map[string]tea.Key{"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape},
		"up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown}, "space": {Code: tea.KeySpace, Text: " "}}
	if key, ok := special[k]; ok {
		return tea.KeyPressMsg(key)
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

// loaded is a view of win-a showing the fixture report.
func loaded(t *testing.T, opts health.Options) health.Model {
	t.Helper()
	if opts.Node == "" {
		opts.Node = "win-a"
	}
	opts.Theme = theme.New(theme.Options{NoColor: true})
	m := health.New(opts)
	m.SetSize(100, 30)
	m, _ = m.Update(health.ReportMsg{Node: "win-a", Report: fixtureReport()})
	return m
}

// press sends keys and returns the message the last command produced (nil when none).
func press(m health.Model, keys ...string) (health.Model, tea.Msg) {
	var msg tea.Msg
	for _, k := range keys {
		var cmd tea.Cmd
		m, cmd = m.Update(keyPress(k))
		msg = nil
		if cmd != nil {
			msg = cmd()
		}
	}
	return m, msg
}

func screen(m health.Model) string { return ansi.Strip(m.View()) }

func TestInitAsksForATriage(t *testing.T) {
	m := health.New(health.Options{Node: "win-a"})
	assert.True(t, m.Loading())
	assert.Equal(t, health.Refresh{Node: "win-a"}, m.Init()())
	assert.Contains(t, screen(m), "checking the node and its host…")
}

func TestReportShowsChecksInOrderWithTheFirstCauseOpened(t *testing.T) {
	m := loaded(t, health.Options{})
	s := screen(m)
	assert.Contains(t, s, "Health of win-a  2 failing, 1 warning, 1 unknown, 2 ok")
	kubelet := strings.Index(s, "✗ Service kubelet")
	ready := strings.Index(s, "✗ Node Ready")
	errs := strings.Index(s, "⚠ Kubelet errors")
	ok := strings.Index(s, "✓ SSH to the host")
	require.True(t, kubelet >= 0 && ready >= 0 && errs >= 0 && ok >= 0, s)
	assert.True(t, kubelet < ready && ready < errs && errs < ok, "report order kept:\n%s", s)
	assert.Contains(t, s, "→ start it: press r or run wmcon restart-service win-a kubelet", "the likeliest cause is expanded with what to do")
	assert.Contains(t, s, "· depends on containerd (Running)")
	assert.NotContains(t, s, "→ look at the host first", "other checks stay collapsed")
	assert.Contains(t, s, "▶ ✗ Service kubelet", "the cursor starts on the likeliest cause")
}

// A fix names commands; the view adds the keys that do the same here, and under read-only only those that
// work (no "press r" for a restart read-only refuses).
func TestFixesOfferTheKeysThatWorkHere(t *testing.T) {
	s := strings.Join(strings.Fields(screen(loaded(t, health.Options{}))), " ")
	assert.Contains(t, s, "start it: press r or run wmcon restart-service win-a kubelet; if it stops again, read its log: press l or run wmcon logs win-a --service kubelet")

	ro := strings.Join(strings.Fields(screen(loaded(t, health.Options{ReadOnly: true}))), " ")
	assert.Contains(t, ro, "start it: run wmcon restart-service win-a kubelet; if it stops again, read its log: press l or run wmcon logs win-a --service kubelet")
	assert.NotContains(t, ro, "press r")
	assert.NotContains(t, ro, "r: start kubelet")
}

func TestReportsOfOtherNodesAreIgnored(t *testing.T) {
	m := loaded(t, health.Options{})
	m, _ = m.Update(health.ReportMsg{Node: "win-b", Err: errors.New("boom")})
	assert.NotContains(t, screen(m), "boom")
	r, ok := m.Report()
	require.True(t, ok)
	assert.Equal(t, "win-a", r.Node)
}

func TestRestartTheSelectedStoppedService(t *testing.T) {
	m := loaded(t, health.Options{})
	_, msg := press(m, "r")
	assert.Equal(t, health.RestartService{Node: "win-a", Service: "kubelet"}, msg)

	// Nothing to restart on a check that is not a stopped service.
	m, msg = press(m, "down", "r")
	assert.Nil(t, msg)
	assert.Contains(t, screen(m), "nothing to restart here: select a stopped service")

	ro := loaded(t, health.Options{ReadOnly: true})
	ro, msg = press(ro, "r")
	assert.Nil(t, msg, "read-only refuses restarts")
	assert.Contains(t, screen(ro), "read-only")
	_, msg = press(ro, "R")
	assert.Nil(t, msg, "read-only refuses reboots")
}

func TestLogsRebootRefreshClose(t *testing.T) {
	m := loaded(t, health.Options{})
	_, msg := press(m, "down", "down", "l")
	assert.Equal(t, health.OpenLogs{Node: "win-a", Service: "kubelet"}, msg, "kubelet errors open the kubelet log")
	_, msg = press(m, "down", "down", "down", "down", "down", "l")
	assert.Equal(t, health.OpenLogs{Node: "win-a", Service: "containerd"}, msg, "a service check opens its own log")
	_, msg = press(m, "down", "l")
	assert.Equal(t, health.OpenLogs{Node: "win-a", Service: "kubelet"}, msg, "elsewhere the kubelet's")
	_, msg = press(m, "R")
	assert.Equal(t, health.Reboot{Node: "win-a"}, msg)
	_, msg = press(m, "esc")
	assert.Equal(t, health.Close{Node: "win-a"}, msg)

	m, msg = press(m, "g")
	assert.Equal(t, health.Refresh{Node: "win-a"}, msg)
	assert.True(t, m.Loading())
	assert.Contains(t, screen(m), "checking again…")
}

func TestRefreshKeepsTheSelectionAndExpandToggles(t *testing.T) {
	m := loaded(t, health.Options{})
	m, _ = press(m, "down", "enter")
	assert.Contains(t, screen(m), "→ look at the host first")
	c, _ := m.Selected()
	assert.Equal(t, "node-ready", c.ID)

	r := fixtureReport()
	r.Checks[0], r.Checks[1] = r.Checks[1], r.Checks[0]
	m, _ = m.Update(health.ReportMsg{Node: "win-a", Report: r})
	c, _ = m.Selected()
	assert.Equal(t, "node-ready", c.ID, "the cursor follows its check to its new place")
	assert.False(t, m.Loading())

	m, _ = press(m, "enter")
	assert.NotContains(t, screen(m), "→ look at the host first", "enter collapses again")
}

func TestTriageErrorIsShownWithWhatToDo(t *testing.T) {
	m := health.New(health.Options{Node: "win-a"})
	m.SetSize(120, 10)
	m, _ = m.Update(health.ReportMsg{Node: "win-a", Err: errors.New("node win-a not found in the cluster")})
	assert.Contains(t, screen(m), "triage failed: node win-a not found in the cluster — press g to try again, esc to close")
}

func TestSelectionStaysVisibleInASmallArea(t *testing.T) {
	m := loaded(t, health.Options{})
	m.SetSize(60, 5)
	m, _ = press(m, "down", "down", "down", "down", "down")
	s := screen(m)
	assert.Contains(t, s, "▶ ✓ Service containerd")
	assert.LessOrEqual(t, strings.Count(s, "\n")+1, 5, "never taller than its area")
	for _, l := range strings.Split(s, "\n") {
		assert.LessOrEqual(t, ansi.StringWidth(l), 60, "never wider than its area: %q", l)
	}
}

func TestHelpListsOnlyKeysThatWork(t *testing.T) {
	m := loaded(t, health.Options{})
	names := func(m health.Model) []string {
		var out []string
		for _, b := range m.ShortHelp() {
			out = append(out, b.Help().Key)
		}
		return out
	}
	assert.Contains(t, names(m), "r")
	m, _ = press(m, "down")
	assert.NotContains(t, names(m), "r", "restart applies to a stopped service only")
	assert.Contains(t, names(m), "R")
	assert.NotEmpty(t, m.FullHelp())
}

func TestDoesNotImportClientGoOrSSH(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range parsed.Imports {
			assert.NotContains(t, imp.Path.Value, "k8s.io/client-go", f)
			assert.NotContains(t, imp.Path.Value, "golang.org/x/crypto/ssh", f)
		}
	}
}

// TestOpenViewChecksAgainByItself: after each report the open view schedules the next check (Every), shows
// "checking again…" beside the last check's time when it starts, and a tick older than the latest report
// (g pressed meanwhile) does nothing.
func TestOpenViewChecksAgainByItself(t *testing.T) {
	m := health.New(health.Options{Node: "win-a", Location: time.UTC, Every: 10 * time.Millisecond})
	m.SetSize(120, 30)
	m, tick := m.Update(health.ReportMsg{Node: "win-a", Report: fixtureReport()})
	require.NotNil(t, tick, "the next check is scheduled")
	assert.False(t, m.Loading())
	m, _ = m.Update(health.ReportMsg{Node: "win-a", Report: fixtureReport()}) // a newer report (g)
	m, cmd := m.Update(tick())
	assert.Nil(t, cmd, "the older tick does nothing")
	assert.False(t, m.Loading())

	m, tick = m.Update(health.ReportMsg{Node: "win-a", Report: fixtureReport()})
	m, cmd = m.Update(tick())
	require.NotNil(t, cmd, "the tick asks for a new check")
	assert.Equal(t, health.Refresh{Node: "win-a"}, cmd())
	assert.True(t, m.Loading())
	assert.Contains(t, ansi.Strip(m.View()), "checked 12:00:05 · checking again…", "the time of the last check stays")

	off := health.New(health.Options{Node: "win-a", Every: -1})
	_, none := off.Update(health.ReportMsg{Node: "win-a", Report: fixtureReport()})
	assert.Nil(t, none, "Every < 0: no checks by itself")
}
