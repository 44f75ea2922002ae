package logview

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/sahilm/fuzzy"

	"github.com/wmcon/wmcon/actions/logline"
)

// lineFilter keeps the absolute indexes of the buffered lines that pass a fuzzy or regex filter, updated
// as lines arrive and leave the ring, so that scrolling never rescans the buffer.
type lineFilter struct {
	text  string
	regex bool
	re    *regexp.Regexp
	abs   []uint64 // passing lines, ascending; nil when the filter is off
}

func (f *lineFilter) active() bool { return f.text != "" }

func (f *lineFilter) reset(buf *logline.Buffer) { f.set(buf, "", f.regex) }

// set changes the filter and rescans the buffer. A bad regular expression is an error and changes nothing.
func (f *lineFilter) set(buf *logline.Buffer, text string, regex bool) error {
	var re *regexp.Regexp
	if text != "" && regex {
		var err error
		if re, err = regexp.Compile(text); err != nil {
			return fmt.Errorf("bad regular expression: %w", err)
		}
	}
	f.text, f.regex, f.re, f.abs = text, regex, re, nil
	if !f.active() {
		return nil
	}
	f.abs = []uint64{}
	for i := range buf.Len() {
		if f.match(buf.At(i).Text) {
			f.abs = append(f.abs, buf.First()+uint64(i))
		}
	}
	return nil
}

func (f *lineFilter) match(text string) bool {
	if f.re != nil {
		return f.re.MatchString(text)
	}
	return len(fuzzy.FindNoSort(f.text, []string{text})) > 0
}

// appended notes lines just appended to buf and forgets evicted ones.
func (f *lineFilter) appended(buf *logline.Buffer, lines []logline.Line) {
	if !f.active() {
		return
	}
	first := buf.Total() - uint64(len(lines))
	for i, l := range lines {
		abs := first + uint64(i)
		if abs >= buf.First() && f.match(l.Text) {
			f.abs = append(f.abs, abs)
		}
	}
	if drop := sort.Search(len(f.abs), func(i int) bool { return f.abs[i] >= buf.First() }); drop > 0 {
		f.abs = append(f.abs[:0], f.abs[drop:]...)
	}
}

// visible is the view's list of lines: the filter's, or the whole buffer.
type visible struct {
	buf *logline.Buffer
	f   *lineFilter
}

func (v visible) len() int {
	if v.f.active() {
		return len(v.f.abs)
	}
	return v.buf.Len()
}

// abs is the absolute index of the i-th visible line.
func (v visible) abs(i int) uint64 {
	if v.f.active() {
		return v.f.abs[i]
	}
	return v.buf.First() + uint64(i)
}

// index is the position of the first visible line at or after abs (len() if none).
func (v visible) index(abs uint64) int {
	if v.f.active() {
		return sort.Search(len(v.f.abs), func(i int) bool { return v.f.abs[i] >= abs })
	}
	if abs < v.buf.First() {
		return 0
	}
	return min(int(abs-v.buf.First()), v.buf.Len())
}

func (v visible) line(i int) logline.Line {
	l, _ := v.buf.Get(v.abs(i))
	return l
}
