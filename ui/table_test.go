package ui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

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

func TestRenderTable(t *testing.T) {
	st := NewStyles(theme.New(theme.Options{NoColor: true}))
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
