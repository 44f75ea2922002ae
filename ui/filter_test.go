package ui

import (
	"math/rand/v2"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/sahilm/fuzzy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFilterRows(t *testing.T) {
	rows := []Row{
		{Key: "win-a", Cells: []string{"win-a", "Ready"}},
		{Key: "lin-b", Cells: []string{"lin-b", "Ready"}},
		{Key: "win-c", Cells: []string{"win-c", "NotReady"}},
	}
	got := filterRows(rows, "win")
	require.Len(t, got, 2)
	assert.Equal(t, "win-a", got[0].Key, "original order is kept")
	assert.Equal(t, "win-c", got[1].Key)
	assert.Equal(t, []int{0, 1, 2}, got[0].matches())

	got = filterRows(rows, "notr")
	require.Len(t, got, 1)
	assert.Equal(t, "win-c", got[0].Key, "any column matches")
	assert.Equal(t, []int{6, 7, 8, 9}, got[0].matches(), "offsets point into the joined cells")

	assert.Len(t, filterRows(rows, ""), 3, "an empty filter keeps everything")
	assert.Len(t, filterRows(rows, "  "), 3, "blanks are no filter")
	assert.Empty(t, filterRows(rows, "zzz"))
	assert.Nil(t, rows[0].matches(), "filtering does not mark the source rows")
}

func TestFilterRowsKeepsFamilies(t *testing.T) {
	rows := []Row{
		{Key: "set-a", Cells: []string{"set-a"}},
		{Key: "set-a/m1", Parent: "set-a", Span: true, Cells: []string{"machine-one node-x"}},
		{Key: "set-a/m2", Parent: "set-a", Span: true, Cells: []string{"machine-two node-y"}},
		{Key: "set-b", Cells: []string{"set-b"}},
	}
	keys := func(rs []Row) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Key)
		}
		return out
	}
	assert.Equal(t, []string{"set-a", "set-a/m2"}, keys(filterRows(rows, "node-y")), "a matching Machine brings its MachineSet")
	assert.Equal(t, []string{"set-a", "set-a/m1", "set-a/m2"}, keys(filterRows(rows, "set-a")), "a matching MachineSet brings its Machines")
	assert.Equal(t, []string{"set-b"}, keys(filterRows(rows, "set-b")))
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

// The byte-wise check filterRows uses decides exactly as the fuzzy matcher would, for random rows and
// queries (mixed case, separators, repeated letters) and for non-ASCII ones, which it leaves to the matcher.
func TestFuzzyMatchAgreesWithTheMatcher(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 10000))
	const alphabet = "abcAB-. 01é"
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(string([]rune(alphabet)[rng.IntN(len([]rune(alphabet)))]))
		}
		return b.String()
	}
	agree, hits := 0, 0
	for range 20000 {
		text, query := word(rng.IntN(24)), strings.TrimSpace(word(1+rng.IntN(4)))
		if query == "" {
			continue
		}
		want := len(fuzzy.Find(query, []string{text})) == 1
		got := fuzzyMatch(text, query, strings.ToLower(query), isASCII(query))
		require.Equal(t, want, got, "text %q query %q", text, query)
		agree++
		if want {
			hits++
		}
	}
	assert.Greater(t, hits, 1000, "enough matches among %d cases to mean something", agree)
	assert.Less(t, hits, agree-1000, "enough misses too")
}
