package ui

import (
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/sahilm/fuzzy"
)

// rowSource lets sahilm/fuzzy read the rows' search text without copying it into a new slice.
type rowSource []Row

func (s rowSource) String(i int) string { return s[i].searchText() }
func (s rowSource) Len() int            { return len(s) }

// filterRows keeps the rows that fuzzy-match query, in their original order (the snapshot's order is
// meaningful: Windows nodes first), recording the matched characters for highlighting. A nested row is
// kept when it or its parent matches, and a parent is kept when one of its nested rows matches, so a
// match on a Machine still shows which MachineSet it belongs to.
func filterRows(rows []Row, query string) []Row {
	query = strings.TrimSpace(query)
	if query == "" {
		return rows
	}
	for i := range rows {
		rows[i].searchText() // fill the cache once, before the matcher reads it
	}
	matches := fuzzy.FindFromNoSort(query, rowSource(rows))
	matched := make([][]int, len(rows)) // non-nil for matching rows; a slice, not a map: this runs per keystroke
	childHit := map[string]bool{}       // parents with a matching nested row
	parentHit := map[string]bool{}      // top-level rows that matched
	for _, m := range matches {
		matched[m.Index] = append(make([]int, 0, len(m.MatchedIndexes)), m.MatchedIndexes...)
		if p := rows[m.Index].Parent; p != "" {
			childHit[p] = true
		} else {
			parentHit[rows[m.Index].Key] = true
		}
	}
	out := make([]Row, 0, len(matches))
	for i, r := range rows {
		if matched[i] == nil && !parentHit[r.Parent] && !childHit[r.Key] {
			continue
		}
		r.Matches = matched[i]
		out = append(out, r)
	}
	return out
}

// highlight styles the characters of text whose byte offsets (relative to base) are in matches.
// text is plain; offsets beyond it (truncated text) are ignored.
func highlight(text string, base int, matches []int, normal, match lipgloss.Style) string {
	if len(matches) == 0 {
		return render(normal, text)
	}
	var b strings.Builder
	runStart, runMatched := 0, false
	flush := func(end int) {
		if end <= runStart {
			return
		}
		style := normal
		if runMatched {
			style = match
		}
		b.WriteString(render(style, text[runStart:end]))
		runStart = end
	}
	mi := 0
	for i := 0; i < len(text); {
		for mi < len(matches) && matches[mi]-base < i {
			mi++
		}
		isMatch := mi < len(matches) && matches[mi]-base == i
		if isMatch != runMatched {
			flush(i)
			runMatched = isMatch
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	flush(len(text))
	return b.String()
}
