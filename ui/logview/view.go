package logview

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/ui/theme"
)

type styles struct {
	title, muted, err, warn, match, cursor, bad lipgloss.Style
}

func newStyles(t *theme.Theme) styles {
	return styles{
		title:  t.Title,
		muted:  t.Muted,
		err:    t.Bad,
		warn:   t.Warn,
		match:  t.Selected,
		cursor: t.Fg(lipgloss.NewStyle().Bold(true), t.Palette.Match),
		bad:    t.Bad,
	}
}

func (m Model) visible() visible { return visible{buf: m.buf, f: &m.filter} }

func (m Model) bodyHeight() int { return max(1, m.height-2) }

// View renders the header, the lines and the status line, height lines of at most width cells.
func (m Model) View() string {
	var b strings.Builder
	b.WriteString(ansi.Truncate(m.header(), m.width, "…"))
	rows := m.bodyRows()
	for _, r := range rows {
		b.WriteByte('\n')
		b.WriteString(r)
	}
	for range m.bodyHeight() - len(rows) {
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(ansi.Truncate(m.statusLine(), m.width, "…"))
	return b.String()
}

func (m Model) header() string {
	nodes := m.nodeNames()
	parts := []string{m.styles.title.Render("Logs " + m.service), "on " + strings.Join(nodes, ", ")}
	if src := m.sourceText(); src != "" {
		parts = append(parts, "via "+src)
	}
	if m.follow {
		parts = append(parts, "[follow]")
	} else {
		parts = append(parts, "[paused]")
	}
	if m.wrap {
		parts = append(parts, "[wrap]")
	}
	if m.filter.active() {
		mode := "fuzzy"
		if m.filter.regex {
			mode = "regex"
		}
		parts = append(parts, fmt.Sprintf("[%s %q]", mode, m.filter.text))
	}
	if m.search != "" {
		parts = append(parts, fmt.Sprintf("[/%s]", m.search))
	}
	count := fmt.Sprintf("%d lines", m.buf.Len())
	if m.filter.active() {
		count = fmt.Sprintf("%d of %d lines", len(m.filter.abs), m.buf.Len())
	}
	if ev := m.buf.Evicted(); ev > 0 {
		count += fmt.Sprintf(" (%d older dropped)", ev)
	}
	return strings.Join(parts, " ") + "  " + m.styles.muted.Render(count)
}

func (m Model) nodeNames() []string {
	var out []string
	for _, n := range m.opts.Request.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// sourceText says where lines come from: "node proxy", "SSH", or both.
func (m Model) sourceText() string {
	var api, ssh bool
	for _, s := range m.sources {
		api = api || s == logline.SourceAPI
		ssh = ssh || s == logline.SourceSSH
	}
	switch {
	case api && ssh:
		return "node proxy + SSH"
	case api:
		return "node proxy"
	case ssh:
		return "SSH"
	}
	return ""
}

func (m Model) statusLine() string {
	switch m.input {
	case inputSearch:
		return "search: " + m.inputText + "_"
	case inputFilter:
		mode := "fuzzy"
		if m.filter.regex {
			mode = "regex"
		}
		line := fmt.Sprintf("filter (%s, tab switches): %s_", mode, m.inputText)
		if m.bad {
			line += "  " + m.styles.bad.Render(m.status)
		}
		return line
	case inputSave:
		return "save to: " + m.inputText + "_"
	case inputOverwrite:
		return m.styles.warn.Render(m.savePath + " exists: overwrite it? (y/n)")
	}
	if m.status != "" {
		if m.bad {
			return m.styles.bad.Render(m.status)
		}
		return m.status
	}
	return m.styles.muted.Render("f follow · / search · & filter · ]/[ errors · w wrap · s save · tab service · q close")
}

// bodyRows renders the lines shown: the newest ones when following, else from top down.
func (m Model) bodyRows() []string {
	v := m.visible()
	h := m.bodyHeight()
	if v.len() == 0 {
		if m.filter.active() {
			return []string{m.styles.muted.Render("no line matches the filter")}
		}
		return []string{m.styles.muted.Render("waiting for lines…")}
	}
	start := v.index(m.top)
	if m.follow || m.fitsFrom(start) {
		// The newest lines, bottom-anchored (a paused view near the end shows a full screen too).
		var rows []string
		for i := v.len() - 1; i >= 0 && len(rows) < h; i-- {
			rows = append(m.renderLine(v.abs(i)), rows...)
		}
		return rows[max(0, len(rows)-h):]
	}
	var rows []string
	for i := start; i < v.len() && len(rows) < h; i++ {
		rows = append(rows, m.renderLine(v.abs(i))...)
	}
	return rows[:min(len(rows), h)]
}

// renderLine renders one log line as screen rows (several when wrapping).
func (m Model) renderLine(abs uint64) []string {
	l, _ := m.buf.Get(abs)
	gutter := " "
	if m.hasCursor && abs == m.cursor {
		gutter = m.styles.cursor.Render(">")
	}
	text := m.prefix(l) + sanitize(l.Text)
	width := m.width - 1
	var chunks []string
	if m.wrap {
		chunks = strings.Split(ansi.Hardwrap(text, width, true), "\n")
	} else {
		chunks = []string{ansi.Truncate(text, width, "…")}
	}
	style := m.levelStyle(l.Level)
	for i, c := range chunks {
		chunks[i] = gutter + m.highlight(c, style)
		gutter = " "
	}
	return chunks
}

func (m Model) prefix(l logline.Line) string {
	if len(m.opts.Request.Nodes) < 2 {
		return ""
	}
	return "[" + l.Node + "] "
}

func (m Model) levelStyle(l logline.Level) *lipgloss.Style {
	switch l {
	case logline.LevelError, logline.LevelFatal:
		return &m.styles.err
	case logline.LevelWarning:
		return &m.styles.warn
	}
	return nil
}

// highlight styles a row and reverses the search matches in it.
func (m Model) highlight(row string, style *lipgloss.Style) string {
	render := func(s string) string {
		if style == nil || s == "" {
			return s
		}
		return style.Render(s)
	}
	if m.search == "" {
		return render(row)
	}
	lower, q := strings.ToLower(row), strings.ToLower(m.search)
	var b strings.Builder
	for {
		i := strings.Index(lower, q)
		if i < 0 || len(lower) != len(row) { // lowering changed byte lengths: no safe highlight
			b.WriteString(render(row))
			return b.String()
		}
		b.WriteString(render(row[:i]))
		b.WriteString(m.styles.match.Render(row[i : i+len(q)]))
		row, lower = row[i+len(q):], lower[i+len(q):]
	}
}

// sanitize keeps a log line from moving the cursor: tabs become spaces, other controls are dropped.
func sanitize(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
}

// rowsOf is how many screen rows a line takes.
func (m Model) rowsOf(abs uint64) int {
	if !m.wrap {
		return 1
	}
	l, _ := m.buf.Get(abs)
	w := ansi.StringWidth(m.prefix(l) + sanitize(l.Text))
	return max(1, (w+m.width-2)/(m.width-1))
}

// firstShown is the absolute index of the first line on screen.
func (m Model) firstShown() uint64 {
	v := m.visible()
	if !m.follow {
		return v.abs(min(v.index(m.top), max(0, v.len()-1)))
	}
	rows, i := 0, v.len()-1
	for ; i > 0; i-- {
		rows += m.rowsOf(v.abs(i))
		if rows >= m.bodyHeight() {
			break
		}
	}
	if i < 0 || v.len() == 0 {
		return m.buf.First()
	}
	return v.abs(i)
}

// fitsFrom says whether the lines from visible index i to the end fit on screen.
func (m Model) fitsFrom(i int) bool {
	v := m.visible()
	rows := 0
	for ; i < v.len(); i++ {
		if rows += m.rowsOf(v.abs(i)); rows > m.bodyHeight() {
			return false
		}
	}
	return true
}

// scroll moves by delta lines; reaching the end resumes following, scrolling up stops it.
func (m *Model) scroll(delta int) {
	v := m.visible()
	if v.len() == 0 {
		return
	}
	if m.follow {
		if delta > 0 {
			return
		}
		m.top, m.follow = m.firstShown(), false
	}
	i := min(max(v.index(m.top)+delta, 0), v.len()-1)
	m.top = v.abs(i)
	if delta > 0 && m.fitsFrom(i) {
		m.follow = true
	}
}

// jump moves the cursor to the next (dir 1) or previous (dir -1) visible line matching pred, and scrolls it
// into view a third of the way down. With wrap it goes round the ends as an editor's search does (and says
// so); without, reaching an end says none.
func (m *Model) jump(dir int, pred func(logline.Line) bool, none string, wrap bool) {
	v := m.visible()
	n := v.len()
	start := m.jumpStart(dir)
	for step := 1; step <= n; step++ {
		i := start + dir*step
		wrapped := i < 0 || i >= n
		if wrapped && !wrap {
			break
		}
		i = ((i % n) + n) % n
		if !pred(v.line(i)) {
			continue
		}
		m.cursor, m.hasCursor, m.follow = v.abs(i), true, false
		m.top = v.abs(max(0, i-m.bodyHeight()/3))
		switch {
		case wrapped && dir > 0:
			m.setStatus("search passed the end: continued from the top", false)
		case wrapped:
			m.setStatus("search passed the top: continued from the end", false)
		default:
			m.setStatus("", false)
		}
		return
	}
	m.setStatus(none, false)
}

// jumpStart is where a jump begins: the cursor if it is still visible, else the screen's edge.
func (m Model) jumpStart(dir int) int {
	v := m.visible()
	if m.hasCursor {
		i := v.index(m.cursor)
		if i < v.len() && v.abs(i) == m.cursor {
			return i
		}
	}
	if dir < 0 {
		if m.follow {
			return v.len()
		}
		return sort.Search(v.len(), func(i int) bool { return v.abs(i) >= m.top })
	}
	return v.index(m.firstShown()) - 1
}
