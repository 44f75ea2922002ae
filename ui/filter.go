package ui

import (
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/sahilm/fuzzy"

	"github.com/wmcon/wmcon/ui/layout"
)

// filterRows keeps the rows that fuzzy-match query, in their original order (the snapshot's order is
// meaningful: Windows nodes first). A nested row is kept when it or its parent matches, and a parent is
// kept when one of its nested rows matches, so a match on a Machine still shows which MachineSet it
// belongs to. It runs on every keystroke over every row, so it only decides which rows match (matches
// finds the characters to highlight, for the rows on screen).
func filterRows(rows []Row, query string) []Row {
	query = strings.TrimSpace(query)
	if query == "" {
		return rows
	}
	lower, ascii := strings.ToLower(query), isASCII(query)
	hit := make([]bool, len(rows)) // a slice, not a map: this runs per keystroke
	childHit := map[string]bool{}  // parents with a matching nested row
	parentHit := map[string]bool{} // top-level rows that matched
	n := 0
	for i := range rows {
		if !fuzzyMatch(rows[i].searchText(), query, lower, ascii) {
			continue
		}
		hit[i] = true
		n++
		if p := rows[i].Parent; p != "" {
			childHit[p] = true
		} else {
			parentHit[rows[i].Key] = true
		}
	}
	out := make([]Row, 0, n)
	for i, r := range rows {
		if !hit[i] && !parentHit[r.Parent] && !childHit[r.Key] {
			continue
		}
		if hit[i] {
			r.query = query
		}
		out = append(out, r)
	}
	return out
}

// fuzzyMatch says whether text matches query as the fuzzy matcher decides: query's characters appear in
// text in order, ignoring case. ASCII text (nearly every row) is checked byte by byte, which is several
// times faster than scoring the match; anything else is left to the matcher itself.
func fuzzyMatch(text, query, lowerQuery string, asciiQuery bool) bool {
	if !asciiQuery || !isASCII(text) {
		return len(fuzzy.Find(query, []string{text})) == 1
	}
	q := 0
	for i := 0; i < len(text) && q < len(lowerQuery); i++ {
		c := text[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c == lowerQuery[q] {
			q++
		}
	}
	return q == len(lowerQuery)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// matches are the byte offsets into the row's search text (its cells joined by a space) of the
// characters the filter matched, as the fuzzy matcher picks them; nil when the row is not filtered.
func (r *Row) matches() []int {
	if r.query == "" {
		return nil
	}
	if m := fuzzy.Find(r.query, []string{r.searchText()}); len(m) == 1 {
		return m[0].MatchedIndexes
	}
	return nil
}

// highlight styles the characters of text whose byte offsets (relative to base) are in matches.
// text is plain; offsets beyond it (truncated text) are ignored.
func highlight(text string, base int, matches []int, normal, match lipgloss.Style) string {
	if len(matches) == 0 {
		return layout.Render(normal, text)
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
		b.WriteString(layout.Render(style, text[runStart:end]))
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
