package ui

import (
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/theme"
)

func TestHumanDuration(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{-5 * time.Second, "0s"},
		{0, "0s"},
		{95 * time.Second, "95s"},
		{2 * time.Minute, "2m"},
		{7*time.Minute + 30*time.Second, "7m30s"},
		{12 * time.Minute, "12m"},
		{179 * time.Minute, "179m"},
		{3*time.Hour + 20*time.Minute, "3h20m"},
		{3 * time.Hour, "3h"},
		{12 * time.Hour, "12h"},
		{47 * time.Hour, "47h"},
		{3*day + 4*time.Hour, "3d4h"},
		{5 * day, "5d"},
		{120 * day, "120d"},
		{2*365*day + 30*day, "2y30d"},
		{9 * 365 * day, "9y"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, humanDuration(c.d), "duration %s", c.d)
	}
	assert.Equal(t, "-", formatAge(fixedNow, time.Time{}), "an unknown creation time")
}

func TestComputeLayout(t *testing.T) {
	cases := []struct {
		name          string
		w, h          int
		panel         bool
		body, action  Rect
		status, help_ Rect
		tooSmall      bool
	}{
		{name: "standard", w: 120, h: 40, body: Rect{0, 4, 120, 34}, status: Rect{0, 38, 120, 1}, help_: Rect{0, 39, 120, 1}},
		{name: "panel below", w: 120, h: 40, panel: true, body: Rect{0, 4, 120, 22}, action: Rect{0, 26, 120, 12},
			status: Rect{0, 38, 120, 1}, help_: Rect{0, 39, 120, 1}},
		{name: "short panel below", w: 80, h: 20, panel: true, body: Rect{0, 4, 80, 7}, action: Rect{0, 11, 80, 7},
			status: Rect{0, 18, 80, 1}, help_: Rect{0, 19, 80, 1}},
		{name: "panel beside", w: 200, h: 50, panel: true, body: Rect{0, 4, 120, 44}, action: Rect{120, 4, 80, 44},
			status: Rect{0, 48, 200, 1}, help_: Rect{0, 49, 200, 1}},
		{name: "minimum", w: MinWidth, h: MinHeight, body: Rect{0, 4, 60, 6}, status: Rect{0, 10, 60, 1}, help_: Rect{0, 11, 60, 1}},
		{name: "too narrow", w: MinWidth - 1, h: 40, tooSmall: true},
		{name: "too short", w: 120, h: MinHeight - 1, tooSmall: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := ComputeLayout(c.w, c.h, c.panel)
			require.Equal(t, c.tooSmall, l.TooSmall)
			if c.tooSmall {
				return
			}
			assert.Equal(t, Rect{0, 0, c.w, 3}, l.Header)
			assert.Equal(t, Rect{0, 3, c.w, 1}, l.Tabs)
			assert.Equal(t, c.body, l.Body)
			assert.Equal(t, c.action, l.Action)
			assert.Equal(t, c.status, l.Status)
			assert.Equal(t, c.help_, l.Help)
			// every line of the screen belongs to exactly one region
			used := l.Header.H + l.Tabs.H + l.Body.H + l.Status.H + l.Help.H
			if l.Action.X == 0 {
				used += l.Action.H
			}
			assert.Equal(t, c.h, used)
		})
	}
}

var testEnv = rowEnv{Now: fixedNow, Marks: theme.MarksFor(false)}

func TestNodeRows(t *testing.T) {
	rows := nodeRows(fixtureSnapshot(), testEnv, false)
	require.Len(t, rows, 9)
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Key] = r
	}
	cases := []struct {
		node string
		want []string
	}{
		{"ip-10-0-17-41.us-east-2.compute.internal", []string{"ip-10-0-17-41.us-east-2.compute.internal", "Ready", "Windows", "10.0.20348", "worker", "10.20.0-bc9a7b1", "", "10.0.17.41", "5d"}},
		{"ip-10-0-23-188.us-east-2.compute.internal", []string{"ip-10-0-23-188.us-east-2.compute.internal", "NotReady", "Windows", "10.0.20348", "worker", "10.20.0-bc9a7b1", "", "10.0.23.188", "3h"}},
		{"ip-10-0-45-7.us-east-2.compute.internal", []string{"ip-10-0-45-7.us-east-2.compute.internal", "Ready", "Windows", "10.0.20348", "worker", "10.19.1-0f3c2d4 ⚠", "", "10.0.45.7", "2d"}},
		{"win-byoh-01.corp.example.com", []string{"win-byoh-01.corp.example.com", "Ready", "Windows", "10.0.17763", "worker", "10.20.0-bc9a7b1", "yes", "192.168.50.21", "40d"}},
		{"ip-10-0-1-100.us-east-2.compute.internal", []string{"ip-10-0-1-100.us-east-2.compute.internal", "Ready", "Linux", "", "control-plane,master", "", "", "10.0.1.100", "6d"}},
		{"ip-10-0-60-12.us-east-2.compute.internal", []string{"ip-10-0-60-12.us-east-2.compute.internal", "Ready,SchedulingDisabled", "Linux", "", "worker", "", "", "10.0.60.12", "6d"}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, byName[c.node].Cells, c.node)
	}
	assert.Equal(t, toneBad, byName["ip-10-0-23-188.us-east-2.compute.internal"].tone(1), "NotReady is flagged")
	assert.Equal(t, toneWarn, byName["ip-10-0-45-7.us-east-2.compute.internal"].tone(5), "drift is flagged")
	assert.Equal(t, toneWarn, byName["ip-10-0-60-12.us-east-2.compute.internal"].tone(1), "cordoned is flagged")

	for i, r := range rows {
		assert.Equal(t, i < 4, r.Cells[2] == "Windows", "Windows nodes come first (row %d)", i)
	}
	windows := nodeRows(fixtureSnapshot(), testEnv, true)
	assert.Len(t, windows, 4)
	for _, r := range windows {
		assert.Equal(t, "Windows", r.Cells[2])
	}
	ascii := nodeRows(fixtureSnapshot(), rowEnv{Now: fixedNow, Marks: theme.MarksFor(true)}, true)
	assert.Equal(t, "10.19.1-0f3c2d4 !", ascii[2].Cells[5], "ASCII drift mark")
	assert.Nil(t, nodeRows(nil, testEnv, false))
}

func TestNodeStatus(t *testing.T) {
	cases := []struct {
		status      model.NodeStatus
		cordoned    bool
		want        string
		wantTone    Tone
		description string
	}{
		{model.NodeReady, false, "Ready", toneGood, "ready"},
		{model.NodeReady, true, "Ready,SchedulingDisabled", toneWarn, "cordoned"},
		{model.NodeNotReady, true, "NotReady,SchedulingDisabled", toneBad, "not ready and cordoned"},
		{model.NodeUnknown, false, "Unknown", toneBad, "unknown"},
		{"", false, "Unknown", toneBad, "no status yet"},
	}
	for _, c := range cases {
		got, tone := nodeStatus(&model.NodeInfo{Status: c.status, Unschedulable: c.cordoned})
		assert.Equal(t, c.want, got, c.description)
		assert.Equal(t, c.wantTone, tone, c.description)
	}
}

func TestMachineSetRows(t *testing.T) {
	snap := fixtureSnapshot()
	collapsed := machineSetRows(snap, testEnv, nil)
	require.Len(t, collapsed, 4)
	assert.Equal(t, []string{winMachineSet("a"), "2", "2", "1", "1", "Windows", "AWS", "5d"}, collapsed[0].Cells)
	assert.Equal(t, "Linux", collapsed[2].Cells[5])
	assert.Equal(t, toneWarn, collapsed[0].tone(3), "fewer ready than desired")

	key := machineSetKey(&snap.MachineSets[0])
	expanded := machineSetRows(snap, testEnv, map[string]bool{key: true})
	require.Len(t, expanded, 6)
	for _, child := range expanded[1:3] {
		assert.Equal(t, key, child.Parent)
		assert.True(t, child.Span)
		assert.True(t, strings.HasPrefix(child.Cells[0], "   ↳ "+winMachineSet("a")+"-"), child.Cells[0])
	}
	assert.Contains(t, expanded[1].Cells[0], "Running")
	assert.Contains(t, expanded[1].Cells[0], "node: ip-10-0-17-41.us-east-2.compute.internal")
	assert.Contains(t, expanded[2].Cells[0], "Provisioned")
	assert.Equal(t, winMachineSet("b"), expanded[3].Cells[0], "the next MachineSet follows its Machines")
}

func TestSecretRows(t *testing.T) {
	rows := secretRows(fixtureSnapshot())
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"cloud-private-key", "yes", "ssh-rsa 4096 bits SHA256:Vq3kV0mW2j8b4yq5bQ8n1h5Zl6Zt2s0Jx3cJ9m1N4aE", "ok"}, rows[0].Cells)
	assert.Equal(t, "key matches cloud-private-key", rows[1].Cells[3])
	assert.Equal(t, []string{"pull-secret", "yes", "cloud.openshift.com, quay.io, registry.redhat.io", "ok"}, rows[2].Cells)

	cases := []struct {
		name    string
		secrets model.SecretsInfo
		row     int
		status  string
		tone    Tone
	}{
		{"missing key says how to create it", model.SecretsInfo{}, 0, "oc create secret generic cloud-private-key", toneBad},
		{"weak key warns", model.SecretsInfo{PrivateKey: model.KeyInfo{Present: true, Type: "ssh-rsa", Bits: 1024, Warning: "weak key: RSA 1024 bits"}}, 0, "weak key", toneWarn},
		{"unparsable key", model.SecretsInfo{PrivateKey: model.KeyInfo{Present: true, Problem: "key is passphrase-protected"}}, 0, "passphrase-protected", toneBad},
		{"user data for another key", model.SecretsInfo{PrivateKey: model.KeyInfo{Present: true}, UserData: model.UserDataInfo{Present: true}}, 1, "does not match", toneBad},
		{"user data without key to compare", model.SecretsInfo{UserData: model.UserDataInfo{Present: true}}, 1, "cannot compare", toneWarn},
		{"missing pull secret", model.SecretsInfo{}, 2, "missing", toneBad},
	}
	for _, c := range cases {
		snap := &model.Snapshot{Secrets: c.secrets}
		r := secretRows(snap)[c.row]
		assert.Contains(t, r.Cells[3], c.status, c.name)
		assert.Equal(t, c.tone, r.tone(3), c.name)
	}
}

func TestMirrorRows(t *testing.T) {
	rows := mirrorRows(fixtureSnapshot(), testEnv)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"quay.io/openshift-release-dev/ocp-release → mirror.corp.example.com:5000/ocp/release, backup.corp.example.com/ocp/release",
		"IDMS", "AllowContactingSource", "release-mirrors"}, rows[0].Cells)
	assert.Equal(t, "NeverContactSource", rows[1].Cells[2])
	assert.Equal(t, "ITMS", rows[2].Cells[1])
	ascii := mirrorRows(fixtureSnapshot(), rowEnv{Marks: theme.MarksFor(true)})
	assert.True(t, strings.HasPrefix(ascii[2].Cells[0], "mcr.microsoft.com/windows/servercore -> mirror"))
}

func TestFilterRows(t *testing.T) {
	rows := []Row{
		{Key: "win-a", Cells: []string{"win-a", "Ready"}},
		{Key: "lin-b", Cells: []string{"lin-b", "Ready"}},
		{Key: "win-c", Cells: []string{"win-c", "NotReady"}},
	}
	got := filterRows(rows, "win")
	require.Len(t, got, 2)
	assert.Equal(t, "win-a", got[0].Key, "original order is kept")
	assert.Equal(t, "win-c", got[1].Key)
	assert.Equal(t, []int{0, 1, 2}, got[0].Matches)

	got = filterRows(rows, "notr")
	require.Len(t, got, 1)
	assert.Equal(t, "win-c", got[0].Key, "any column matches")
	assert.Equal(t, []int{6, 7, 8, 9}, got[0].Matches, "offsets point into the joined cells")

	assert.Len(t, filterRows(rows, ""), 3, "an empty filter keeps everything")
	assert.Len(t, filterRows(rows, "  "), 3, "blanks are no filter")
	assert.Empty(t, filterRows(rows, "zzz"))
	assert.Nil(t, rows[0].Matches, "filtering does not mark the source rows")
}

func TestFilterRowsKeepsFamilies(t *testing.T) {
	rows := []Row{
		{Key: "set-a", Cells: []string{"set-a"}},
		{Key: "set-a/m1", Parent: "set-a", Span: true, Cells: []string{"machine-one node-x"}},
		{Key: "set-a/m2", Parent: "set-a", Span: true, Cells: []string{"machine-two node-y"}},
		{Key: "set-b", Cells: []string{"set-b"}},
	}
	keys := func(rs []Row) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Key)
		}
		return out
	}
	assert.Equal(t, []string{"set-a", "set-a/m2"}, keys(filterRows(rows, "node-y")), "a matching Machine brings its MachineSet")
	assert.Equal(t, []string{"set-a", "set-a/m1", "set-a/m2"}, keys(filterRows(rows, "set-a")), "a matching MachineSet brings its Machines")
	assert.Equal(t, []string{"set-b"}, keys(filterRows(rows, "set-b")))
}

func TestHighlight(t *testing.T) {
	mark := lipgloss.NewStyle().Bold(true)
	plain := lipgloss.NewStyle()
	// Render the marked parts as [..] to see exactly which characters are highlighted.
	show := func(text string, base int, matches []int) string {
		out := highlight(text, base, matches, plain, mark)
		out = strings.ReplaceAll(out, "\x1b[1m", "[")
		return strings.ReplaceAll(out, "\x1b[m", "]")
	}
	assert.Equal(t, "[win]dows", show("windows", 0, []int{0, 1, 2}))
	assert.Equal(t, "w[i]n[d]ows", show("windows", 0, []int{1, 3}))
	assert.Equal(t, "[w]indows", show("windows", 10, []int{2, 10}), "offsets are relative to the cell's start")
	assert.Equal(t, "a[→]b", show("a→b", 0, []int{1}), "multi-byte characters stay whole")
	assert.Equal(t, "abc", show("abc", 0, []int{7}), "matches beyond a truncated cell are ignored")
	assert.Equal(t, "abc", show("abc", 0, nil))
}

func TestColumnWidths(t *testing.T) {
	cols := []Column{{Title: "NAME", Max: 40, Min: 10, Flex: true}, {Title: "STATUS", Max: 10}, {Title: "ROLES", Max: 30, Min: 6, Flex: true}}
	rows := []Row{{Cells: []string{"a-rather-long-node-name-0123", "NotReady", "control-plane,master"}}}
	cases := []struct {
		name    string
		width   int
		widths  []int
		gap     int
		fitting bool
	}{
		{"everything fits", 100, []int{28, 8, 20}, 2, true},
		{"gaps narrow first", 2 + 28 + 8 + 20 + 2, []int{28, 8, 20}, 1, true},
		{"right flex column shrinks first", 2 + 28 + 8 + 12 + 2, []int{28, 8, 12}, 1, true},
		{"then the name", 2 + 20 + 8 + 6 + 2, []int{20, 8, 6}, 1, true},
		{"then everything", 2 + 4 + 4 + 4 + 2, []int{4, 4, 4}, 1, true},
		{"below the minimum the table is cut", 5, []int{4, 4, 4}, 1, false},
	}
	for _, c := range cases {
		widths, gap := columnWidths(cols, rows, c.width)
		assert.Equal(t, c.widths, widths, c.name)
		assert.Equal(t, c.gap, gap, c.name)
		assert.Equal(t, c.fitting, tableWidth(widths, gap) <= c.width, c.name)
	}
	widths, _ := columnWidths(cols, []Row{{Span: true, Cells: []string{strings.Repeat("x", 90)}}}, 200)
	assert.Equal(t, []int{4, 6, 5}, widths, "spanning rows do not size columns")
}

func TestRenderTable(t *testing.T) {
	st := NewStyles(theme.New(theme.Options{NoColor: true}))
	rows := []Row{
		{Key: "a", Cells: []string{"alpha", "Ready"}},
		{Key: "b", Cells: []string{"a-name-too-long-for-it", "NotReady"}},
		{Key: "c", Cells: []string{"gamma", "Ready"}},
	}
	cols := []Column{{Title: "NAME", Max: 12}, {Title: "STATUS", Max: 8}}
	out := renderTable(&st, theme.MarksFor(false), tableView{Columns: cols, Widths: []int{12, 8}, Gap: 2, Rows: rows,
		Cursor: 1, Offset: 1, Width: 30, Height: 4})
	lines := strings.Split(stripANSI(out), "\n")
	assert.Equal(t, []string{
		"  NAME          STATUS        ",
		"▶ a-name-too-…  NotReady      ",
		"  gamma         Ready         ",
		"                              ",
	}, lines)
}

func TestStepRowsWrapAtTheWidth(t *testing.T) {
	st := NewStyles(theme.New(theme.Options{NoColor: true}))
	steps := []ActionUpdate{{Step: "cordon", State: StepDone}, {Step: "drain", State: StepDone, Progress: 2, Total: 3},
		{Step: "restart", State: StepRunning}, {Step: "down"}}
	rows := stepRows(&st, steps, 30)
	require.Len(t, rows, 2)
	assert.Equal(t, "✓ cordon   ✓ drain (2/3)", stripANSI(rows[0]))
	assert.Equal(t, "… restart   · down", stripANSI(rows[1]))
	assert.Len(t, stepRows(&st, steps, 200), 1, "everything on one line when it fits")
	assert.Empty(t, stepRows(&st, nil, 30))
}
