package health

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/ui/binding"
)

const (
	indent      = 6  // expanded details start under the title
	maxTitleCol = 28 // the title column never takes more
)

// View renders the header, then one row per check with the expanded ones' details, scrolled so the
// selected check is visible, and a notice line when there is one.
func (m Model) View() string {
	st := &m.styles
	lines := append([]string{m.header()}, m.metricsLines()...)
	body, start, end := m.body()
	bodyH := m.height - len(lines)
	if m.notice != "" {
		bodyH--
	}
	lines = append(lines, visible(body, start, end, bodyH)...)
	if m.notice != "" {
		lines = append(lines, st.Notice.Render(ansi.Truncate(m.notice, m.width, "…")))
	}
	return strings.Join(lines, "\n")
}

// visible is the window of bodyH lines that shows lines start..end (the selected check) when it fits.
func visible(body []string, start, end, bodyH int) []string {
	if bodyH <= 0 {
		return nil
	}
	offset := 0
	if end > bodyH {
		offset = end - bodyH
	}
	if start < offset {
		offset = start
	}
	return body[offset:min(len(body), offset+bodyH)]
}

func (m Model) header() string {
	st := &m.styles
	title, checking := "Health of "+m.opts.Node, "checking the node and its host…"
	if m.opts.Cluster {
		title, checking = "Prerequisites for Windows nodes", "checking the cluster…"
		if m.report != nil && m.report.Cluster != "" {
			title += " · " + m.report.Cluster
		}
	}
	title = st.Title.Render(title)
	var status string
	switch {
	case m.loading && m.report == nil:
		status = checking
	case m.err != nil:
		status = ""
	case m.report != nil:
		status = m.report.Summary() + " · checked " + m.report.Time.In(m.opts.Location).Format("15:04:05")
		if m.loading {
			status += " · checking again…"
		}
	}
	return ansi.Truncate(title+"  "+st.Muted.Render(status), m.width, "…")
}

// body renders every check; start and end delimit the selected check's lines.
func (m Model) body() (lines []string, start, end int) {
	st := &m.styles
	if m.err != nil {
		what := "triage"
		if m.opts.Cluster {
			what = "the doctor"
		}
		msg := what + " failed: " + m.err.Error() + " — press g to try again, esc to close"
		for _, l := range strings.Split(ansi.Wrap(msg, m.width, " "), "\n") {
			lines = append(lines, st.Fail.Render(l))
		}
		return lines, 0, 0
	}
	if m.report == nil {
		return nil, 0, 0
	}
	titleW := m.titleWidth()
	for i, c := range m.report.Checks {
		if i == m.cursor {
			start = len(lines)
		}
		lines = append(lines, m.row(c, i == m.cursor, titleW))
		if m.expanded[c.ID] {
			lines = append(lines, m.details(c, m.rowCut(c, titleW))...)
		}
		if i == m.cursor {
			end = len(lines)
		}
	}
	return lines, start, end
}

func (m Model) titleWidth() int {
	w := 0
	for _, c := range m.report.Checks {
		w = max(w, lipgloss.Width(c.Title))
	}
	return min(w, maxTitleCol)
}

// row is "▶ ✗ Service kubelet   stopped: ...", cut to the width; the selected row is reversed.
func (m Model) row(c diagnosis.Check, selected bool, titleW int) string {
	st := &m.styles
	cursor := " "
	if selected {
		cursor = m.marks.Cursor
	}
	title := ansi.Truncate(c.Title, titleW, "…")
	title += strings.Repeat(" ", titleW-lipgloss.Width(title))
	text := ansi.Truncate(title+"  "+c.Detail, max(1, m.width-4), "…")
	if selected {
		text = st.Selected.Render(text)
	}
	return cursor + " " + m.mark(c.Status) + " " + text
}

func (m Model) mark(s diagnosis.CheckStatus) string {
	st := &m.styles
	switch s {
	case diagnosis.CheckFail:
		return st.Fail.Render(m.marks.Fail)
	case diagnosis.CheckWarn:
		return st.Warn.Render(m.marks.Warn)
	case diagnosis.CheckUnknown:
		return st.Unknown.Render(m.marks.Unknown)
	}
	return st.OK.Render(m.marks.OK)
}

// rowCut reports whether the row had to cut the check's detail.
func (m Model) rowCut(c diagnosis.Check, titleW int) bool {
	return titleW+2+lipgloss.Width(c.Detail) > max(1, m.width-4)
}

// details are the expanded lines: the whole detail when the row cut it, what to do, and the evidence.
func (m Model) details(c diagnosis.Check, withDetail bool) []string {
	st := &m.styles
	pad := strings.Repeat(" ", indent)
	width := max(10, m.width-indent)
	var out []string
	add := func(text string, style lipgloss.Style) {
		for _, l := range strings.Split(ansi.Wrap(text, width, " "), "\n") {
			out = append(out, pad+style.Render(l))
		}
	}
	if withDetail {
		add(c.Detail, lipgloss.NewStyle())
	}
	if c.Fix != "" {
		add(m.marks.Arrow+" "+binding.WithKeys(c.Fix, m.commandKeys(c)...), st.Fix)
	}
	for _, e := range c.Evidence {
		out = append(out, pad+st.Muted.Render(ansi.Truncate(m.marks.Item+" "+e, width, "…")))
	}
	if c.Service != "" {
		out = append(out, pad+st.Muted.Render(m.serviceHint(c)))
	}
	return out
}

// commandKeys are the keys of this view that do what the commands in check c's fix say, on this node;
// only those that work here (read-only has neither restart nor reboot), so the fix never offers a key
// that would be refused.
func (m Model) commandKeys(c diagnosis.Check) []binding.CommandKey {
	k, node := m.opts.Keys, m.opts.Node
	svc := c.Service
	if svc == "" {
		svc = "kubelet" // l on a check without a service tails the kubelet's log
	}
	keys := []binding.CommandKey{
		{Command: cmdline.Wmcon("triage", node), Key: k.Refresh.Help().Key},
		{Command: cmdline.Wmcon("logs", node, "--service", svc), Key: k.Logs.Help().Key},
	}
	if m.opts.ReadOnly {
		return keys
	}
	keys = append(keys, binding.CommandKey{Command: cmdline.Wmcon("reboot", node), Key: k.Reboot.Help().Key})
	if c.Restartable {
		keys = append(keys, binding.CommandKey{Command: cmdline.Wmcon("restart-service", node, c.Service), Key: k.Restart.Help().Key})
	}
	return keys
}

// CommandKeys are the view's keys that do what commands do, for the selected check (for the hints of an
// action started from the view).
func (m Model) CommandKeys() []binding.CommandKey {
	c, _ := m.Selected()
	return m.commandKeys(c)
}

func (m Model) serviceHint(c diagnosis.Check) string {
	hint := fmt.Sprintf("l: tail the %s log", c.Service)
	if c.Restartable && !m.opts.ReadOnly {
		hint = fmt.Sprintf("r: start %s · ", c.Service) + hint
	}
	return hint
}
