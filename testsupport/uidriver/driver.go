// Package uidriver runs a Bubble Tea model as its program would, without a terminal, for tests that drive
// the console end to end (over the demo, or a real API server): every command's message goes back to
// Update, and the test waits for text on the screen.
package uidriver

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Driver holds the model and the messages its commands produced.
type Driver struct {
	t    testing.TB
	m    tea.Model
	msgs chan tea.Msg
}

// New starts m (Init) on a terminal of w × h.
func New(t testing.TB, m tea.Model, w, h int) *Driver {
	d := &Driver{t: t, m: m, msgs: make(chan tea.Msg, 256)}
	d.spawn(m.Init())
	d.Send(tea.WindowSizeMsg{Width: w, Height: h})
	return d
}

func (d *Driver) spawn(c tea.Cmd) {
	if c != nil {
		go func() { d.msgs <- c() }()
	}
}

// Send gives msg to the model (a batch's commands are run) and runs the command it returns.
func (d *Driver) Send(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			d.spawn(c)
		}
	default:
		next, cmd := d.m.Update(msg)
		d.m = next
		d.spawn(cmd)
	}
}

// Model is the model as it stands.
func (d *Driver) Model() tea.Model { return d.m }

// Screen is the view without escape codes.
func (d *Driver) Screen() string { return ansi.Strip(d.m.View().Content) }

// Press sends keys: "enter", "esc", "tab", "down", "up", "backspace", or text typed a character at a time.
func (d *Driver) Press(keys ...string) {
	named := map[string]tea.Key{"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
		"down": {Code: tea.KeyDown}, "up": {Code: tea.KeyUp}, "backspace": {Code: tea.KeyBackspace}}
	for _, k := range keys {
		if key, ok := named[k]; ok {
			d.Send(tea.KeyPressMsg(key))
			continue
		}
		for _, r := range k {
			d.Send(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
}

// WaitFor runs the program until the screen shows every text, failing the test after timeout.
func (d *Driver) WaitFor(timeout time.Duration, texts ...string) {
	d.t.Helper()
	if !d.Wait(timeout, texts...) {
		d.t.Fatalf("the screen never showed %q:\n%s", texts, d.Screen())
	}
}

// Wait runs the program until the screen shows every text; false when it did not within timeout.
func (d *Driver) Wait(timeout time.Duration, texts ...string) bool {
	deadline := time.After(timeout)
	for {
		s := d.Screen()
		all := true
		for _, text := range texts {
			all = all && strings.Contains(s, text)
		}
		if all {
			return true
		}
		select {
		case msg := <-d.msgs:
			d.Send(msg)
		case <-deadline:
			return false
		}
	}
}
