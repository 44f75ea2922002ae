package theme_test

import (
	"image/color"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/ui/theme"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestColoursAreOffWhenAskedOrUnsupported(t *testing.T) {
	cases := []struct {
		name string
		opts theme.Options
		off  bool
	}{
		{"a colour terminal", theme.Options{Profile: colorprofile.ANSI256}, false},
		{"profile not detected", theme.Options{}, false},
		{"--no-color", theme.Options{NoColor: true, Profile: colorprofile.TrueColor}, true},
		{"NO_COLOR", theme.Options{Getenv: env(map[string]string{"NO_COLOR": "1"}), Profile: colorprofile.TrueColor}, true},
		{"ASCII profile", theme.Options{Profile: colorprofile.ASCII}, true},
		{"not a terminal", theme.Options{Profile: colorprofile.NoTTY}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.opts.Getenv == nil {
				c.opts.Getenv = env(nil)
			}
			th := theme.New(c.opts)
			assert.Equal(t, c.off, th.NoColor)
			out := th.Bad.Render("x")
			assert.Equal(t, !c.off, strings.Contains(out, "\x1b[9") || strings.Contains(out, ";9"), "colour sequence in %q", out)
			assert.Contains(t, th.Selected.Render("x"), "\x1b[7m", "the selection is reversed with or without colours")
			assert.Equal(t, c.off, th.Fg(lipgloss.NewStyle(), th.Palette.Good).Render("x") == "x")
		})
	}
}

func TestASCIIMarks(t *testing.T) {
	for _, m := range []theme.Marks{theme.New(theme.Options{ASCII: true}).Marks, theme.MarksFor(true)} {
		for _, s := range []string{m.Warn, m.Fail, m.OK, m.Unknown, m.Cursor, m.Arrow, m.Child, m.Item, m.Ellipsis, m.None, m.Spark} {
			assert.NotEmpty(t, s)
			for _, r := range s {
				assert.Less(t, r, rune(128), "%q is not ASCII", s)
			}
		}
	}
	assert.Equal(t, "✗", theme.MarksFor(false).Fail)
}

// colours are the palette's colour fields by name, found by reflection so that a colour added to Palette
// later must be set in every palette.
func colours(p theme.Palette) map[string]color.Color {
	out := map[string]color.Color{}
	v := reflect.ValueOf(p)
	for i := 0; i < v.NumField(); i++ {
		if c, ok := v.Field(i).Interface().(color.Color); ok || v.Field(i).Type() == reflect.TypeOf((*color.Color)(nil)).Elem() {
			out[v.Type().Field(i).Name] = c
		}
	}
	return out
}

// TestEveryThemeDefinesEveryStyle: each palette sets every colour, and each theme's every style carries a
// colour or an attribute — none is left plain, or at a zero value the dark palette happened to fill.
func TestEveryThemeDefinesEveryStyle(t *testing.T) {
	for _, name := range theme.Names() {
		t.Run(name, func(t *testing.T) {
			p, err := theme.Named(name)
			require.NoError(t, err)
			cs := colours(p)
			require.Len(t, cs, 7, "Palette's colour fields")
			for field, c := range cs {
				assert.NotNil(t, c, "%s.%s is not set", name, field)
			}
			th := theme.New(theme.Options{Name: name, Profile: colorprofile.TrueColor, Getenv: env(nil)})
			v := reflect.ValueOf(*th)
			for i := 0; i < v.NumField(); i++ {
				if s, ok := v.Field(i).Interface().(lipgloss.Style); ok {
					assert.NotEqual(t, "x", s.Render("x"), "%s: style %s renders plain", name, v.Type().Field(i).Name)
				}
			}
		})
	}
}

// luminance is the WCAG relative luminance of c.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// TestLightPaletteIsReadableOnWhite: every colour of the light theme has WCAG AA's contrast (4.5:1) on a
// white background; the dark theme's yellow and grey do not, which is why light exists.
func TestLightPaletteIsReadableOnWhite(t *testing.T) {
	white := luminance(color.White)
	contrast := func(c color.Color) float64 { return (white + 0.05) / (luminance(c) + 0.05) }
	for field, c := range colours(theme.LightPalette()) {
		assert.GreaterOrEqual(t, contrast(c), 4.5, "light %s is too pale on white", field)
	}
	assert.Less(t, contrast(theme.DefaultPalette().Warn), 4.5, "the check tells a pale colour")
}

// TestHighContrast: only the 16 basic ANSI colours; the selection bold and reversed, titles and column
// headers bold, warnings bold like failures — so no meaning rests on colour alone; without colours the
// attributes stay.
func TestHighContrast(t *testing.T) {
	for field, c := range colours(theme.HighContrastPalette()) {
		_, basic := c.(ansi.BasicColor)
		assert.True(t, basic, "high-contrast %s is not one of the 16 basic colours: %#v", field, c)
	}
	for _, noColor := range []bool{false, true} {
		th := theme.New(theme.Options{Name: "high-contrast", NoColor: noColor, Profile: colorprofile.TrueColor, Getenv: env(nil)})
		assert.Contains(t, th.Selected.Render("x"), "\x1b[1;7m", "the selection is bold and reversed")
		for _, s := range []lipgloss.Style{th.Title, th.Header, th.Bad} {
			assert.Contains(t, s.Render("x"), "\x1b[1", "headers and failures are bold")
		}
		assert.Contains(t, th.Warn.Render("x"), "\x1b[1", "warnings are bold")
	}
	dark := theme.New(theme.Options{Name: "dark", Profile: colorprofile.TrueColor, Getenv: env(nil)})
	assert.NotContains(t, dark.Selected.Render("x"), "\x1b[1;7m", "dark keeps its plain reverse")
}

// TestNoColorWinsOverEveryTheme: --no-color and NO_COLOR leave no colour sequence in any theme.
func TestNoColorWinsOverEveryTheme(t *testing.T) {
	colourSGR := regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|9[0-7]|38;)`)
	for _, name := range theme.Names() {
		for _, o := range []theme.Options{{NoColor: true, Getenv: env(nil)}, {Getenv: env(map[string]string{"NO_COLOR": "1"})}} {
			o.Name, o.Profile = name, colorprofile.TrueColor
			th := theme.New(o)
			for _, s := range []lipgloss.Style{th.Title, th.Header, th.Muted, th.Good, th.Warn, th.Bad, th.Notice, th.Match} {
				assert.NotRegexp(t, colourSGR, s.Render("x"), name)
			}
		}
	}
}

// TestThemeNames: the names the config file and --theme accept are the palettes there are; an unknown one
// is refused with the list.
func TestThemeNames(t *testing.T) {
	assert.Equal(t, config.Themes, theme.Names())
	_, err := theme.Named("solarized")
	assert.EqualError(t, err, `there is no theme "solarized": use one of dark, light, high-contrast`)
	p, err := theme.Named("")
	require.NoError(t, err)
	assert.Equal(t, theme.DefaultPalette(), p, "no name is dark")
	assert.Equal(t, theme.LightPalette(), theme.New(theme.Options{Name: "light"}).Palette)
}
