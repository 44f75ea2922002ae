// Package keymap holds the console's key map: every binding of the list and of the views that share its
// keys, from which the help is generated.
package keymap

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/wmcon/wmcon/ui/binding"
)

// Map holds every binding of the console; help is generated from it.
type Map struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextPane, PrevPane                      key.Binding
	Panes                                   []key.Binding // 1, 2, …: one per pane, in tab order

	Filter, ClearFilter, AcceptFilter key.Binding
	Open, Back, Expand, Collapse      key.Binding
	WindowsOnly, Mark                 key.Binding
	Help, Quit                        key.Binding

	// The node actions and views start disabled, so they neither match nor appear in help; the console
	// enables those its options provide (a runner, triage, logs) and that read-only allows.
	Reboot, Cordon, Uncordon, Drain, Logs, Health key.Binding
	Configure                                     key.Binding
	// Upgrade shows the upgrade plan of the Windows nodes and, after a confirmation, upgrades the standalone ones.
	Upgrade key.Binding
	// The Mirrors pane's keys, on when the console can read the nodes' registry mirrors.
	MirrorsApply, MirrorsReload key.Binding
	// The MachineSets pane's keys (new MachineSet or BYOH host, scale, delete / remove), on with a runner
	// outside read-only.
	SetupNew, SetupScale, SetupDelete key.Binding
}

// New returns the default bindings; panes are the list's pane titles, in tab order.
func New(panes []string) Map {
	b := binding.New
	reserved := func(help, desc string, keys ...string) key.Binding {
		k := b(help, desc, keys...)
		k.SetEnabled(false)
		return k
	}
	return Map{
		Up:       b("↑/k", "up", "up", "k"),
		Down:     b("↓/j", "down", "down", "j"),
		PageUp:   b("pgup", "page up", "pgup", "ctrl+b"),
		PageDown: b("pgdn", "page down", "pgdown", "ctrl+f"),
		Top:      b("home/g", "first", "home", "g"),
		Bottom:   b("end/G", "last", "end", "G"),

		NextPane: b("tab", "next pane", "tab"),
		PrevPane: b("shift+tab", "previous pane", "shift+tab"),
		Panes:    paneBindings(b, panes),

		Filter:       b("/", "filter", "/"),
		ClearFilter:  b("esc", "clear filter", "esc"),
		AcceptFilter: b("enter", "keep filter", "enter"),
		Open:         b("enter", "details", "enter"),
		Back:         b("esc/q", "back", "esc", "q"),
		Expand:       b("space/→", "expand", "space", "right"),
		Collapse:     b("←", "collapse", "left"),
		WindowsOnly:  b("w", "windows only", "w"),
		Mark:         reserved("space", "mark for a batch", "space"),
		Help:         b("?", "help", "?"),
		Quit:         b("q", "quit", "q", "ctrl+c"),

		Reboot:   reserved("R", "reboot", "R"),
		Cordon:   reserved("c", "cordon", "c"),
		Uncordon: reserved("u", "uncordon", "u"),
		Drain:    reserved("d", "drain", "d"),
		Logs:     reserved("l", "logs", "l"),
		Health:   reserved("h", "health", "h"),

		Configure:     reserved("C", "configure", "C"),
		Upgrade:       reserved("U", "upgrade plan", "U"),
		MirrorsApply:  reserved("a", "apply mirrors", "a"),
		MirrorsReload: reserved("r", "read nodes again", "r"),
		SetupNew:      reserved("n", "new", "n"),
		SetupScale:    reserved("s", "scale", "s"),
		SetupDelete:   reserved("x", "delete", "x"),
	}
}

// paneBindings numbers the panes from 1, in tab order.
func paneBindings(b func(help, desc string, keys ...string) key.Binding, panes []string) []key.Binding {
	out := make([]key.Binding, len(panes))
	for i, title := range panes {
		n := fmt.Sprint(i + 1)
		out[i] = b(n, strings.ToLower(title), n)
	}
	return out
}

// PaneFor is the index of the pane whose number key was pressed.
func (k Map) PaneFor(msg fmt.Stringer) (int, bool) {
	for i, b := range k.Panes {
		if key.Matches(msg, b) {
			return i, true
		}
	}
	return 0, false
}

// EnableNodeActions turns on the node actions a runner provides.
func (k *Map) EnableNodeActions() {
	for _, b := range []*key.Binding{&k.Reboot, &k.Cordon, &k.Uncordon, &k.Drain, &k.Mark, &k.Configure, &k.Upgrade} {
		b.SetEnabled(true)
	}
}

// ActionBindings are the action keys, in help order.
func (k Map) ActionBindings() []key.Binding {
	return []key.Binding{k.Reboot, k.Health, k.Logs, k.Drain, k.Cordon, k.Uncordon, k.Configure}
}
