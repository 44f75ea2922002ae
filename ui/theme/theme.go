// Package theme is the console's look, decided once and handed to every component (the list panes and
// dialogs, the health view, the log view): one palette, whether colours are on, the base styles built
// from them and the marks drawn on the terminal. Components build their own styles from it, so a
// colour or a glyph is changed in one place and NO_COLOR, --no-color, --ascii and a terminal without
// colours are respected everywhere alike. The palette is the user's choice of theme (dark, light,
// high-contrast); turning colours off wins over every theme.
package theme

import (
	"fmt"
	"image/color"
	"os"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// Palette is the colours styles are built from, and the attributes its theme adds to them.
type Palette struct {
	Accent  color.Color // active tab, titles, keys in help
	Muted   color.Color // secondary text
	Good    color.Color // Ready, present, passing checks
	Warn    color.Color // drift, weak keys, cordoned, warnings
	Bad     color.Color // NotReady, missing, failures
	Match   color.Color // filter and search matches
	Windows color.Color // the Windows mark
	// Strong marks with attributes what the other themes mark with colour: the selection is bold as well
	// as reversed, and warnings are bold like failures (high-contrast; titles and headers are bold in every
	// theme). Underlining is left to matches: it is drawn cell by cell, which a header would repeat.
	Strong bool
}

// DefaultPalette is the dark theme's: bright ANSI colours the terminal itself maps, for a dark background.
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

// LightPalette is for a white background: dark shades of the 256-colour cube, each with a contrast of at
// least 4.5:1 on white (no light grey or yellow text).
func LightPalette() Palette {
	return Palette{
		Accent:  lipgloss.Color("25"),  // #005faf
		Muted:   lipgloss.Color("241"), // #626262
		Good:    lipgloss.Color("28"),  // #008700
		Warn:    lipgloss.Color("130"), // #af5f00, dark orange in place of yellow
		Bad:     lipgloss.Color("124"), // #af0000
		Match:   lipgloss.Color("90"),  // #870087
		Windows: lipgloss.Color("24"),  // #005f87
	}
}

// HighContrastPalette uses only the 16 basic ANSI colours, none of them dim, and carries every meaning
// with an attribute or a mark besides its colour (Strong).
func HighContrastPalette() Palette {
	return Palette{
		Accent:  lipgloss.Color("14"),
		Muted:   lipgloss.Color("7"),
		Good:    lipgloss.Color("10"),
		Warn:    lipgloss.Color("11"),
		Bad:     lipgloss.Color("9"),
		Match:   lipgloss.Color("13"),
		Windows: lipgloss.Color("14"),
		Strong:  true,
	}
}

// palettes are the themes by name, in the order they are offered (config.Themes names the same).
var palettes = []struct {
	name    string
	palette func() Palette
}{{"dark", DefaultPalette}, {"light", LightPalette}, {"high-contrast", HighContrastPalette}}

// Names are the themes a user can choose.
func Names() []string {
	var names []string
	for _, p := range palettes {
		names = append(names, p.name)
	}
	return names
}

// Named is the palette of the theme name ("" is dark); an unknown name is refused with the names.
func Named(name string) (Palette, error) {
	if name == "" {
		return DefaultPalette(), nil
	}
	for _, p := range palettes {
		if p.name == name {
			return p.palette(), nil
		}
	}
	return Palette{}, fmt.Errorf("there is no theme %q: use one of %s", name, strings.Join(Names(), ", "))
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
	Palette *Palette             // nil: the palette of Name
	Name    string               // the theme (Names); "" or a name the command line did not refuse: dark
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
	Header   lipgloss.Style // column headers: bold muted
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
	p, err := Named(o.Name)
	if err != nil {
		p = DefaultPalette() // the command line refuses an unknown name before the console starts
	}
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
	// Attributes are only ever set, never set to false: a style combined with another (a match inside
	// the selection) keeps the other's.
	heading, warn, selected := base.Bold(true), base, base.Reverse(true)
	if p.Strong {
		warn, selected = warn.Bold(true), selected.Bold(true)
	}
	t.Title = t.Fg(heading, p.Accent)
	t.Header = t.Fg(heading, p.Muted)
	t.Muted = t.Fg(base, p.Muted)
	t.Good = t.Fg(base, p.Good)
	t.Warn = t.Fg(warn, p.Warn)
	t.Bad = t.Fg(base.Bold(true), p.Bad)
	t.Notice = t.Fg(base.Italic(true), p.Warn)
	t.Selected = selected
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
