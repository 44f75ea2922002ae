package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/ui/doctor"
	"github.com/wmcon/wmcon/ui/operator"
	"github.com/wmcon/wmcon/ui/proxy"
	"github.com/wmcon/wmcon/ui/view"
	"github.com/wmcon/wmcon/ui/wizard"
)

// launchers are the views the list opens with a key of their own, in help order. A new view adds its
// package's Launcher here (docs/architecture.md, "Adding a view"). The built-in views (details, help,
// health, logs) predate this and are opened by the list's own keys.
var launchers = []view.Launcher{doctor.Launcher, operator.Launcher, proxy.Launcher, wizard.Launcher}

// launcherKeys are the keys of the launchers available now, in order.
func launcherKeys(ctx *view.ProgramContext) []key.Binding { return availableLaunchers(ctx, true) }

// availableLaunchers are launcherKeys, without the quiet ones unless quiet is set.
func availableLaunchers(ctx *view.ProgramContext, quiet bool) []key.Binding {
	var out []key.Binding
	for _, l := range launchers {
		if l.Works(ctx) && (quiet || !l.Quiet) {
			out = append(out, l.Key)
		}
	}
	return out
}

// launch opens the view whose key was pressed; it reports whether msg was a launcher's key.
func (m *Model) launch(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	for _, l := range launchers {
		if key.Matches(msg, l.Key) && l.Works(m.ctx) {
			at := view.Selection{Snap: m.snap, Pane: m.active.title()}
			if r, ok := m.pane().selected(); ok {
				at.Key = r.Key
			}
			return m.push(l.Open(m.ctx, at)), true
		}
	}
	return nil, false
}
