package layout

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestComputeLayout(t *testing.T) {
	cases := []struct {
		name          string
		w, h          int
		panel         bool
		body, action  Rect
		status, help_ Rect
		tooSmall      bool
	}{
		{name: "standard", w: 120, h: 40, body: Rect{0, 4, 120, 34}, status: Rect{0, 38, 120, 1}, help_: Rect{0, 39, 120, 1}},
		{name: "panel below", w: 120, h: 40, panel: true, body: Rect{0, 4, 120, 22}, action: Rect{0, 26, 120, 12},
			status: Rect{0, 38, 120, 1}, help_: Rect{0, 39, 120, 1}},
		{name: "short panel below", w: 80, h: 20, panel: true, body: Rect{0, 4, 80, 7}, action: Rect{0, 11, 80, 7},
			status: Rect{0, 18, 80, 1}, help_: Rect{0, 19, 80, 1}},
		{name: "panel beside", w: 200, h: 50, panel: true, body: Rect{0, 4, 120, 44}, action: Rect{120, 4, 80, 44},
			status: Rect{0, 48, 200, 1}, help_: Rect{0, 49, 200, 1}},
		{name: "minimum", w: MinWidth, h: MinHeight, body: Rect{0, 4, 60, 6}, status: Rect{0, 10, 60, 1}, help_: Rect{0, 11, 60, 1}},
		{name: "too narrow", w: MinWidth - 1, h: 40, tooSmall: true},
		{name: "too short", w: 120, h: MinHeight - 1, tooSmall: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := Compute(c.w, c.h, c.panel)
			require.Equal(t, c.tooSmall, l.TooSmall)
			if c.tooSmall {
				return
			}
			assert.Equal(t, Rect{0, 0, c.w, 3}, l.Header)
			assert.Equal(t, Rect{0, 3, c.w, 1}, l.Tabs)
			assert.Equal(t, c.body, l.Body)
			assert.Equal(t, c.action, l.Action)
			assert.Equal(t, c.status, l.Status)
			assert.Equal(t, c.help_, l.Help)
			// every line of the screen belongs to exactly one region
			used := l.Header.H + l.Tabs.H + l.Body.H + l.Status.H + l.Help.H
			if l.Action.X == 0 {
				used += l.Action.H
			}
			assert.Equal(t, c.h, used)
		})
	}
}

// TestWrapNeverBreaksAWordAtAHyphen: a node name or a command in a hint stays whole on one line, so it can
// be copied; it moves to the next line instead.
func TestWrapNeverBreaksAWordAtAHyphen(t *testing.T) {
	hint := "the node stays cordoned: run wmcon uncordon ip-127-0-0-2.ec2.internal when it is back"
	for width := 30; width <= 60; width++ { // from where the name fits beside the indent
		lines := Wrap([]string{hint}, width)
		assert.Contains(t, strings.Join(lines, "\n"), "ip-127-0-0-2.ec2.internal", "width %d: %q", width, lines)
		for _, l := range lines {
			assert.LessOrEqual(t, TextWidth(l), width)
		}
		indented := WrapIndented([]string{"  ↳ " + hint}, width)
		assert.Contains(t, strings.Join(indented, "\n"), "ip-127-0-0-2.ec2.internal", "width %d: %q", width, indented)
	}
}

// TestLineWidthsFitBoxAsFitBoxDoes: a box fitted through the kept widths, frame after frame, is the box
// FitBox makes, whatever changes between frames (lines that grow, shrink, gain styles or wide characters,
// a narrower or wider box), and the lines of a frame are kept for the next.
func TestLineWidthsFitBoxAsFitBoxDoes(t *testing.T) {
	red := lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	frames := []struct {
		s    string
		w, h int
	}{
		{"win-a  Ready  2m3s\nwin-b  Ready  2m3s", 20, 4},
		{"win-a  Ready  2m4s\nwin-b  Ready  2m3s", 20, 4},
		{"win-a  Ready  2m4s\n" + red.Render("win-b  NotReady  2m4s") + "\nwïn-ç  ✓ 漢字", 20, 4},
		{"win-a  Ready  2m4s\n" + red.Render("win-b  NotReady  2m4s") + "\nwïn-ç  ✓ 漢字", 12, 2},
		{"a line far longer than the box is wide, cut\n\n\nfour\nfive", 30, 3},
		{"", 10, 2},
	}
	var c LineWidths
	for i, f := range frames {
		assert.Equal(t, FitBox(f.s, f.w, f.h), c.FitBox(f.s, f.w, f.h), "frame %d", i)
	}
	// The last frame's lines are kept: the same frame again reads every width from them.
	c.FitBox(frames[2].s, 20, 4)
	for _, l := range strings.Split(frames[2].s, "\n") {
		assert.Contains(t, c.cur, l)
	}
	var none *LineWidths
	assert.Equal(t, FitBox(frames[2].s, 20, 4), none.FitBox(frames[2].s, 20, 4))
}
