// Package theme is the console's look, decided once and handed to every component (the list panes and
// dialogs, the health view, the log view): one palette, whether colours are on, the base styles built
// from them and the marks drawn on the terminal. Components build their own styles from it, so a
// colour or a glyph is changed in one place and NO_COLOR, --no-color, --ascii and a terminal without
// colours are respected everywhere alike.
package theme

import (
	"image/color"
	"os"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// Palette is the colours styles are built from.
type Palette struct {
	Accent  color.Color // active tab, titles, keys in help
	Muted   color.Color // secondary text
	Good    color.Color // Ready, present, passing checks
	Warn    color.Color // drift, weak keys, cordoned, warnings
	Bad     color.Color // NotReady, missing, failures
	Match   color.Color // filter and search matches
	Windows color.Color // the Windows mark
}

// DefaultPalette works on dark and light terminals alike (ANSI colours the terminal itself maps).
func DefaultPalette() Palette {
	return Palette{
		Accent:  lipgloss.Color("12"),
		Muted:   lipgloss.Color("8"),
		Good:    lipgloss.Color("10"),
		Warn:    lipgloss.Color("11"),
		Bad:     lipgloss.Color("9"),
		Match:   lipgloss.Color("13"),
		Windows: lipgloss.Color("14"),
	}
}

// Marks are the glyphs the console draws; ASCII terminals get plain characters.
type Marks struct {
	Warn, Fail, OK, Unknown    string // status marks (Warn also flags version drift)
	Cursor, Arrow, Child, Item string
	Ellipsis                   string // the tail of cut text in tables
	None                       string // a figure that is not known (a node without metrics)
	Spark                      string // a sparkline's levels, lowest first
}

// MarksFor are the marks of an ASCII or a Unicode terminal.
func MarksFor(ascii bool) Marks {
	if ascii {
		return Marks{Warn: "!", Fail: "x", OK: "+", Unknown: "?", Cursor: ">", Arrow: "->", Child: "`-", Item: "-", Ellipsis: "~",
			None: "-", Spark: "_.-~=+*#"}
	}
	return Marks{Warn: "⚠", Fail: "✗", OK: "✓", Unknown: "?", Cursor: "▶", Arrow: "→", Child: "↳", Item: "·", Ellipsis: "…",
		None: "—", Spark: "▁▂▃▄▅▆▇█"}
}

// Options are what the theme is decided from.
type Options struct {
	NoColor bool                 // --no-color
	ASCII   bool                 // --ascii: marks drawn with ASCII characters only
	Profile colorprofile.Profile // the terminal's colour profile; Unknown when not detected
	Getenv  func(string) string  // nil: os.Getenv (NO_COLOR)
	Palette *Palette             // nil: DefaultPalette
}

// Theme is the look every component shares. Base styles carry an attribute besides their colour where the
// colour has a meaning (bold titles and failures, reverse selection, underlined matches), so they still
// read without colours.
type Theme struct {
	NoColor bool // colours are off: NO_COLOR, --no-color, or a terminal without colours
	ASCII   bool
	Palette Palette
	Marks   Marks

	Title    lipgloss.Style // bold accent
	Muted    lipgloss.Style
	Good     lipgloss.Style
	Warn     lipgloss.Style
	Bad      lipgloss.Style // bold
	Notice   lipgloss.Style // italic warning: messages about a whole pane or view
	Selected lipgloss.Style // reverse
	Match    lipgloss.Style // bold underlined
}

// New decides the theme once, at start.
func New(o Options) *Theme {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	p := DefaultPalette()
	if o.Palette != nil {
		p = *o.Palette
	}
	t := &Theme{
		NoColor: o.NoColor || getenv("NO_COLOR") != "" || (o.Profile != colorprofile.Unknown && o.Profile <= colorprofile.ASCII),
		ASCII:   o.ASCII,
		Palette: p,
		Marks:   MarksFor(o.ASCII),
	}
	base := lipgloss.NewStyle()
	t.Title = t.Fg(base.Bold(true), p.Accent)
	t.Muted = t.Fg(base, p.Muted)
	t.Good = t.Fg(base, p.Good)
	t.Warn = t.Fg(base, p.Warn)
	t.Bad = t.Fg(base.Bold(true), p.Bad)
	t.Notice = t.Fg(base.Italic(true), p.Warn)
	t.Selected = base.Reverse(true)
	t.Match = t.Fg(base.Underline(true).Bold(true), p.Match)
	return t
}

// Fg gives s the colour c, or leaves s as it is when colours are off.
func (t *Theme) Fg(s lipgloss.Style, c color.Color) lipgloss.Style {
	if t.NoColor {
		return s
	}
	return s.Foreground(c)
}
