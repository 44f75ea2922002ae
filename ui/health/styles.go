package health

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Styles are the health view's styles, built once. The console passes its own palette through
// NewStyles so the view matches the panes.
type Styles struct {
	Title    lipgloss.Style
	Muted    lipgloss.Style
	Fail     lipgloss.Style
	Warn     lipgloss.Style
	Unknown  lipgloss.Style
	OK       lipgloss.Style
	Selected lipgloss.Style
	Fix      lipgloss.Style
	Notice   lipgloss.Style
}

// Palette is the colours the styles are built from.
type Palette struct {
	Accent, Muted, Good, Warn, Bad color.Color
}

// DefaultPalette uses ANSI colours the terminal maps, like the console's default theme.
func DefaultPalette() Palette {
	return Palette{Accent: lipgloss.Color("12"), Muted: lipgloss.Color("8"), Good: lipgloss.Color("10"),
		Warn: lipgloss.Color("11"), Bad: lipgloss.Color("9")}
}

// DefaultStyles builds the styles from the default palette.
func DefaultStyles(noColor bool) Styles { return NewStyles(DefaultPalette(), noColor) }

// NewStyles builds the styles; without colour only attributes remain, so the selection stays visible.
func NewStyles(p Palette, noColor bool) Styles {
	fg := func(s lipgloss.Style, c color.Color) lipgloss.Style {
		if noColor {
			return s
		}
		return s.Foreground(c)
	}
	base := lipgloss.NewStyle()
	return Styles{
		Title:    fg(base.Bold(true), p.Accent),
		Muted:    fg(base, p.Muted),
		Fail:     fg(base.Bold(true), p.Bad),
		Warn:     fg(base, p.Warn),
		Unknown:  fg(base, p.Muted),
		OK:       fg(base, p.Good),
		Selected: base.Reverse(true),
		Fix:      fg(base.Bold(true), p.Accent),
		Notice:   fg(base.Italic(true), p.Warn),
	}
}
