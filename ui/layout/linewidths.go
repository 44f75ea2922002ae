package layout

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// LineWidths keeps the display widths of the lines of one box from one frame to the next. Measuring a
// styled line means walking its grapheme clusters, and a list at rest changes few of its lines between
// frames (on a young fleet, the rows whose ages ticked): FitBox through it measures only the lines that
// changed. Two generations are kept, the lines of this frame and of the one before, so it holds about two
// screens of lines.
type LineWidths struct {
	cur, old map[string]int
}

// FitBox is FitBox, measuring each line once across consecutive frames (a nil LineWidths measures all).
func (c *LineWidths) FitBox(s string, w, h int) string {
	if c == nil {
		return FitBox(s, w, h)
	}
	if c.cur == nil {
		c.cur, c.old = map[string]int{}, map[string]int{}
	}
	c.old, c.cur = c.cur, c.old
	clear(c.cur)
	lines := boxLines(s, h)
	for i, l := range lines {
		lines[i] = fitMeasured(l, c.width(l), w, lipgloss.NewStyle())
	}
	return strings.Join(lines, "\n")
}

func (c *LineWidths) width(l string) int {
	wd, ok := c.cur[l]
	if !ok {
		if wd, ok = c.old[l]; !ok {
			wd = lipgloss.Width(l)
		}
		c.cur[l] = wd
	}
	return wd
}
