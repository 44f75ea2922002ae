package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/wmcon/wmcon/ui/binding"
)

// KeyMap holds every binding of the console; help is generated from it.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextPane, PrevPane                      key.Binding
	Panes                                   []key.Binding // 1, 2, …: one per pane of paneSpecs

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

// NewKeyMap returns the default bindings.
func NewKeyMap() KeyMap {
	b := binding.New
	reserved := func(help, desc string, keys ...string) key.Binding {
		k := b(help, desc, keys...)
		k.SetEnabled(false)
		return k
	}
	return KeyMap{
		Up:       b("↑/k", "up", "up", "k"),
		Down:     b("↓/j", "down", "down", "j"),
		PageUp:   b("pgup", "page up", "pgup", "ctrl+b"),
		PageDown: b("pgdn", "page down", "pgdown", "ctrl+f"),
		Top:      b("home/g", "first", "home", "g"),
		Bottom:   b("end/G", "last", "end", "G"),

		NextPane: b("tab", "next pane", "tab"),
		PrevPane: b("shift+tab", "previous pane", "shift+tab"),
		Panes:    paneBindings(b),

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
func paneBindings(b func(help, desc string, keys ...string) key.Binding) []key.Binding {
	out := make([]key.Binding, len(paneSpecs))
	for i, p := range paneSpecs {
		n := fmt.Sprint(i + 1)
		out[i] = b(n, strings.ToLower(p.title), n)
	}
	return out
}

// paneFor is the pane whose number key was pressed.
func (k KeyMap) paneFor(msg fmt.Stringer) (paneKind, bool) {
	for i, b := range k.Panes {
		if key.Matches(msg, b) {
			return paneKind(i), true
		}
	}
	return 0, false
}

// enableNodeActions turns on the node actions a runner provides.
func (k *KeyMap) enableNodeActions() {
	for _, b := range []*key.Binding{&k.Reboot, &k.Cordon, &k.Uncordon, &k.Drain, &k.Mark, &k.Configure, &k.Upgrade} {
		b.SetEnabled(true)
	}
}

// actionBindings are the action keys, in help order.
func (k KeyMap) actionBindings() []key.Binding {
	return []key.Binding{k.Reboot, k.Health, k.Logs, k.Drain, k.Cordon, k.Uncordon, k.Configure}
}

// listHelp adapts the key map to help.KeyMap for the list (or its filter prompt), so the short line and
// the full help only list keys that work right now.
type listHelp struct {
	keys      KeyMap
	filtering bool
	pane      paneKind
	launchers []key.Binding // the keys of the registered views available now
	// shortLaunchers are those of launchers the one-line help lists (not the quiet ones).
	shortLaunchers []key.Binding
}

func (h listHelp) ShortHelp() []key.Binding {
	k := h.keys
	if h.filtering {
		return []key.Binding{k.AcceptFilter, k.ClearFilter}
	}
	// The help line is cut at the right on narrow terminals: ? and what acts on the selected row come
	// first, navigation (which the full help lists) after.
	short := []key.Binding{k.Help}
	if h.pane == paneNodes {
		short = append(short, binding.Enabled(k.actionBindings()...)...)
	}
	short = append(short, h.shortLaunchers...)
	short = append(short, k.NextPane, k.Filter, k.Open)
	short = append(short, paneKeys(k, h.pane)...)
	return append(short, k.Quit)
}

func (h listHelp) FullHelp() [][]key.Binding {
	full := fullHelp(h.keys, h.pane)
	if len(h.launchers) > 0 {
		full = append(full, h.launchers)
	}
	return full
}

// fullHelp is the full help of the list and of the views over it that have no keys of their own.
func fullHelp(k KeyMap, pane paneKind) [][]key.Binding {
	groups := [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		append([]key.Binding{k.NextPane, k.PrevPane}, k.Panes...),
		append([]key.Binding{k.Filter, k.ClearFilter, k.Open, k.Back}, paneKeys(k, pane)...),
		{k.Help, k.Quit},
	}
	if actions := binding.Enabled(append(k.actionBindings(), k.Upgrade)...); len(actions) > 0 {
		groups = append(groups, actions)
	}
	return groups
}

// paneKeys are the keys only one pane has.
func paneKeys(k KeyMap, pane paneKind) []key.Binding {
	switch pane {
	case paneNodes:
		return binding.Enabled(k.WindowsOnly, k.Mark)
	case paneMachineSets:
		return append(append([]key.Binding{k.Expand, k.Collapse}, binding.Enabled(k.SetupNew, k.SetupScale, k.SetupDelete)...), k.WindowsOnly)
	case paneMirrors:
		return binding.Enabled(k.MirrorsApply, k.MirrorsReload)
	}
	return nil
}
