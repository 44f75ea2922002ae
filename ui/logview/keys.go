package logview

import (
	"charm.land/bubbles/v2/key"

	"github.com/wmcon/wmcon/ui/binding"
)

// KeyMap holds the log view's bindings; it implements help.KeyMap.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Follow, Wrap                            key.Binding
	Search, NextMatch, PrevMatch            key.Binding
	Filter, ToggleFilterMode                key.Binding
	NextProblem, PrevProblem                key.Binding
	Save, NextService, PrevService          key.Binding
	Clear, Close                            key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	b := binding.New
	return KeyMap{
		Up:               b("↑/k", "up", "up", "k"),
		Down:             b("↓/j", "down", "down", "j"),
		PageUp:           b("pgup", "page up", "pgup", "ctrl+b"),
		PageDown:         b("pgdn", "page down", "pgdown", "ctrl+f", "space"),
		Top:              b("home/g", "oldest", "home", "g"),
		Bottom:           b("end/G", "newest (follow)", "end", "G"),
		Follow:           b("f", "follow on/off", "f"),
		Wrap:             b("w", "wrap on/off", "w"),
		Search:           b("/", "search", "/"),
		NextMatch:        b("n", "next match", "n"),
		PrevMatch:        b("N", "previous match", "N"),
		Filter:           b("&", "filter lines", "&"),
		ToggleFilterMode: b("tab", "fuzzy/regex (in filter)", "tab"),
		NextProblem:      b("]", "next error/warning", "]"),
		PrevProblem:      b("[", "previous error/warning", "["),
		Save:             b("s", "save to file", "s"),
		NextService:      b("tab", "next service", "tab"),
		PrevService:      b("shift+tab", "previous service", "shift+tab"),
		Clear:            b("esc", "clear search/filter", "esc"),
		Close:            b("q", "close", "q"),
	}
}

// ShortHelp is the one-line help.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Follow, k.Search, k.Filter, k.NextProblem, k.Wrap, k.Save, k.NextService, k.Close}
}

// FullHelp is the help overlay, by column.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Follow},
		{k.Search, k.NextMatch, k.PrevMatch, k.Filter, k.ToggleFilterMode, k.Clear},
		{k.NextProblem, k.PrevProblem, k.Wrap, k.Save, k.NextService, k.PrevService, k.Close},
	}
}
