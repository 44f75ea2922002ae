package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/testsupport/uidriver"
	"github.com/wmcon/wmcon/ui"
)

// TestMachineSetFormSaysWhatTheClusterRefuses: on the demo with the session's real Runner, MachineSets n
// with every field left empty keeps the form open and says, below the image field, what machineset
// generate says headless; nothing runs in the action panel.
func TestMachineSetFormSaysWhatTheClusterRefuses(t *testing.T) {
	_, s := openDemo(t, 2*time.Minute)
	d := uidriver.New(t, ui.New(ui.NewProgramContext(consoleOptions(s)), s.Watcher.Snapshots()), 80, 24)
	d.WaitFor(30*time.Second, "context demo")
	d.Press("2", "n")
	d.WaitFor(10*time.Second, "New Windows MachineSet", "AMI ID, Azure")
	d.Press("enter", "enter", "enter", "enter", "enter", "enter")
	d.WaitFor(30*time.Second, "--image is required on AWS")
	scr := d.Screen()
	assert.Contains(t, scr, "New Windows MachineSet", "the form stays open")
	assert.Contains(t, scr, "▶ image", "the cursor is on the field the reason names")
	assert.NotContains(t, scr, "FAILED")
}
