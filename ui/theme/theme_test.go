package theme_test

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/stretchr/testify/assert"

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
