package ui

import (
	"slices"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/styles"
)

const (
	columnGap   = 2 // spaces between columns
	cursorWidth = 2 // the selection mark and a space, left of every row
	minColWidth = 4
)

// columnWidths sizes each column to its widest cell or its Reserve (capped by Column.Max) and then fits the table into
// width: first the gaps narrow to one space, then columns that may give way (Column.Drop) are hidden
// (width 0) until the rest fit whole, then flexible columns shrink from the right down to their Min (so
// the name, leftmost, keeps the most), then any column from the right. Widths come from all rows, not
// only the filtered ones, so columns do not jump while the user types a filter.
func columnWidths(cols []Column, rows []Row, width int) (widths []int, gap int) {
	return fitColumns(cols, naturalWidths(cols, rows), width)
}

// naturalWidths are the widths the columns want before they are fitted: each its widest cell or title,
// capped by its Max. A pane keeps them, so new cells can refit the columns without measuring every row.
func naturalWidths(cols []Column, rows []Row) []int {
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = min(layout.TextWidth(c.Title), c.Max)
	}
	for _, r := range rows {
		if r.Span {
			continue
		}
		for i := 0; i < len(cols) && i < len(r.Cells); i++ {
			if w := layout.TextWidth(r.Cells[i]); w > widths[i] {
				widths[i] = min(w, cols[i].Max)
			}
		}
	}
	return widths
}

// fitColumns fits columns of the given natural widths into width (see columnWidths).
func fitColumns(cols []Column, natural []int, width int) (widths []int, gap int) {
	widths = slices.Clone(natural)
	for i, c := range cols {
		widths[i] = max(widths[i], min(c.Reserve, c.Max))
	}
	gap = columnGap
	if tableWidth(widths, gap) > width {
		gap = 1
	}
	dropColumns(cols, widths, gap, width)
	excess := tableWidth(widths, gap) - width
	for pass := 0; pass < 2 && excess > 0; pass++ {
		for i := len(cols) - 1; i >= 0 && excess > 0; i-- {
			floor := minColWidth
			if pass == 0 {
				if !cols[i].Flex {
					continue
				}
				floor = max(cols[i].Min, minColWidth)
			}
			cut := min(excess, max(0, widths[i]-floor))
			widths[i] -= cut
			excess -= cut
		}
	}
	return widths, gap
}

// dropColumns hides columns (width 0), highest Drop first, while the table would be wider than width even
// with its flexible columns shrunk to their Min: a column gives way only when keeping it would cut another
// that may not shrink (the status, the version and its drift mark).
func dropColumns(cols []Column, widths []int, gap, width int) {
	for tableWidth(shrunk(cols, widths), gap) > width {
		next := -1
		for i, c := range cols {
			if c.Drop > 0 && widths[i] > 0 && (next < 0 || c.Drop > cols[next].Drop) {
				next = i
			}
		}
		if next < 0 {
			return
		}
		widths[next] = 0
	}
}

// shrunk is widths with every flexible column at its Min (or narrower when its cells are).
func shrunk(cols []Column, widths []int) []int {
	out := append([]int(nil), widths...)
	for i, c := range cols {
		if c.Flex && out[i] > 0 {
			out[i] = min(out[i], max(c.Min, minColWidth))
		}
	}
	return out
}

// tableWidth is the width of a row; hidden columns (width 0) take no gap either.
func tableWidth(widths []int, gap int) int {
	total, shown := cursorWidth, 0
	for _, w := range widths {
		if w == 0 {
			continue
		}
		if shown > 0 {
			total += gap
		}
		total += w
		shown++
	}
	return total
}

// tableView is everything renderTable needs; it holds no state of its own.
type tableView struct {
	Columns []Column
	Widths  []int
	Gap     int   // spaces between columns
	Rows    []Row // already filtered
	Cursor  int   // index into Rows
	Offset  int   // first visible row
	Width   int
	Height  int        // including the column header line
	Cells   *cellCache // the cells drawn for the last frame; nil draws every cell
}

// renderTable draws the column header and the visible window of rows, each line exactly Width wide.
func renderTable(st *styles.Styles, marks Marks, t tableView) string {
	if t.Cells != nil {
		t.Cells.frame(st, marks)
	}
	lines := make([]string, 0, t.Height)
	lines = append(lines, layout.FitLine(st.ColumnHeader.Render(headerText(t.Columns, t.Widths, t.Gap)), t.Width))
	for i := t.Offset; i < len(t.Rows) && len(lines) < t.Height; i++ {
		lines = append(lines, renderRow(st, marks, &t, i))
	}
	for len(lines) < t.Height {
		lines = append(lines, strings.Repeat(" ", t.Width))
	}
	return strings.Join(lines, "\n")
}

func headerText(cols []Column, widths []int, gap int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", cursorWidth))
	shown := 0
	for i, c := range cols {
		if widths[i] == 0 {
			continue // hidden: the terminal is too narrow for it
		}
		if shown > 0 {
			b.WriteString(strings.Repeat(" ", gap))
		}
		shown++
		b.WriteString(layout.PadRight(layout.Truncate(c.Title, widths[i], "~"), widths[i]))
	}
	return b.String()
}

func renderRow(st *styles.Styles, marks Marks, t *tableView, i int) string {
	r := &t.Rows[i]
	selected := i == t.Cursor
	lineStyle := lipgloss.NewStyle()
	mark := strings.Repeat(" ", cursorWidth)
	if selected {
		lineStyle = st.Selected
		mark = layout.PadRight(marks.Cursor, cursorWidth)
	}
	var b strings.Builder
	if selected {
		b.WriteString(layout.Render(lineStyle, mark))
	} else {
		b.WriteString(blanks(t, lineStyle, cursorWidth, false))
	}
	matches := r.matches()
	drawn := layout.TextWidth(mark) // the line's width so far: every cell is drawn exactly its width
	if r.Span {
		drawCell(&b, st, marks, t, r, matches, 0, 0, t.Width-cursorWidth, selected)
		drawn += max(0, t.Width-cursorWidth)
	} else {
		gap := blanks(t, lineStyle, t.Gap, selected)
		offset, shown := 0, 0
		for c := 0; c < len(t.Columns) && c < len(r.Cells); c++ {
			if c > 0 {
				offset++ // the space joining cells in the search text
			}
			if t.Widths[c] > 0 {
				if shown > 0 {
					b.WriteString(gap)
					drawn += t.Gap
				}
				shown++
				drawCell(&b, st, marks, t, r, matches, c, offset, t.Widths[c], selected)
				drawn += t.Widths[c]
			}
			offset += len(r.Cells[c])
		}
	}
	if drawn <= t.Width { // padded without measuring the styled line: the width of what was drawn is known
		b.WriteString(blanks(t, lineStyle, t.Width-drawn, selected))
		return b.String()
	}
	return layout.FitLineStyled(b.String(), t.Width, lineStyle)
}

// blanks is n blank cells in a row's line style (the selection's highlight runs through them), from the
// table's cell cache: the gaps and padding of every row on screen, drawn once rather than each frame.
func blanks(t *tableView, lineStyle lipgloss.Style, n int, selected bool) string {
	draw := func() string { return layout.Render(lineStyle, strings.Repeat(" ", n)) }
	if t.Cells == nil || n <= 0 {
		return draw()
	}
	return t.Cells.drawn(cellKey{width: n, selected: selected, blank: true}, draw)
}

// drawCell writes cell c of r as writeCell draws it, taking it from the table's cell cache when the same
// text was drawn the same way in the last frame.
func drawCell(b *strings.Builder, st *styles.Styles, marks Marks, t *tableView, r *Row, matches []int, c, base, width int, selected bool) {
	if t.Cells == nil || len(matches) > 0 {
		writeCell(b, st, marks, r, matches, c, base, width, selected)
		return
	}
	k := cellKey{text: r.Cells[c], width: width, tone: r.tone(c), selected: selected}
	b.WriteString(t.Cells.drawn(k, func() string {
		var cb strings.Builder
		writeCell(&cb, st, marks, r, nil, c, base, width, selected)
		return cb.String()
	}))
}

// writeCell writes one cell padded to width, its filter matches highlighted. base is the cell's byte
// offset in the row's search text, which is what the match offsets refer to.
func writeCell(b *strings.Builder, st *styles.Styles, marks Marks, r *Row, matches []int, c, base, width int, selected bool) {
	text := r.Cells[c]
	tail := ""
	if layout.TextWidth(text) > width {
		text, tail = layout.Truncate(text, width-layout.TextWidth(marks.Ellipsis), ""), marks.Ellipsis
	}
	normal, match := toneStyle(st, r.tone(c)), st.Match
	if selected {
		normal, match = st.Selected, st.Selected.Inherit(st.Match)
	}
	b.WriteString(highlight(text, base, matches, normal, match))
	pad := width - layout.TextWidth(text) - layout.TextWidth(tail)
	b.WriteString(layout.Render(normal, tail+strings.Repeat(" ", max(0, pad))))
}

// toneStyle is the style a tone is drawn in.
func toneStyle(st *styles.Styles, t Tone) lipgloss.Style {
	switch t {
	case toneMuted:
		return st.Muted
	case toneGood:
		return st.Good
	case toneWarn:
		return st.Warn
	case toneBad:
		return st.Bad
	}
	return st.Cell
}
