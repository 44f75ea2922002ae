package ui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Theme is the palette the styles are built from.
type Theme struct {
	Accent  color.Color // active tab, titles
	Muted   color.Color // secondary text, help
	Good    color.Color // Ready, present
	Warn    color.Color // drift, weak keys, cordoned
	Bad     color.Color // NotReady, missing, reconnecting
	Match   color.Color // filter matches
	Windows color.Color // the Windows mark
}

// DefaultTheme works on dark and light terminals alike (ANSI colours the terminal itself maps).
func DefaultTheme() Theme {
	return Theme{
		Accent:  lipgloss.Color("12"),
		Muted:   lipgloss.Color("8"),
		Good:    lipgloss.Color("10"),
		Warn:    lipgloss.Color("11"),
		Bad:     lipgloss.Color("9"),
		Match:   lipgloss.Color("13"),
		Windows: lipgloss.Color("14"),
	}
}

// Styles are every style the console uses, built once.
type Styles struct {
	NoColor bool

	Title      lipgloss.Style
	HeaderKey  lipgloss.Style
	HeaderText lipgloss.Style
	Banner     lipgloss.Style // connection lost
	TabActive  lipgloss.Style
	TabIdle    lipgloss.Style

	ColumnHeader lipgloss.Style
	Selected     lipgloss.Style
	Cell         lipgloss.Style
	Match        lipgloss.Style
	Muted        lipgloss.Style
	Good         lipgloss.Style
	Warn         lipgloss.Style
	Bad          lipgloss.Style
	Notice       lipgloss.Style // pane-level messages (not available, forbidden, loading)

	DetailTitle lipgloss.Style
	DetailKey   lipgloss.Style

	PanelBorder lipgloss.Style // action panel and dialogs
	HelpKey     lipgloss.Style
	HelpDesc    lipgloss.Style
}

// NewStyles builds the styles; without colour only attributes (bold, reverse, underline) remain, so
// selection and matches stay visible on NO_COLOR terminals.
func NewStyles(t Theme, noColor bool) Styles {
	fg := func(s lipgloss.Style, c color.Color) lipgloss.Style {
		if noColor {
			return s
		}
		return s.Foreground(c)
	}
	base := lipgloss.NewStyle()
	return Styles{
		NoColor:      noColor,
		Title:        fg(base.Bold(true), t.Accent),
		HeaderKey:    fg(base, t.Muted),
		HeaderText:   base,
		Banner:       fg(base.Bold(true), t.Bad),
		TabActive:    fg(base.Bold(true), t.Accent),
		TabIdle:      fg(base, t.Muted),
		ColumnHeader: fg(base.Bold(true), t.Muted),
		Selected:     base.Reverse(true),
		Cell:         base,
		Match:        fg(base.Underline(true).Bold(true), t.Match),
		Muted:        fg(base, t.Muted),
		Good:         fg(base, t.Good),
		Warn:         fg(base, t.Warn),
		Bad:          fg(base.Bold(true), t.Bad),
		Notice:       fg(base.Italic(true), t.Warn),
		DetailTitle:  fg(base.Bold(true), t.Accent),
		DetailKey:    fg(base.Bold(true), t.Muted),
		PanelBorder:  fg(base.Border(lipgloss.RoundedBorder()), t.Muted),
		HelpKey:      fg(base.Bold(true), t.Accent),
		HelpDesc:     fg(base, t.Muted),
	}
}
