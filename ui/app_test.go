package ui

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/layout"
)

func selectedKey(m Model) string {
	r, _ := m.pane().selected()
	return r.Key
}

// screenLines checks the view is exactly the terminal size and returns its lines.
func screenLines(t *testing.T, m Model) []string {
	t.Helper()
	lines := strings.Split(screen(m), "\n")
	require.Len(t, lines, m.ctx.Height)
	for i, l := range lines {
		require.Equal(t, m.ctx.Width, layout.TextWidth(l), "line %d is not %d wide: %q", i, m.ctx.Width, l)
	}
	return lines
}

func TestViewFillsTheScreenExactly(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	for _, keys := range [][]string{nil, {"2", "space"}, {"3"}, {"4"}, {"1", "enter"}, {"esc", "?"}} {
		m = update(m, press(keys...)...)
		screenLines(t, m)
	}
	m = update(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	screenLines(t, m)
}

func TestHeader(t *testing.T) {
	lines := screenLines(t, newTestModel(fixtureSnapshot()))
	assert.Contains(t, lines[0], "cluster "+infraID)
	assert.Contains(t, lines[0], "context admin")
	assert.Contains(t, lines[0], "server https://api.ci-ln-x7k2m9b.aws.example.com:6443")
	assert.Contains(t, lines[1], "OpenShift 4.20.2 (Kubernetes v1.33.4)")
	assert.Contains(t, lines[1], "WMCO 10.20.0 (Succeeded)", "the CSV's phase, always")
	assert.Contains(t, lines[1], "platform AWS")
	assert.Empty(t, strings.TrimSpace(lines[2]), "nothing alarming while connected")

	snap := fixtureSnapshot()
	snap.Cluster.WMCOPhase = "Installing"
	assert.Contains(t, screenLines(t, newTestModel(snap))[1], "WMCO 10.20.0 (Installing)")

	snap = fixtureSnapshot()
	snap.Cluster.WMCOVersion, snap.Cluster.OpenShiftVersion = "", ""
	snap.Resources[model.ResCSV] = model.ResourceState{Availability: model.Available}
	lines = screenLines(t, newTestModel(snap))
	assert.Contains(t, lines[1], "WMCO not installed")
	assert.Contains(t, lines[1], "Kubernetes v1.33.4")
	assert.NotContains(t, lines[1], "OpenShift")

	// Before the CSVs are listed (the Nodes come first), or when they may not be read, the header does not
	// guess that the operator is absent.
	for state, want := range map[model.Availability]string{model.Syncing: "WMCO …", model.Forbidden: "WMCO unknown (CSVs forbidden)"} {
		snap.Resources[model.ResCSV] = model.ResourceState{Availability: state}
		line := screenLines(t, newTestModel(snap))[1]
		assert.Contains(t, line, want)
		assert.NotContains(t, line, "not installed")
	}
}

func TestReconnectBanner(t *testing.T) {
	snap := fixtureSnapshot()
	snap.Connection = model.Connection{Connected: false, Since: fixedNow.Add(-3 * time.Minute),
		LastError: "dial tcp 127.0.0.5:6443: connect: connection refused"}
	m := update(newTestModel(snap), tea.WindowSizeMsg{Width: 200, Height: 40})
	lines := screenLines(t, m)
	assert.Contains(t, lines[2], "reconnecting to https://api.ci-ln-x7k2m9b.aws.example.com:6443 since 11:57:00 (3m) — "+
		"dial tcp 127.0.0.5:6443: connect: connection refused")
	lines = screenLines(t, update(m, tea.WindowSizeMsg{Width: 120, Height: 40}))
	assert.Contains(t, lines[2], "reconnecting since 11:57:00 (3m) — dial tcp 127.0.0.5:6443: connect: connection refused",
		"a narrow terminal drops the server (it is on the first line) and keeps the reason")
	assert.Contains(t, lines[5], "ip-127-0-17-41", "the last known rows stay visible")
}

func TestBeforeTheFirstSnapshot(t *testing.T) {
	m := newTestModel(nil)
	out := screen(m)
	assert.Contains(t, out, "connecting…")
	assert.Contains(t, out, "loading…")
	m = update(m, press("enter", "j", "/", "x", "esc", "w", "2", "space")...) // nothing to act on: no panic
	assert.Contains(t, screen(m), "loading…")
}

func TestPaneSwitching(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	steps := []struct {
		key  string
		want paneKind
	}{
		{"tab", paneMachineSets}, {"tab", paneSecrets}, {"tab", paneMirrors}, {"tab", paneNodes},
		{"shift+tab", paneMirrors}, {"2", paneMachineSets}, {"3", paneSecrets}, {"1", paneNodes}, {"4", paneMirrors},
	}
	for _, s := range steps {
		m = update(m, keyPress(s.key))
		assert.Equal(t, s.want, m.active, "after %s", s.key)
		assert.Contains(t, screenLines(t, m)[3], "["+string(rune('1'+s.want))+" "+s.want.title(), "active tab marked")
	}
}

func TestNavigation(t *testing.T) {
	m := newTestModel(bigSnapshot(200))
	assert.Equal(t, 0, m.pane().cursor)
	steps := []struct {
		key  string
		want int
	}{
		{"j", 1}, {"down", 2}, {"k", 1}, {"up", 0}, {"up", 0}, {"pgdown", 33}, {"pgdown", 66}, {"pgup", 33},
		{"G", 199}, {"j", 199}, {"g", 0}, {"end", 199}, {"home", 0},
	}
	for _, s := range steps {
		m = update(m, keyPress(s.key))
		assert.Equal(t, s.want, m.pane().cursor, "after %s", s.key)
		// the selected row is always on screen
		assert.Contains(t, screen(m), "▶ "+m.pane().rows[m.pane().cursor].Key[:20], "after %s", s.key)
	}
}

func TestSelectionFollowsTheObject(t *testing.T) {
	snap := fixtureSnapshot()
	m := newTestModel(snap)
	m = update(m, press("j", "j")...)
	const drifted = "ip-127-0-45-7.us-east-2.compute.internal"
	require.Equal(t, drifted, selectedKey(m))

	next := fixtureSnapshot()
	next.Nodes = append([]model.NodeInfo{next.Nodes[3]}, append(next.Nodes[:3:3], next.Nodes[4:]...)...)
	m = update(m, snapshotMsg{next})
	assert.Equal(t, drifted, selectedKey(m))
	assert.Equal(t, 3, m.pane().cursor, "the node moved down one place")

	gone := fixtureSnapshot()
	gone.Nodes = append(gone.Nodes[:2:2], gone.Nodes[3:]...)
	m = update(m, snapshotMsg{gone})
	assert.Equal(t, 3, m.pane().cursor, "a deleted node leaves the cursor in place")
	assert.Equal(t, "ip-127-0-1-100.us-east-2.compute.internal", selectedKey(m))
}

func TestWindowsOnly(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m = update(m, keyPress("w"))
	assert.Len(t, m.pane().rows, 4)
	out := screen(m)
	assert.NotContains(t, out, "Linux")
	assert.Contains(t, out, "Windows nodes only")
	m = update(m, keyPress("w"))
	assert.Len(t, m.pane().rows, 9)
	m = update(m, press("2", "w")...) // each pane has its own toggle
	assert.True(t, m.panes[paneMachineSets].windowsOnly)
	assert.False(t, m.panes[paneNodes].windowsOnly)
	m = update(m, press("3", "w")...) // and the Secrets pane none
	assert.False(t, m.panes[paneSecrets].windowsOnly)
}

func TestFilter(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m = update(m, keyPress("/"))
	require.True(t, m.filtering)
	m = update(m, typeText("byoh")...)
	assert.Len(t, m.pane().rows, 1)
	assert.Equal(t, "win-byoh-01.corp.example.com", selectedKey(m))
	out := screen(m)
	assert.Contains(t, out, "/byoh")
	assert.Contains(t, out, "1 of 9")
	assert.Regexp(t, `\x1b\[[0-9;]*4[0-9;]*mb\x1b\[m`, m.View().Content, "matched characters are underlined")

	m = update(m, keyPress("enter"))
	assert.True(t, onList(m), "enter keeps the filter and returns to the list")
	assert.Len(t, m.pane().rows, 1)
	assert.Contains(t, screen(m), "filter: byoh")

	m = update(m, keyPress("enter"))
	assert.True(t, isTop[*detailView](m), "enter now opens the filtered node")
	m = update(m, press("esc", "esc")...)
	assert.True(t, onList(m))
	assert.Len(t, m.pane().rows, 9, "esc in the list clears the filter")
	assert.Equal(t, "win-byoh-01.corp.example.com", selectedKey(m), "the selection survives clearing")

	m = update(m, keyPress("/"))
	m = update(m, typeText("jk")...)
	assert.Equal(t, "jk", m.pane().query, "j and k are letters while typing")
	m = update(m, keyPress("backspace"), keyPress("backspace"))
	assert.Len(t, m.pane().rows, 9)
	m = update(m, typeText("zzzz")...)
	assert.Contains(t, screen(m), `nothing matches "zzzz"`)
	m = update(m, keyPress("esc"))
	assert.True(t, onList(m))
	assert.Empty(t, m.pane().query, "esc while typing clears the filter")
	assert.Len(t, m.pane().rows, 9)
}

func TestFilterIsPerPane(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m = update(m, keyPress("/"))
	m = update(m, typeText("byoh")...)
	m = update(m, press("enter", "2")...)
	assert.Len(t, m.pane().rows, 4, "the MachineSets pane is not filtered")
	m = update(m, keyPress("1"))
	assert.Len(t, m.pane().rows, 1)
}

func TestMachineSetExpansion(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m = update(m, press("2", "space")...)
	rows := m.pane().rows
	require.Len(t, rows, 6)
	out := screen(m)
	assert.Contains(t, out, "↳ "+winMachineSet("a")+"-ax9k2")
	assert.Contains(t, out, "Provisioned")

	m = update(m, press("j", "left")...) // collapse from a Machine row
	assert.Len(t, m.pane().rows, 4)
	assert.Equal(t, config.MachineAPINamespace+"/"+winMachineSet("a"), selectedKey(m), "the MachineSet takes the selection")

	m = update(m, press("j", "right", "right")...) // right only expands
	assert.Len(t, m.pane().rows, 5)
	m = update(m, keyPress("space"))
	assert.Len(t, m.pane().rows, 4)
}

func TestNodeDetail(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m = update(m, press("j", "j", "enter")...)
	require.True(t, isTop[*detailView](m))
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 80}) // room for the whole page
	out := screen(m)
	for _, want := range []string{
		"Node ip-127-0-45-7.us-east-2.compute.internal",
		"Ready           True     KubeletReady                  since 47h  kubelet is posting ready status",
		"os=Windows:NoSchedule",
		"kubernetes.io/os=windows",
		config.UsernameAnnotation + "=(encrypted)",
		config.HostKeyAnnotation + "=AAAAC3NzaC1lZDI1NTE5AAAA…",
		"⚠ not the operator's version: WMCO has taken the node up to reconfigure it",
		"InternalIP:        127.0.45.7",
		"Machine:           openshift-machine-api/" + winMachineSet("b") + "-h2kfs",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "gAAAAABm", "the encrypted username is never shown")

	m = update(m, keyPress("q"))
	assert.True(t, onList(m), "q leaves the detail view, it does not quit")
}

func TestDetailStaysLive(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m = update(m, press("j", "enter")...)
	require.Contains(t, screen(m), "Status:            NotReady")
	next := fixtureSnapshot()
	next.Nodes[1].Status = model.NodeReady
	m = update(m, snapshotMsg{next})
	assert.Contains(t, screen(m), "Status:            Ready")

	gone := fixtureSnapshot()
	gone.Nodes = append(gone.Nodes[:1:1], gone.Nodes[2:]...)
	m = update(m, snapshotMsg{gone})
	assert.Contains(t, screen(m), "no longer exists")
}

func TestOtherDetails(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m = update(m, press("2", "enter")...)
	out := screen(m)
	assert.Contains(t, out, "MachineSet openshift-machine-api/"+winMachineSet("a"))
	assert.Contains(t, out, winMachineSet("a")+"-bq7vd  Provisioned  node: ip-127-0-23-188")

	m = update(m, press("esc", "3", "enter")...)
	out = screen(m)
	assert.Contains(t, out, config.OperatorNamespace+"/"+config.PrivateKeySecret)
	assert.Contains(t, out, "Fingerprint:       SHA256:Vq3k")
	m = update(m, press("esc", "j", "enter")...) // a node's row under the key leads to the key
	assert.Contains(t, screen(m), "Fingerprint:       SHA256:Vq3k")
	m = update(m, press("esc", "j", "j", "j", "j", "enter")...) // past the four Windows nodes' rows
	assert.Contains(t, screen(m), "Matches key:       yes")

	m = update(m, press("esc", "4", "j", "enter")...)
	out = screen(m)
	assert.Contains(t, out, "Source policy:     NeverContactSource")
	assert.Contains(t, out, "Mirror 1:          mirror.corp.example.com:5000/ocp/art-dev")
}

func TestPaneAvailability(t *testing.T) {
	cases := []struct {
		name  string
		res   []model.Resource
		state model.ResourceState
		pane  string
		want  string
	}{
		{"no Machine API", []model.Resource{model.ResMachineSets}, model.ResourceState{Availability: model.NotInstalled}, "2",
			"MachineSets not available on this cluster"},
		{"no mirror APIs", []model.Resource{model.ResIDMS, model.ResITMS}, model.ResourceState{Availability: model.NotInstalled}, "4",
			"ImageDigestMirrorSets and ImageTagMirrorSets not available on this cluster"},
		{"secrets forbidden", []model.Resource{model.ResSecrets},
			model.ResourceState{Availability: model.Forbidden, Message: "secrets is forbidden: cannot list secrets in openshift-windows-machine-config-operator"},
			"3", "cannot list secrets in openshift-windows-machine-config-operator"},
		{"nodes syncing", []model.Resource{model.ResNodes}, model.ResourceState{Availability: model.Syncing}, "1", "loading Nodes…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap := fixtureSnapshot()
			for _, r := range c.res {
				snap.Resources[r] = c.state
			}
			m := newTestModel(snap)
			m = update(m, keyPress(c.pane))
			assert.Contains(t, screen(m), c.want)
			m = update(m, keyPress("enter"))
			assert.True(t, onList(m), "nothing to open")
			// the other panes keep working
			other := map[string]string{"1": "2", "2": "1", "3": "1", "4": "1"}[c.pane]
			m = update(m, keyPress(other))
			assert.NotContains(t, screen(m), c.want)
			assert.Contains(t, screen(m), "NAME")
		})
	}
}

func TestFailingResourceKeepsRows(t *testing.T) {
	snap := fixtureSnapshot()
	snap.Resources[model.ResNodes] = model.ResourceState{Availability: model.Failing, Message: "nodes: the server is currently unable to handle the request; retrying"}
	lines := screenLines(t, newTestModel(snap))
	assert.Contains(t, lines[4], "unable to handle the request")
	assert.Contains(t, lines[5], "NAME")
	assert.Contains(t, lines[6], "ip-127-0-17-41")
}

func TestOnlyOneMirrorAPIMissing(t *testing.T) {
	snap := fixtureSnapshot()
	snap.Resources[model.ResITMS] = model.ResourceState{Availability: model.NotInstalled}
	m := update(newTestModel(snap), keyPress("4"))
	out := screen(m)
	assert.Contains(t, out, "ImageTagMirrorSets not available on this cluster")
	assert.Contains(t, out, "quay.io/openshift-release-dev/ocp-release", "IDMS entries are still listed")
}

func TestHelp(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	short := screenLines(t, m)[39]
	for _, want := range []string{"tab next pane", "/ filter", "enter details", "w windows only", "? help", "q quit"} {
		assert.Contains(t, short, want)
	}
	m = update(m, keyPress("?"))
	out := screen(m)
	for _, want := range []string{"pgdn", "shift+tab", "previous pane", "home/g", "esc", "clear filter"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "reboot", "reserved actions are not advertised")
	m = update(m, keyPress("?"))
	assert.True(t, onList(m))
	m = update(m, keyPress("2"))
	assert.Contains(t, screenLines(t, m)[39], "space/→ expand")
}

func TestQuit(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	for _, k := range []string{"q", "ctrl+c"} {
		_, cmd := m.Update(keyPress(k))
		require.NotNil(t, cmd, k)
		assert.IsType(t, tea.QuitMsg{}, cmd(), k)
	}
	m = update(m, keyPress("/"))
	_, cmd := m.Update(keyPress("q"))
	if cmd != nil {
		assert.NotEqual(t, tea.QuitMsg{}, cmd(), "q is a letter while filtering")
	}
	_, cmd = m.Update(keyPress("ctrl+c"))
	require.NotNil(t, cmd)
	assert.IsType(t, tea.QuitMsg{}, cmd(), "ctrl+c always quits")
}

func TestResize(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m = update(m, tea.WindowSizeMsg{Width: 70, Height: 15})
	lines := screenLines(t, m)
	assert.Contains(t, lines[5], "ip-127-0-17-41", "still lists nodes in a small terminal")
	m = update(m, tea.WindowSizeMsg{Width: 40, Height: 10})
	assert.Contains(t, strings.Join(strings.Fields(screen(m)), " "), "wmcon needs a terminal of at least 60×12")
	m = update(m, tea.WindowSizeMsg{Width: 160, Height: 50})
	screenLines(t, m)
}

func TestScrollKeepsCursorVisibleAfterResize(t *testing.T) {
	m := newTestModel(bigSnapshot(100))
	m = update(m, keyPress("G"))
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 20})
	assert.Contains(t, screen(m), "▶ "+m.pane().rows[99].Key[:24], "(the name is cut at this width)")
}

func TestMouse(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	// the table starts on line 4 (header 3 lines + tabs); its column header is line 4, rows from line 5
	m = update(m, tea.MouseClickMsg{X: 10, Y: 7, Button: tea.MouseLeft})
	assert.Equal(t, 2, m.pane().cursor)
	m = update(m, tea.MouseClickMsg{X: 10, Y: 30, Button: tea.MouseLeft})
	assert.Equal(t, 2, m.pane().cursor, "a click below the rows selects nothing")
	m = update(m, tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	assert.Equal(t, 5, m.pane().cursor)
	m = update(m, tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	assert.Equal(t, 2, m.pane().cursor)

	withMouse := New(NewProgramContext(Options{Mouse: true, Now: testOptions().Now}), nil)
	assert.Equal(t, tea.MouseModeCellMotion, withMouse.View().MouseMode)
	assert.Equal(t, tea.MouseModeNone, m.View().MouseMode)
	assert.True(t, m.View().AltScreen)
}

func TestWaitForSnapshot(t *testing.T) {
	ch := make(chan *model.Snapshot, 3)
	a, b := fixtureSnapshot(), fixtureSnapshot()
	b.Seq = 8
	ch <- a
	ch <- b
	msg := waitForSnapshot(ch)()
	assert.Equal(t, snapshotMsg{b}, msg, "queued snapshots collapse into the newest")
	close(ch)
	assert.Equal(t, snapshotsClosedMsg{}, waitForSnapshot(ch)())

	m := newTestModel(fixtureSnapshot())
	m = update(m, snapshotsClosedMsg{})
	assert.Contains(t, screenLines(t, m)[2], "the cluster watch has stopped")
}

func TestNoColorHasNoColours(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	content := m.View().Content
	for _, colour := range []string{"[38;", "[39", "[3", "[9"} {
		for _, seq := range strings.Split(content, "\x1b")[1:] {
			assert.False(t, strings.HasPrefix(seq, colour) && strings.Contains(seq[:min(len(seq), 8)], "m"),
				"unexpected colour sequence %q", seq[:min(len(seq), 10)])
		}
	}
	coloured := New(NewProgramContext(Options{Now: testOptions().Now}), nil)
	coloured = update(coloured, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	if !coloured.ctx.Styles.NoColor { // NO_COLOR may be set in the test environment
		assert.Contains(t, coloured.View().Content, "\x1b[9", "colours are used when allowed")
	}
}

func TestSecretsElsewhereDoNotBlockThePane(t *testing.T) {
	snap := fixtureSnapshot()
	snap.Resources[model.ResPullSecret] = model.ResourceState{Availability: model.Forbidden,
		Message: "cannot get secret openshift-config/pull-secret: ask for get/watch on it"}
	m := update(newTestModel(snap), keyPress("3"))
	lines := screenLines(t, m)
	assert.Contains(t, lines[4], "cannot get secret openshift-config/pull-secret")
	assert.Contains(t, lines[6], "cloud-private-key", "the rows are still shown")
	m = update(m, keyPress("enter"))
	assert.True(t, isTop[*detailView](m))
}

// TestKeysDoNothingBelowTheMinimumSize: at 1×1 the screen only asks for a bigger terminal, so no key but
// quit may act — R then enter must not start a reboot through a confirmation nobody can see.
func TestKeysDoNothingBelowTheMinimumSize(t *testing.T) {
	runner := recordingRunner{requests: make(chan request.Request, 1)}
	m := actionModel(runner)
	m = update(m, tea.WindowSizeMsg{Width: 1, Height: 1})
	for _, k := range []string{"R", "enter", "d", "enter", "c", "space", "2", "/", "?", "esc"} {
		next, cmd := m.Update(keyPress(k))
		m = next.(Model)
		if cmd != nil {
			m = update(m, cmd())
		}
	}
	assert.Empty(t, m.stack, "no view opened")
	assert.Nil(t, m.running, "no action started")
	assert.Empty(t, runner.requests)
	assert.Equal(t, paneNodes, m.active)
	assert.False(t, m.filtering)
	assert.Contains(t, screen(m), "wmcon needs a terminal")

	_, cmd := m.Update(keyPress("q"))
	require.NotNil(t, cmd, "q still quits")
	assert.IsType(t, tea.QuitMsg{}, cmd())
	_, cmd = m.Update(keyPress("ctrl+c"))
	require.NotNil(t, cmd, "ctrl+c still quits")
	assert.IsType(t, tea.QuitMsg{}, cmd())

	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, keyPress("R"))
	assert.True(t, isTop[*drainForm](m), "keys work again once the terminal is big enough")
}

// TestOpenDialogIsInertBelowTheMinimumSize: a confirmation opened before the terminal shrank cannot be
// confirmed while it is not visible.
func TestOpenDialogIsInertBelowTheMinimumSize(t *testing.T) {
	runner := recordingRunner{requests: make(chan request.Request, 1)}
	m := actionModel(runner)
	m = update(m, keyPress("R"), tea.WindowSizeMsg{Width: 30, Height: 8})
	next, cmd := m.Update(keyPress("enter"))
	m = next.(Model)
	if cmd != nil {
		m = update(m, cmd())
	}
	assert.Nil(t, m.running, "enter on an invisible confirmation starts nothing")
	assert.True(t, isTop[*drainForm](m), "the confirmation waits for the terminal to grow")
}

// TestNoCountBeforeTheRows: while the nodes are still loading the pane says so and its tab shows no count
// (the snapshot may already hold nodes the informer has listed); once they are shown, the tab counts them.
func TestNoCountBeforeTheRows(t *testing.T) {
	snap := fixtureSnapshot()
	require.NotEmpty(t, snap.Nodes)
	snap.Resources[model.ResNodes] = model.ResourceState{Availability: model.Syncing}
	lines := screenLines(t, newTestModel(snap))
	out := strings.Join(lines, "\n")
	assert.Contains(t, out, "loading Nodes…")
	assert.Contains(t, out, "1 Nodes]")
	assert.NotContains(t, out, "Nodes (")

	snap = fixtureSnapshot()
	snap.Resources[model.ResNodes] = model.ResourceState{Availability: model.Available}
	assert.Contains(t, screen(newTestModel(snap)), "1 Nodes ("+strconv.Itoa(len(snap.Nodes))+")]")
}

// TestTooSmallSaysSizesAndHowToQuit: below the minimum size the message wraps to the terminal, so the
// sizes and "q quits" show whole, down to a tiny one (short form).
func TestTooSmallSaysSizesAndHowToQuit(t *testing.T) {
	for _, size := range [][2]int{{59, 23}, {40, 10}, {24, 6}, {12, 4}} {
		m := update(newTestModel(fixtureSnapshot()), tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		lines := strings.Split(screen(m), "\n")
		assert.LessOrEqual(t, len(lines), size[1], "%v", size)
		for _, l := range lines {
			assert.LessOrEqual(t, ansi.StringWidth(l), size[0], "%v: %q fits the width", size, l)
		}
		text := strings.Join(strings.Fields(screen(m)), " ")
		assert.Contains(t, text, "60×12", "%v", size)
		assert.Contains(t, text, fmt.Sprintf("%d×%d", size[0], size[1]), "%v", size)
		assert.Contains(t, text, "q quits", "%v", size)
	}
}

// The Secrets pane (a row per Windows node's key state) is not rebuilt with every snapshot while it is
// hidden, but shows the newest snapshot's nodes as soon as it is shown again, and its tab counts from the
// snapshot meanwhile.
func TestHiddenSecretsPaneCatchesUpWhenShown(t *testing.T) {
	m := update(newTestModel(fixtureSnapshot()), keyPress("3"), keyPress("1"))
	require.Equal(t, paneNodes, m.active)
	before := len(m.panes[paneSecrets].all)
	require.NotZero(t, before, "the fixture's Windows nodes have key rows")

	snap := fixtureSnapshot()
	snap.Seq++
	newcomer := windowsNode("ip-127-0-99-9.us-east-2.compute.internal", winMachineSet("a")+"-zz9zz", "127.0.99.9", time.Minute)
	snap.Nodes = append(snap.Nodes, newcomer)
	m = update(m, snapshotMsg{snap})
	assert.Len(t, m.panes[paneSecrets].all, before, "hidden: not rebuilt")
	assert.Equal(t, snap.Secrets.Present(), m.tabCount(paneSecrets))

	m = update(m, keyPress("3"))
	assert.Len(t, m.panes[paneSecrets].all, before+1)
	assert.Contains(t, screen(m), newcomer.Name)
}
