package ui

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func filtered(rows []Row, query string) []Row {
	out, _ := filterRows(rows, query)
	return out
}

func keysOf(rs []Row) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Key)
	}
	return out
}

func TestFilterRows(t *testing.T) {
	rows := []Row{
		{Key: "win-a", Cells: []string{"win-a", "Ready"}},
		{Key: "lin-b", Cells: []string{"lin-b", "Ready"}},
		{Key: "win-c", Cells: []string{"win-c", "NotReady"}},
	}
	got := filtered(rows, "win")
	require.Len(t, got, 2)
	assert.Equal(t, "win-a", got[0].Key, "original order is kept among equals")
	assert.Equal(t, "win-c", got[1].Key)
	assert.Equal(t, []int{0, 1, 2}, got[0].matches())

	got = filtered(rows, "NOTR")
	require.Len(t, got, 1)
	assert.Equal(t, "win-c", got[0].Key, "any column matches, ignoring case")
	assert.Equal(t, []int{6, 7, 8, 9}, got[0].matches(), "offsets point into the joined cells")

	assert.Len(t, filtered(rows, ""), 3, "an empty filter keeps everything")
	assert.Len(t, filtered(rows, "  "), 3, "blanks are no filter")
	assert.Empty(t, filtered(rows, "zzz"))
	assert.Empty(t, filtered(rows, "wna"), "a loose subsequence is not a match")
	assert.Nil(t, rows[0].matches(), "filtering does not mark the source rows")
}

// Typing a node-name prefix narrows a realistic fleet to the nodes that have it, best matches first; a
// query without the separators finds the names it spells, below the ones containing it, and the count
// says which is which; the age and metric cells are not matched.
func TestFilterNarrowsARealisticFleet(t *testing.T) {
	var rows []Row
	for i := range 10000 {
		name := fmt.Sprintf("ip-127-%d-%d-%d.us-east-2.compute.internal", i/65536, i/256%256, i%256)
		rows = append(rows, Row{Key: name, Cells: []string{name, "Ready", "Windows", "10.0.20348", "worker", "10.20.1-8c2f1a3", "",
			fmt.Sprintf("127.0.%d.%d", i/256%256, i%256), "3m12s", "12%"}, ageCell: 9})
	}
	got, res := filterRows(rows, "ip-127-0-12")
	require.Equal(t, filterResult{found: 256}, res, "only the ip-127-0-12-* nodes")
	require.Len(t, got, 256)
	for _, r := range got {
		require.True(t, strings.HasPrefix(r.Key, "ip-127-0-12-"), r.Key)
	}
	_, res = filterRows(rows, "ip-127-0-1")
	assert.Equal(t, filterResult{found: 11 * 256}, res, "ip-127-0-1-* and ip-127-0-10..19-*")

	got, res = filterRows(rows, "0-12-7")
	require.NotEmpty(t, got)
	assert.Equal(t, "ip-127-0-12-7.us-east-2.compute.internal", got[0].Key, "a match at a word's start ranks first")
	assert.Equal(t, res.found, len(got))

	got, res = filterRows(rows, "ip127012")
	assert.Equal(t, filterResult{similar: len(got)}, res, "only similar matches: no name contains the text")
	require.NotEmpty(t, got)
	for _, r := range got {
		require.True(t, strings.HasPrefix(r.Key, "ip-127-0-1"), r.Key)
	}
	assert.Equal(t, "ip-127-0-1-2.us-east-2.compute.internal", got[0].Key)
	assert.Equal(t, []int{0, 1, 3, 4, 5, 7, 9, 11}, got[0].matches(), "the similar match's characters are highlighted")

	got, _ = filterRows(rows, "3m12")
	assert.Empty(t, got, "the age is not matched")
	got, _ = filterRows(rows, "12%")
	assert.Empty(t, got, "nor the metric cells")
	_, res = filterRows(rows, "127.0.3.")
	assert.Equal(t, filterResult{found: 256}, res, "the address is")
}

// Exact-text matches come first, ranked: the name starting with the text, then another column starting
// with it, then a word, then anywhere; similar matches follow, and the count says so.
func TestFilterRanksMatches(t *testing.T) {
	rows := []Row{
		{Key: "anywhere", Cells: []string{"xwinx", "Ready"}},
		{Key: "word", Cells: []string{"node-win", "Ready"}},
		{Key: "similar", Cells: []string{"w-in", "Ready"}},
		{Key: "cell", Cells: []string{"node", "windows"}},
		{Key: "name", Cells: []string{"win-1", "Ready"}},
	}
	got, res := filterRows(rows, "win")
	assert.Equal(t, []string{"name", "cell", "word", "anywhere", "similar"}, keysOf(got))
	assert.Equal(t, filterResult{found: 4, similar: 1}, res)
	p := listPane{all: rows, rows: got, found: res, query: "win"}
	assert.Equal(t, `5 of 5 (4 contain "win", 1 similar below them)`, filterCount(&p))
}

func TestFilterRowsKeepsFamilies(t *testing.T) {
	rows := []Row{
		{Key: "set-a", Cells: []string{"set-a"}},
		{Key: "set-a/m1", Parent: "set-a", Span: true, Cells: []string{"machine-one node-x"}},
		{Key: "set-a/m2", Parent: "set-a", Span: true, Cells: []string{"machine-two node-y"}},
		{Key: "set-b", Cells: []string{"set-b"}},
	}
	assert.Equal(t, []string{"set-a", "set-a/m2"}, keysOf(filtered(rows, "node-y")), "a matching Machine brings its MachineSet")
	assert.Equal(t, []string{"set-a", "set-a/m1", "set-a/m2"}, keysOf(filtered(rows, "set-a")), "a matching MachineSet brings its Machines")
	assert.Equal(t, []string{"set-b"}, keysOf(filtered(rows, "set-b")))
}

func TestHighlight(t *testing.T) {
	mark := lipgloss.NewStyle().Bold(true)
	plain := lipgloss.NewStyle()
	// Render the marked parts as [..] to see exactly which characters are highlighted.
	show := func(text string, base int, matches []int) string {
		out := highlight(text, base, matches, plain, mark)
		out = strings.ReplaceAll(out, "\x1b[1m", "[")
		return strings.ReplaceAll(out, "\x1b[m", "]")
	}
	assert.Equal(t, "[win]dows", show("windows", 0, []int{0, 1, 2}))
	assert.Equal(t, "w[i]n[d]ows", show("windows", 0, []int{1, 3}))
	assert.Equal(t, "[w]indows", show("windows", 10, []int{2, 10}), "offsets are relative to the cell's start")
	assert.Equal(t, "a[→]b", show("a→b", 0, []int{1}), "multi-byte characters stay whole")
	assert.Equal(t, "abc", show("abc", 0, []int{7}), "matches beyond a truncated cell are ignored")
	assert.Equal(t, "abc", show("abc", 0, nil))
}
