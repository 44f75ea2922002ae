package ui

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/wmcon/wmcon/model"
)

// goldenScreen runs the console as a real program (teatest), feeds it snap and then msgs, quits, and
// compares the final screen, as an ASCII terminal would show it, with testdata/<TestName>.golden.
// Regenerate with: go test ./ui -run Golden -update
func goldenScreen(t *testing.T, snap *model.Snapshot, msgs ...tea.Msg) {
	t.Helper()
	snapshots := make(chan *model.Snapshot, 1)
	snapshots <- snap
	tm := teatest.NewTestModel(t, New(NewProgramContext(testOptions()), snapshots),
		teatest.WithInitialTermSize(120, 40))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("context admin")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	for _, msg := range msgs {
		tm.Send(msg)
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if !ok {
		t.Fatal("the program did not return the console model")
	}
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, final.View().Content)))
}

func TestGoldenNodes(t *testing.T) {
	goldenScreen(t, fixtureSnapshot(), press("j")...)
}

func TestGoldenFilter(t *testing.T) {
	goldenScreen(t, fixtureSnapshot(), append(press("/"), typeText("win")...)...)
}

func TestGoldenNodeDetail(t *testing.T) {
	goldenScreen(t, fixtureSnapshot(), press("j", "j", "enter")...)
}

func TestGoldenMachineSetsExpanded(t *testing.T) {
	goldenScreen(t, fixtureSnapshot(), press("2", "space")...)
}

func TestGoldenSecrets(t *testing.T) {
	snap := fixtureSnapshot()
	snap.Secrets.UserData.MatchesKey = false
	snap.Secrets.UserData.KeyFingerprint = "SHA256:0ldK3yN0tM4tch1ngTh3Cl0udPr1v4t3K3yXyZ"
	goldenScreen(t, snap, press("3")...)
}

func TestGoldenMirrors(t *testing.T) {
	goldenScreen(t, fixtureSnapshot(), press("4")...)
}

func TestGoldenNotInstalled(t *testing.T) {
	snap := fixtureSnapshot()
	snap.MachineSets = nil
	snap.Resources[model.ResMachineSets] = model.ResourceState{Availability: model.NotInstalled}
	snap.Resources[model.ResMachines] = model.ResourceState{Availability: model.NotInstalled}
	goldenScreen(t, snap, press("2")...)
}

func TestGoldenReconnecting(t *testing.T) {
	snap := fixtureSnapshot()
	snap.Connection = model.Connection{Connected: false, Since: fixedNow.Add(-95 * time.Second),
		LastError: "Get \"https://api.ci-ln-x7k2m9b.aws.example.com:6443/api\": dial tcp: i/o timeout"}
	goldenScreen(t, snap)
}
