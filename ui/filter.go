package ui

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/ui/layout"
)

// filterResult says how the rows a filter kept matched it: found contain the text as typed, similar only
// spell it without some of its separators (a typed "ip127012" for "ip-127-0-1-2").
type filterResult struct {
	found, similar int
}

// filterRows keeps the rows that match query: first the rows whose columns contain it (ignoring case),
// ranked — the name starting with it, a column starting with it, a word in a column starting with it,
// anywhere — then the rows that match it only when separators (- . _ / : and spaces) the query lacks are
// skipped. A looser fuzzy match (the query's characters anywhere in order) is not kept: every realistic
// node name holds the characters of "ip-127-0-1" in order, so it would keep the whole fleet. Only the
// columns a user means are matched: not the age, which changes under the user, nor the metric columns
// after it. Rows of equal rank keep their order (the snapshot's: Windows nodes first). In a list with
// nested rows, a nested row is kept when it or its parent matches, and a parent when one of its nested
// rows does, in the list's order, so a match on a Machine still shows which MachineSet it belongs to. It
// runs on every keystroke over every row; matches finds the characters to highlight, for the rows on
// screen.
func filterRows(rows []Row, query string) ([]Row, filterResult) {
	query = strings.TrimSpace(query)
	if query == "" {
		return rows, filterResult{}
	}
	q := strings.ToLower(query)
	rank := make([]int8, len(rows)) // rankNone, or how the row matched; a slice, not a map: per keystroke
	nested := false
	for i := range rows {
		rank[i] = matchRank(&rows[i], q)
		nested = nested || rows[i].Parent != ""
	}
	if nested {
		return keepFamilies(rows, rank, query)
	}
	var res filterResult
	order := make([]int, 0, len(rows))
	for i, r := range rank {
		switch {
		case r == rankNone:
			continue
		case r == rankSimilar:
			res.similar++
		default:
			res.found++
		}
		order = append(order, i)
	}
	sort.SliceStable(order, func(a, b int) bool { return rank[order[a]] < rank[order[b]] })
	out := make([]Row, len(order))
	for k, i := range order {
		out[k] = rows[i]
		out[k].query = query
	}
	return out, res
}

// How a row matched, best first.
const (
	rankNamePrefix int8 = iota // the first column starts with the query
	rankCellPrefix             // another column does
	rankWordPrefix             // a word in a column does (after a separator)
	rankAnywhere               // the query is somewhere in a column
	rankSimilar                // only with separators skipped
	rankNone
)

func matchRank(r *Row, q string) int8 {
	text := r.searchText()
	at := indexFold(text, q)
	if at < 0 {
		if _, ok := separatorMatch(text, q); ok {
			return rankSimilar
		}
		return rankNone
	}
	if at == 0 {
		return rankNamePrefix
	}
	best := rankAnywhere
	for ; at >= 0; at = nextIndexFold(text, q, at) {
		switch {
		case at == 0:
			return rankNamePrefix
		case text[at-1] == ' ':
			return rankCellPrefix
		case isSeparator(text[at-1]):
			best = rankWordPrefix
		}
	}
	return best
}

// keepFamilies filters a list with nested rows, keeping its order and families.
func keepFamilies(rows []Row, rank []int8, query string) ([]Row, filterResult) {
	var res filterResult
	childHit := map[string]bool{}  // parents with a matching nested row
	parentHit := map[string]bool{} // top-level rows that matched
	for i := range rows {
		if rank[i] == rankNone {
			continue
		}
		if rank[i] == rankSimilar {
			res.similar++
		} else {
			res.found++
		}
		if p := rows[i].Parent; p != "" {
			childHit[p] = true
		} else {
			parentHit[rows[i].Key] = true
		}
	}
	var out []Row
	for i, r := range rows {
		hit := rank[i] != rankNone
		if !hit && !parentHit[r.Parent] && !childHit[r.Key] {
			continue
		}
		if hit {
			r.query = query
		}
		out = append(out, r)
	}
	return out, res
}

// indexFold is strings.Index ignoring ASCII case (q is lower case); text outside ASCII is compared as
// strings.ToLower would.
func indexFold(text, q string) int { return nextIndexFold(text, q, -1) }

// nextIndexFold is the next position after `after` where q starts in text, ignoring case; -1 if none. An
// ASCII query is compared byte by byte (a byte of a multi-byte character never equals an ASCII one, so
// offsets stay text's); another is looked for in the lower-cased text, only to decide a match.
func nextIndexFold(text, q string, after int) int {
	if !isASCII(q) {
		if after >= 0 {
			return -1
		}
		return strings.Index(strings.ToLower(text), q)
	}
	for i := after + 1; i+len(q) <= len(text); i++ {
		if equalFoldASCII(text[i:i+len(q)], q) {
			return i
		}
	}
	return -1
}

func equalFoldASCII(s, lowerQ string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lowerQ[i] {
			return false
		}
	}
	return true
}

func isSeparator(c byte) bool {
	return c == '-' || c == '.' || c == '_' || c == '/' || c == ':' || c == ' ' || c == ','
}

// separatorMatch finds q in text when separators of text that q lacks are skipped: every character of q in
// order, and only separators between them. A query that has separators of its own was typed as the text
// is spelled, and is only ever matched as typed. It returns the offsets of the matched characters.
func separatorMatch(text, q string) ([]int, bool) {
	if !isASCII(text) || len(q) < 2 || strings.IndexFunc(q, func(r rune) bool { return r < utf8.RuneSelf && isSeparator(byte(r)) }) >= 0 {
		return nil, false
	}
	for start := 0; start+len(q) <= len(text); start++ {
		if lowerASCII(text[start]) != q[0] || start > 0 && !isSeparator(text[start-1]) {
			continue // a similar match starts where a word does
		}
		at := []int{start}
		k := start + 1
		for j := 1; j < len(q) && k < len(text); k++ {
			switch c := lowerASCII(text[k]); {
			case c == q[j]:
				at = append(at, k)
				j++
			case !isSeparator(text[k]):
				k = len(text) // a character the query does not have: no match from this start
			}
		}
		if len(at) == len(q) {
			return at, true
		}
	}
	return nil, false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
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
// characters the filter matched: the first occurrence of the text, or the characters a similar match
// picked; nil when the row is not filtered.
func (r *Row) matches() []int {
	if r.query == "" {
		return nil
	}
	text, q := r.searchText(), strings.ToLower(r.query)
	if at := indexFold(text, q); at >= 0 && isASCII(q) {
		out := make([]int, len(q))
		for i := range out {
			out[i] = at + i
		}
		return out
	}
	if at, ok := separatorMatch(text, q); ok {
		return at
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

// filterCount is the status line's count of a filtered list: how many rows are kept, of how many, and
// which of them only resemble the text.
func filterCount(p *listPane) string {
	count := fmt.Sprintf("%d of %d", len(p.rows), len(p.all))
	if p.query != "" && p.found.similar > 0 {
		count += fmt.Sprintf(" (%d contain %q, %d similar below them)", p.found.found, strings.TrimSpace(p.query), p.found.similar)
	}
	return count
}
