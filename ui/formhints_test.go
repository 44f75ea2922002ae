package ui

import (
	"context"
	"errors"
	"testing"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
)

// TestGoldenMachineSetFormHints80x24 and 160x45: every field of MachineSets n shows its whole hint, the
// focused one wrapped below it, and the form fits the screen.
func TestGoldenMachineSetFormHints80x24(t *testing.T) {
	goldenScreenAt(t, withRunner(), 80, 24, byohSnapshot(), press("2", "n")...)
}

func TestGoldenMachineSetFormHints160x45(t *testing.T) {
	goldenScreenAt(t, withRunner(), 160, 45, byohSnapshot(), press("2", "n", "down", "down")...)
}

// TestGoldenBYOHFormHint80x24 and 160x45: the BYOH form's address hint, whole.
func TestGoldenBYOHFormHint80x24(t *testing.T) {
	goldenScreenAt(t, withRunner(), 80, 24, byohSnapshot(), press("2", "G", "n")...)
}

func TestGoldenBYOHFormHint160x45(t *testing.T) {
	goldenScreenAt(t, withRunner(), 160, 45, byohSnapshot(), press("2", "G", "n")...)
}

// refusingRunner refuses a MachineSet preview as the setup actions do when the image is missing
// (the real runner's answer is checked on the demo in session's TestMachineSetFormSaysWhatTheClusterRefuses).
type refusingRunner struct{ requests chan request.Request }

func (r refusingRunner) Run(_ context.Context, req request.Request, sink event.Sink) error {
	r.requests <- req
	rep := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Targets()[0]}
	err := errors.New("--image is required on AWS: the ID of a Windows Server AMI in the cluster's region")
	rep.Failed("generate", err, "")
	rep.Finish(event.Failed, "generate failed", "")
	return err
}

// TestGoldenMachineSetFormFailure80x24 and 160x45: a request the cluster refuses keeps the form open with
// the reason below the field it names (the cursor there), instead of a FAILED line after the form went.
func TestGoldenMachineSetFormFailure80x24(t *testing.T) { goldenFormFailure(t, 80, 24) }

func TestGoldenMachineSetFormFailure160x45(t *testing.T) { goldenFormFailure(t, 160, 45) }

func goldenFormFailure(t *testing.T, w, h int) {
	opts := testOptions()
	runner := refusingRunner{requests: make(chan request.Request, 1)}
	opts.Runner = runner
	snapshots := make(chan *model.Snapshot, 1)
	snapshots <- byohSnapshot()
	tm := teatest.NewTestModel(t, New(NewProgramContext(opts), snapshots), teatest.WithInitialTermSize(w, h))
	waitForScreen(t, tm, "context admin")
	for _, msg := range press("2", "n", "enter", "enter", "enter", "enter", "enter", "enter") {
		tm.Send(msg)
	}
	waitForScreen(t, tm, "region")
	if req := <-runner.requests; !req.(request.MachineSetGenerate).Preview {
		t.Fatalf("the form's check runs a preview, got %#v", req)
	}
	finalScreen(t, tm)
}
