package ui

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/doctor"
)

// doctorReport is a report with one failing check, one warning and one passing, made in the local zone in
// which the view shows its time.
func doctorReport() diagnosis.Report {
	return diagnosis.Report{Cluster: "prod-x7k2p", Time: time.Date(2026, 11, 23, 18, 30, 0, 0, time.Local), Checks: []diagnosis.Check{
		{ID: "hybrid-overlay", Title: "Hybrid overlay networking", Status: diagnosis.CheckFail,
			Detail: "hybrid overlay networking is not configured (no hybridClusterNetwork): Windows pods would get no network",
			Fix:    "configure it on network.operator.openshift.io/cluster", Evidence: []string{"hybridOverlayVXLANPort: 9898"}},
		{ID: "wmco", Title: "WMCO", Status: diagnosis.CheckWarn, Detail: "WMCO is not installed",
			Fix: "install it: wmcon operator install --wait"},
		{ID: "cluster-reachable", Title: "API server", Status: diagnosis.CheckOK, Detail: "answers: Kubernetes v1.37.1"},
	}}
}

func TestDoctorViewShowsTheReportAndChecksAgain(t *testing.T) {
	var calls atomic.Int32
	opts := testOptions()
	opts.Runner = recordingRunner{requests: make(chan request.Request, 1)}
	opts.Doctor = func(context.Context) (diagnosis.Report, error) {
		calls.Add(1)
		return doctorReport(), nil
	}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	assert.Contains(t, screenLines(t, m)[39], "D doctor", "the list offers the doctor")

	m, cmd := keyCmd(m, "D")
	require.True(t, isTop[*doctor.View](m))
	m = pump(t, m, cmd, func(m Model) bool { _, ok := topOf[*doctor.View](m).Report(); return ok })
	out := screen(m)
	assert.Contains(t, out, "Prerequisites for Windows nodes · prod-x7k2p")
	assert.Contains(t, out, "1 failing, 1 warning, 1 ok")
	assert.Contains(t, out, "configure it on network.operator.openshift.io/cluster", "the failing check is opened with what to do")
	assert.NotContains(t, out, "reboot node", "no node keys on a cluster report")

	for _, k := range []string{"r", "R", "l"} {
		m, cmd = keyCmd(m, k)
		assert.Nil(t, cmd, "%s does nothing on a cluster report", k)
	}
	assert.True(t, isTop[*doctor.View](m))

	m, cmd = keyCmd(m, "g")
	m = pump(t, m, cmd, func(m Model) bool { return calls.Load() == 2 && !topOf[*doctor.View](m).Loading() })
	m, cmd = keyCmd(m, "esc")
	require.NotNil(t, cmd)
	m = update(m, cmd())
	assert.True(t, onList(m))
}

func TestDoctorViewNeedsADoctor(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	assert.NotContains(t, screenLines(t, m)[39], "doctor")
	m = update(m, keyPress("D"))
	assert.True(t, onList(m))
}

// TestGoldenDoctor is the Doctor view as a real program draws it.
func TestGoldenDoctor(t *testing.T) {
	opts := testOptions()
	opts.Doctor = func(context.Context) (diagnosis.Report, error) { return doctorReport(), nil }
	snapshots := make(chan *model.Snapshot, 1)
	snapshots <- fixtureSnapshot()
	tm := teatest.NewTestModel(t, New(NewProgramContext(opts), snapshots), teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("context admin")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	tm.Send(keyPress("D"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("prod-x7k2p")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	require.NoError(t, tm.Quit())
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	require.True(t, ok)
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, final.View().Content)))
}
