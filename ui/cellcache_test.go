package ui

import (
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/theme"
)

// TestCellCacheDrawsWhatDrawingDoes renders a table through a sequence of frames — at rest, ages ticking,
// the cursor moving, a filter highlighting, the terminal narrowing — with the cell cache and without it:
// every frame must be the same text, and a frame at rest must draw no cell again.
func TestCellCacheDrawsWhatDrawingDoes(t *testing.T) {
	th := theme.New(theme.Options{Profile: colorprofile.TrueColor, Getenv: func(string) string { return "" }})
	st := styles.New(th)
	cols := []Column{{Title: "NAME", Max: 16}, {Title: "STATUS", Max: 10}, {Title: "AGE", Max: 6}}
	rows := func(age string) []Row {
		return []Row{
			{Key: "a", Cells: []string{"ip-127-0-1-1", "Ready", age}, Tones: []Tone{toneNormal, toneGood}},
			{Key: "b", Cells: []string{"ip-127-0-1-2-and-a-long-tail", "NotReady", age}, Tones: []Tone{toneNormal, toneBad}},
			{Key: "c", Cells: []string{"win-a", "Ready", age}, Tones: []Tone{toneNormal, toneGood}},
			{Key: "d", Span: true, Cells: []string{"a nested line that spans the row"}, Tones: []Tone{toneMuted}},
		}
	}
	cache := &cellCache{}
	frame := func(name string, v tableView) {
		t.Helper()
		want := renderTable(&st, th.Marks, v)
		v.Cells = cache
		assert.Equal(t, want, renderTable(&st, th.Marks, v), "frame %q drawn through the cache", name)
	}
	table := tableView{Columns: cols, Widths: []int{16, 10, 6}, Gap: 2, Rows: rows("5m12s"), Cursor: 1, Width: 40, Height: 6}
	frame("first", table)
	draws := cache.draws
	require.Positive(t, draws)
	frame("at rest", table)
	assert.Equal(t, draws, cache.draws, "a frame at rest draws no cell again")

	table.Rows = rows("5m13s")
	frame("ages ticked", table)
	assert.Equal(t, draws+2, cache.draws, "only the new age is drawn again: once plain (rows a and c share it), once selected")

	table.Cursor = 2
	frame("cursor moved", table)
	filtered, _ := filterRows(rows("5m13s"), "127-0-1")
	require.NotEmpty(t, filtered)
	frame("filtered", tableView{Columns: cols, Widths: []int{16, 10, 6}, Gap: 2, Rows: filtered, Cursor: 0, Width: 40, Height: 6})
	table.Width, table.Widths, table.Gap = 30, []int{14, 8, 5}, 1
	frame("narrower", table)
	frame("wider than its columns", tableView{Columns: cols, Widths: []int{16, 10, 6}, Gap: 2, Rows: rows("6m"), Cursor: 0, Width: 60, Height: 6})

	ascii := theme.MarksFor(true)
	want := renderTable(&st, ascii, table)
	table.Cells = cache
	assert.Equal(t, want, renderTable(&st, ascii, table), "other marks start afresh (an ASCII ellipsis)")
}
