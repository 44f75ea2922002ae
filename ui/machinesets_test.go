package ui

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/machinesets"
	"github.com/wmcon/wmcon/ui/view"
)

// byohSnapshot is the fixture with its BYOH node listed in windows-instances, a host not configured yet and
// an entry WMCO cannot use.
func byohSnapshot() *model.Snapshot {
	s := fixtureSnapshot()
	s.BYOH = []model.BYOHInstance{{Address: "127.168.50.21", User: "Administrator"}, {Address: "127.168.50.22", User: "wmcon"}}
	s.BYOHProblems = []string{model.BYOHProblem("127.168.50.30", errors.New(`the value must be username=<name>, found "Administrator"`))}
	return s
}

func setupModel(runner view.Runner, snap *model.Snapshot) Model {
	opts := testOptions()
	opts.Runner = runner
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	return update(m, snapshotMsg{snap}, keyPress("2"))
}

// submit presses enter on a form and runs what it answers, until the runner got a request.
func submit(t *testing.T, m Model, runner recordingRunner) (Model, request.Request) {
	t.Helper()
	m, cmd := keyCmd(m, "enter")
	m = pump(t, m, cmd, func(m Model) bool { return len(runner.requests) > 0 && m.running != nil && m.running.done })
	select {
	case req := <-runner.requests:
		return m, req
	default:
		t.Fatalf("no request reached the runner; screen:\n%s", screen(m))
	}
	return m, nil
}

func TestMachineSetsPaneScalesAndDeletes(t *testing.T) {
	runner := recordingRunner{requests: make(chan request.Request, 1)}
	m := setupModel(runner, fixtureSnapshot())
	assert.Contains(t, screenLines(t, m)[39], "n new")
	ms := fixtureMachineSets()[0]

	m = update(m, keyPress("s"))
	require.True(t, isTop[*dialog.FieldForm](m))
	out := screen(m)
	assert.Contains(t, out, "Scale MachineSet "+ms.Name)
	assert.Contains(t, out, "2 desired, 1 ready now")
	m = update(m, press("backspace")...)
	m = update(m, typeText("x")...)
	m, _ = keyCmd(m, "enter")
	assert.Contains(t, screen(m), `replicas "x": give a whole number`, "a bad count keeps the form open, saying why")
	m = update(m, press("backspace")...)
	m = update(m, typeText("3")...)
	m, req := submit(t, m, runner)
	assert.Equal(t, request.MachineSetScale{Name: ms.Name, Replicas: 3}, req)

	m = update(m, press("esc")...) // close the finished action's panel
	m, cmd := keyCmd(m, "x")
	m = pump(t, m, cmd, func(m Model) bool { return len(runner.requests) > 0 && m.running != nil && m.running.done })
	assert.Equal(t, request.MachineSetDelete{Name: ms.Name}, <-runner.requests, "the action itself asks, naming the nodes")

	m = update(m, press("esc", "G", "k")...) // a Linux worker MachineSet
	m = update(m, keyPress("x"))
	assert.Contains(t, screen(m), "is a Linux MachineSet: wmcon deletes Windows MachineSets only")
	assert.Empty(t, runner.requests)
}

func TestMachineSetsPaneNewMachineSetForm(t *testing.T) {
	runner := recordingRunner{requests: make(chan request.Request, 2)}
	m := setupModel(runner, fixtureSnapshot())
	m = update(m, keyPress("n"))
	require.True(t, isTop[*dialog.FieldForm](m))
	assert.Contains(t, screen(m), "New Windows MachineSet")
	m = update(m, typeText("ami-0windows2022")...)
	m = update(m, press("enter", "enter", "enter", "enter", "enter")...) // through platform, name, zone, instance type
	m = update(m, press("backspace")...)
	m = update(m, typeText("2")...)
	m, cmd := keyCmd(m, "enter")
	pump(t, m, cmd, func(m Model) bool { return m.running != nil && m.running.done })
	require.Len(t, runner.requests, 2)
	assert.Equal(t, request.MachineSetGenerate{Image: "ami-0windows2022", Replicas: ptr.To[int32](2), Preview: true}, <-runner.requests,
		"the form tries a preview before it answers")
	assert.Equal(t, request.MachineSetGenerate{Image: "ami-0windows2022", Replicas: ptr.To[int32](2)}, <-runner.requests)
}

func TestMachineSetsPaneListsBYOHHosts(t *testing.T) {
	runner := recordingRunner{requests: make(chan request.Request, 1)}
	m := setupModel(runner, byohSnapshot())
	out := screen(m)
	assert.Contains(t, out, "BYOH hosts (windows-instances): 2")
	assert.Contains(t, out, "127.168.50.21  user: Administrator   node: win-byoh-01.corp.example.com")
	assert.Contains(t, out, "127.168.50.22  user: wmcon           node: none yet — WMCO has not configured it")
	assert.Contains(t, out, `entry "127.168.50.30"`)
	assert.Contains(t, out, "MachineSets (4)", "the BYOH group is not counted as a MachineSet")

	// Without the operator wmcon configures a listed host itself, and the row names the command.
	noOperator := byohSnapshot()
	noOperator.Cluster.WMCOVersion = ""
	assert.Contains(t, screen(setupModel(runner, noOperator)), "127.168.50.22  user: wmcon           node: none — wmcon configures it: wmcon configure --address 127.168.50.22")

	m = update(m, press("G", "k", "k")...) // the first host
	m, cmd := keyCmd(m, "x")
	m = pump(t, m, cmd, func(m Model) bool { return len(runner.requests) > 0 && m.running != nil && m.running.done })
	assert.Equal(t, request.BYOHRemove{Address: "127.168.50.21", Node: "win-byoh-01.corp.example.com"}, <-runner.requests)

	m = update(m, press("esc", "n")...)
	require.True(t, isTop[*dialog.FieldForm](m))
	assert.Contains(t, screen(m), "New BYOH host")
	m = update(m, typeText("::1")...)
	m = update(m, press("enter")...) // to the user, which keeps its default
	m, _ = keyCmd(m, "enter")
	assert.Contains(t, screen(m), "IPv6 addresses are not supported", "refused in the form, which stays open")
	m = update(m, press("up")...)
	for range "::1" {
		m = update(m, press("backspace")...)
	}
	m = update(m, typeText("127.0.0.99")...)
	m = update(m, press("enter")...)
	_, req := submit(t, m, runner)
	assert.Equal(t, request.BYOHAdd{Address: "127.0.0.99", User: "Administrator"}, req)
}

func TestMachineSetsPaneKeysOffReadOnly(t *testing.T) {
	opts := testOptions()
	opts.Runner = recordingRunner{requests: make(chan request.Request, 1)}
	opts.ReadOnly = true
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()}, keyPress("2"))
	assert.NotContains(t, screenLines(t, m)[39], "n new")
	m = update(m, press("s", "x", "n")...)
	assert.True(t, onList(m), "no form opens read-only")
}

func TestGoldenMachineSetsWithBYOHAndScaleForm(t *testing.T) {
	goldenScreenAt(t, withRunner(), 120, 40, byohSnapshot(), press("2", "s")...)
}

// TestBYOHFormChecksAsByohAddDoes: the form refuses with byoh add's own checks (model.CheckBYOHAddress and
// CheckBYOHUser), so what the README lists as rejected is rejected here too.
func TestBYOHFormChecksAsByohAddDoes(t *testing.T) {
	for _, tc := range []struct{ addr, user, want string }{
		{"127.0.0.5", "John Smith", "white space"},
		{"127.0.0.5", "ad\tmin", "white space"},
		{"127.0.0.5", "ad\x1b[2Jmin", "control character"},
		{"127.0.0.5", strings.Repeat("a", 300), "at most 20"},
		{"127.0.0.5", `"admin"`, `contains '"'`},
		{"127.0.0.5", "admin;reboot", `contains ';'`},
		{"127.0.0.0", "Administrator", "not a host's"},
		{"255.255.255.255", "Administrator", "broadcast"},
		{"::ffff:127.0.0.75", "Administrator", "write it as 127.0.0.75"},
		{"fe80::1%eth0", "Administrator", "IPv6 addresses are not supported"},
	} {
		_, err := machinesets.BYOHRequest(tc.addr, tc.user)
		if assert.Error(t, err, "%q %q", tc.addr, tc.user) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
	req, err := machinesets.BYOHRequest("127.0.0.5", "Administrator")
	require.NoError(t, err)
	assert.Equal(t, request.BYOHAdd{Address: "127.0.0.5", User: "Administrator"}, req)
}
