package ui

import (
	"charm.land/bubbles/v2/key"

	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/keymap"
)

// listHelp adapts the key map to help.KeyMap for the list (or its filter prompt), so the short line and
// the full help only list keys that work right now.
type listHelp struct {
	keys      keymap.Map
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
		short = append(short, binding.Enabled(k.ActionBindings()...)...)
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
func fullHelp(k keymap.Map, pane paneKind) [][]key.Binding {
	groups := [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		append([]key.Binding{k.NextPane, k.PrevPane}, k.Panes...),
		append([]key.Binding{k.Filter, k.ClearFilter, k.Open, k.Back}, paneKeys(k, pane)...),
		{k.Help, k.Quit},
	}
	if actions := binding.Enabled(append(k.ActionBindings(), k.Upgrade)...); len(actions) > 0 {
		groups = append(groups, actions)
	}
	return groups
}

// paneKeys are the keys only one pane has.
func paneKeys(k keymap.Map, pane paneKind) []key.Binding {
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
