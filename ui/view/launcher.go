package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/model"
)

// A launcher opens a view from the list with a key. A new view registers its launcher from its own file
// (registerLauncher in an init function); its key then works in the list and is listed in help whenever
// Available says so — no other file changes. Choose a key the list does not use already (see KeyMap). The built-in views (details, help, health, logs) predate
// this and are opened by the list's own keys.
type launcher struct {
	Key       key.Binding
	Available func(ctx *ProgramContext) bool // nil: always; e.g. "the options provide what the view needs"
	Open      func(ctx *ProgramContext, at Selection) Component
	// Quiet keeps the key out of the one-line help (where it would push the pane's own keys off a narrow
	// terminal); the full help (?) lists it all the same.
	Quiet bool
}

// Selection is what the list shows when a launcher's key is pressed.
type Selection struct {
	Snap *model.Snapshot // nil before the first snapshot
	Pane string          // the active pane's title
	Key  string          // the selected row's key ("" when none); a node's name in the Nodes pane
}

var launchers []launcher

func registerLauncher(l launcher) { launchers = append(launchers, l) }

// launcherKeys are the keys of the launchers available now, in registration order.
func launcherKeys(ctx *ProgramContext) []key.Binding { return availableLaunchers(ctx, true) }

// availableLaunchers are launcherKeys, without the quiet ones unless quiet is set.
func availableLaunchers(ctx *ProgramContext, quiet bool) []key.Binding {
	var out []key.Binding
	for _, l := range launchers {
		if (l.Available == nil || l.Available(ctx)) && (quiet || !l.Quiet) {
			out = append(out, l.Key)
		}
	}
	return out
}

// launch opens the view whose key was pressed; it reports whether msg was a launcher's key.
func (m *Model) launch(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	for _, l := range launchers {
		if key.Matches(msg, l.Key) && (l.Available == nil || l.Available(m.ctx)) {
			at := Selection{Snap: m.snap, Pane: m.active.title()}
			if r, ok := m.pane().selected(); ok {
				at.Key = r.Key
			}
			return m.push(l.Open(m.ctx, at)), true
		}
	}
	return nil, false
}
