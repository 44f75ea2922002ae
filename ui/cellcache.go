package ui

import "github.com/wmcon/wmcon/ui/styles"

// cellCache keeps a table's drawn cells from one frame to the next. Drawing a cell in its style is most
// of what a frame costs, and a list at rest changes few cells between frames: on a young fleet the ages
// tick every second and nothing else moves, so without the cache every cell of every row on screen was
// drawn again each second (BenchmarkIdleTick10000). Two generations are kept, the cells of the frame being
// drawn and of the one before, so the cache holds about two screens of cells whatever the list's size.
// A cell with filter matches is drawn every time (its highlight depends on the query, not its text).
type cellCache struct {
	styles   *styles.Styles // what the kept cells were drawn with; other styles or marks start afresh
	marks    Marks
	cur, old map[cellKey]string
	draws    int // cells drawn rather than taken from the cache (what its test counts)
}

// cellKey is everything a cell's drawing depends on.
type cellKey struct {
	text     string
	width    int
	tone     Tone
	selected bool
	blank    bool // blank cells in the row's line style (gaps and padding), not a cell's text
}

// frame starts a frame drawn with st and marks: the cells kept are those of the last frame.
func (c *cellCache) frame(st *styles.Styles, marks Marks) {
	if c.styles != st || c.marks != marks {
		c.styles, c.marks = st, marks
		clear(c.cur) // the last frame's cells, which would be kept below
	}
	if c.cur == nil {
		c.cur, c.old = map[cellKey]string{}, map[cellKey]string{}
	}
	c.old, c.cur = c.cur, c.old
	clear(c.cur)
}

// drawn is the cell drawn for k, from this frame or the last, and keeps it for the next frame.
func (c *cellCache) drawn(k cellKey, draw func() string) string {
	if s, ok := c.cur[k]; ok {
		return s
	}
	s, ok := c.old[k]
	if !ok {
		s = draw()
		c.draws++
	}
	c.cur[k] = s
	return s
}
