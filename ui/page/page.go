// Package page builds the console's detail pages (a node's, a MachineSet's, a mirror file's): titled
// sections of aligned key/value lines, in the console's styles.
package page

import (
	"sort"
	"strings"

	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/styles"
)

// Writer builds a detail page of titled sections and aligned key/value lines.
type Writer struct {
	Styles *styles.Styles
	b      strings.Builder
}

// Section starts a section under a title.
func (d *Writer) Section(title string) {
	if d.b.Len() > 0 {
		d.b.WriteString("\n")
	}
	d.b.WriteString(d.Styles.DetailTitle.Render(title) + "\n")
}

// Field writes one key and its value, the values of a section aligned.
func (d *Writer) Field(key, value string) {
	d.b.WriteString("  " + d.Styles.DetailKey.Render(layout.PadRight(key+":", 18)) + " " + value + "\n")
}

// Line writes a line of the section.
func (d *Writer) Line(s string) { d.b.WriteString("  " + s + "\n") }

// Pairs writes a sorted map, one entry a line; empty maps say so.
func (d *Writer) Pairs(m map[string]string, show func(k, v string) string) {
	if len(m) == 0 {
		d.Line(d.Styles.Muted.Render("(none)"))
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.Line(k + "=" + show(k, m[k]))
	}
}

// String is the page, without the last line's end.
func (d *Writer) String() string { return strings.TrimRight(d.b.String(), "\n") }
