package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/theme"
)

func TestColumnWidths(t *testing.T) {
	cols := []Column{{Title: "NAME", Max: 40, Min: 10, Flex: true}, {Title: "STATUS", Max: 10}, {Title: "ROLES", Max: 30, Min: 6, Flex: true}}
	rows := []Row{{Cells: []string{"a-rather-long-node-name-0123", "NotReady", "control-plane,master"}}}
	cases := []struct {
		name    string
		width   int
		widths  []int
		gap     int
		fitting bool
	}{
		{"everything fits", 100, []int{28, 8, 20}, 2, true},
		{"gaps narrow first", 2 + 28 + 8 + 20 + 2, []int{28, 8, 20}, 1, true},
		{"right flex column shrinks first", 2 + 28 + 8 + 12 + 2, []int{28, 8, 12}, 1, true},
		{"then the name", 2 + 20 + 8 + 6 + 2, []int{20, 8, 6}, 1, true},
		{"then everything", 2 + 4 + 4 + 4 + 2, []int{4, 4, 4}, 1, true},
		{"below the minimum the table is cut", 5, []int{4, 4, 4}, 1, false},
	}
	for _, c := range cases {
		widths, gap := columnWidths(cols, rows, c.width)
		assert.Equal(t, c.widths, widths, c.name)
		assert.Equal(t, c.gap, gap, c.name)
		assert.Equal(t, c.fitting, tableWidth(widths, gap) <= c.width, c.name)
	}
	widths, _ := columnWidths(cols, []Row{{Span: true, Cells: []string{strings.Repeat("x", 90)}}}, 200)
	assert.Equal(t, []int{4, 6, 5}, widths, "spanning rows do not size columns")
}

// TestColumnsGiveWayByPriority: when the table cannot fit with its flexible columns at their minimum,
// columns that may give way are hidden, highest Drop first, and only then is anything cut; hidden columns
// take no gap, and the rendered row skips them while filter offsets still count their text.
func TestColumnsGiveWayByPriority(t *testing.T) {
	cols := []Column{{Title: "NAME", Max: 40, Min: 10, Flex: true}, {Title: "STATUS", Max: 10},
		{Title: "IP", Max: 15, Drop: 2}, {Title: "BYOH", Max: 4, Drop: 1}, {Title: "VERSION", Max: 20}}
	rows := []Row{{Key: "n", Cells: []string{"node-with-a-long-name-01", "NotReady", "127.0.1.41", "yes", "10.20.0-bc9a7b1"}}}
	natural := 2 + 24 + 8 + 10 + 4 + 15 + 4*2
	widths, gap := columnWidths(cols, rows, natural)
	assert.Equal(t, []int{24, 8, 10, 4, 15}, widths, "everything fits: nothing hidden")
	assert.Equal(t, 2, gap)

	widths, gap = columnWidths(cols, rows, 2+10+8+10+4+15+4) // fits with the name at its minimum
	assert.Equal(t, []int{10, 8, 10, 4, 15}, widths, "the name shrinks; nothing hidden")
	assert.Equal(t, 1, gap)

	widths, _ = columnWidths(cols, rows, 2+10+8+4+15+3)
	assert.Equal(t, []int{10, 8, 0, 4, 15}, widths, "IP (Drop 2) gives way first, and its gap with it")
	widths, _ = columnWidths(cols, rows, 2+12+8+15+2)
	assert.Equal(t, []int{12, 8, 0, 0, 15}, widths, "then BYOH; the version is never cut while a column can go")
	assert.LessOrEqual(t, tableWidth(widths, 1), 2+12+8+15+2)

	st := styles.New(theme.New(theme.Options{NoColor: true}))
	out := renderTable(&st, theme.New(theme.Options{NoColor: true}).Marks, tableView{Columns: cols, Widths: widths, Gap: 1,
		Rows: rows, Cursor: -1, Width: 2 + 12 + 8 + 15 + 2, Height: 2})
	lines := strings.Split(out, "\n")
	assert.Equal(t, "  NAME         STATUS   VERSION        ", ansi.Strip(lines[0]))
	assert.Equal(t, "  node-with-a… NotReady 10.20.0-bc9a7b1", ansi.Strip(lines[1]))
}

func TestRenderTable(t *testing.T) {
	st := styles.New(theme.New(theme.Options{NoColor: true}))
	rows := []Row{
		{Key: "a", Cells: []string{"alpha", "Ready"}},
		{Key: "b", Cells: []string{"a-name-too-long-for-it", "NotReady"}},
		{Key: "c", Cells: []string{"gamma", "Ready"}},
	}
	cols := []Column{{Title: "NAME", Max: 12}, {Title: "STATUS", Max: 8}}
	out := renderTable(&st, theme.MarksFor(false), tableView{Columns: cols, Widths: []int{12, 8}, Gap: 2, Rows: rows,
		Cursor: 1, Offset: 1, Width: 30, Height: 4})
	lines := strings.Split(stripANSI(out), "\n")
	assert.Equal(t, []string{
		"  NAME          STATUS        ",
		"▶ a-name-too-…  NotReady      ",
		"  gamma         Ready         ",
		"                              ",
	}, lines)
}
