package ui

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/stretchr/testify/assert"
)

// The themes' goldens keep the colours: the nodes list as a 256-colour terminal gets it, in each theme
// other than dark (whose screens every other golden shows without colours). Regenerate with
// go test ./ui -run Golden -update.

// colourScreen is the view as a 256-colour terminal gets it, colours and attributes kept.
func colourScreen(tb testing.TB, content string) string {
	tb.Helper()
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.ANSI256}
	if _, err := w.Write([]byte(content)); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

// goldenTheme records the nodes list (the second node selected) in theme on a terminal of w × h, and
// returns the screen for checks of its own.
func goldenTheme(t *testing.T, theme string, w, h int) string {
	t.Helper()
	t.Setenv("NO_COLOR", "") // a NO_COLOR of the test's environment would win over the theme
	opts := withRunner()
	opts.NoColor, opts.Theme, opts.Profile = false, theme, colorprofile.ANSI256
	var got string
	goldenScreenAs(t, opts, w, h, fixtureSnapshot(), "context admin", func(tb testing.TB, content string) string {
		got = colourScreen(tb, content)
		return got
	}, press("j")...)
	return got
}

func TestGoldenThemeLight80x24(t *testing.T)  { checkLight(t, goldenTheme(t, "light", 80, 24)) }
func TestGoldenThemeLight160x45(t *testing.T) { checkLight(t, goldenTheme(t, "light", 160, 45)) }

func TestGoldenThemeHighContrast80x24(t *testing.T) {
	checkHighContrast(t, goldenTheme(t, "high-contrast", 80, 24))
}

func TestGoldenThemeHighContrast160x45(t *testing.T) {
	checkHighContrast(t, goldenTheme(t, "high-contrast", 160, 45))
}

// checkLight: the light theme's dark shades are drawn, and none of the dark theme's bright yellow (93) or
// grey (90) text, which is unreadable on white.
func checkLight(t *testing.T, screen string) {
	t.Helper()
	assert.Contains(t, screen, "\x1b[38;5;28mReady", "Ready in the light theme's dark green")
	assert.Contains(t, screen, "\x1b[38;5;130mReady,SchedulingDisabled", "cordoned in dark orange, not yellow")
	assert.NotContains(t, screen, "\x1b[93m")
	assert.NotContains(t, screen, "\x1b[90m")
}

// checkHighContrast: only the 16 basic colours, the selection bold and reversed, the column headers bold,
// a cordoned node's status bold; the version drift keeps its ⚠ mark.
func checkHighContrast(t *testing.T, screen string) {
	t.Helper()
	assert.NotContains(t, screen, "38;5;", "no colour beyond the basic 16")
	assert.NotContains(t, screen, "38;2;")
	assert.Contains(t, screen, "\x1b[1;7m", "the selection is bold and reversed")
	assert.Contains(t, screen, "\x1b[1;37m  NAME", "the column headers are bold")
	assert.Contains(t, screen, "\x1b[1;93mReady,SchedulingDisabled", "a warning is bold, not only yellow")
	assert.Contains(t, screen, "⚠")
}

// TestNoColorWinsOverTheTheme: with --no-color the console draws no colour in any theme, and keeps the
// attributes (the reversed selection).
func TestNoColorWinsOverTheTheme(t *testing.T) {
	for _, name := range []string{"dark", "light", "high-contrast"} {
		opts := withRunner()
		opts.NoColor, opts.Theme, opts.Profile = true, name, colorprofile.ANSI256
		m := update(New(NewProgramContext(opts), nil), tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
		out := m.View().Content
		assert.False(t, drawsColour(out), "%s with --no-color: %q", name, out)
		assert.Regexp(t, `\x1b\[(1;)?7m`, out, name)

		opts.NoColor = false
		m = update(New(NewProgramContext(opts), nil), tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
		assert.True(t, drawsColour(m.View().Content), "%s draws colours when they are on", name)
	}
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;]*)m`)

// drawsColour says whether s sets a foreground colour (30–37, 90–97, or 38;… for 256 and true colours).
func drawsColour(s string) bool {
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.Split(m[1], ";") {
			if n, err := strconv.Atoi(p); err == nil && (n >= 30 && n <= 38 || n >= 90 && n <= 97) {
				return true
			}
		}
	}
	return false
}
