package ui

import "charm.land/bubbles/v2/key"

// KeyMap holds every binding of the console; help is generated from it.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom        key.Binding
	NextPane, PrevPane, Pane1, Pane2, Pane3, Pane4 key.Binding

	Filter, ClearFilter, AcceptFilter key.Binding
	Open, Back, Expand, Collapse      key.Binding
	WindowsOnly, Mark                 key.Binding
	Help, Quit                        key.Binding

	// Actions are reserved for the next issue: defined here so their keys are taken, disabled so they
	// neither match nor appear in help until an action is wired to them (see actions.go).
	Reboot, Cordon, Uncordon, Drain, Logs, Health key.Binding
}

// NewKeyMap returns the default bindings.
func NewKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
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
		Pane1:    b("1", "nodes", "1"),
		Pane2:    b("2", "machinesets", "2"),
		Pane3:    b("3", "secrets", "3"),
		Pane4:    b("4", "mirrors", "4"),

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
	}
}

// enableNodeActions turns on the node actions a runner provides.
func (k *KeyMap) enableNodeActions() {
	for _, b := range []*key.Binding{&k.Reboot, &k.Cordon, &k.Uncordon, &k.Drain, &k.Mark} {
		b.SetEnabled(true)
	}
}

// actionBindings are the reserved action keys, in help order.
func (k KeyMap) actionBindings() []key.Binding {
	return []key.Binding{k.Reboot, k.Cordon, k.Uncordon, k.Drain, k.Logs, k.Health}
}

// helpKeyMap adapts the key map to help.KeyMap for the mode the console is in, so the short line and the
// full help only list keys that work right now.
type helpKeyMap struct {
	keys KeyMap
	mode mode
	pane paneKind
}

func (h helpKeyMap) ShortHelp() []key.Binding {
	k := h.keys
	switch h.mode {
	case modeFilter:
		return []key.Binding{k.AcceptFilter, k.ClearFilter}
	case modeDetail:
		short := []key.Binding{k.Up, k.Down, k.Back}
		if h.pane == paneNodes {
			short = append(short, enabledBindings([]key.Binding{k.Health, k.Logs})...)
		}
		return append(short, k.Help)
	case modeHelp:
		return []key.Binding{k.Back}
	}
	short := []key.Binding{k.NextPane, k.Filter, k.Open}
	short = append(short, h.paneBindings()...)
	if h.pane == paneNodes {
		short = append(short, enabledBindings(k.actionBindings())...)
	}
	return append(short, k.Help, k.Quit)
}

func (h helpKeyMap) FullHelp() [][]key.Binding {
	k := h.keys
	groups := [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.NextPane, k.PrevPane, k.Pane1, k.Pane2, k.Pane3, k.Pane4},
		append([]key.Binding{k.Filter, k.ClearFilter, k.Open, k.Back}, h.paneBindings()...),
		{k.Help, k.Quit},
	}
	if actions := enabledBindings(k.actionBindings()); len(actions) > 0 {
		groups = append(groups, actions)
	}
	return groups
}

func (h helpKeyMap) paneBindings() []key.Binding {
	switch h.pane {
	case paneNodes:
		return enabledBindings([]key.Binding{h.keys.WindowsOnly, h.keys.Mark})
	case paneMachineSets:
		return []key.Binding{h.keys.Expand, h.keys.Collapse}
	}
	return nil
}

func enabledBindings(bs []key.Binding) []key.Binding {
	var out []key.Binding
	for _, b := range bs {
		if b.Enabled() {
			out = append(out, b)
		}
	}
	return out
}
