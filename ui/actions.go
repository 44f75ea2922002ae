package ui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/styles"
)

// The action panel. A node action runs like this: a key on the selected node (or the marked ones) opens
// a confirmation on the view stack when the action is disruptive (dispatch.go); the confirmed request goes
// to the Runner off the UI goroutine (runner.go), whose events come back as messages carrying the run's
// ActionID and are shown here, below or beside the list; a question the action asks is a dialog on the
// stack; esc / ctrl+c cancel the run's context instead of quitting.

// ActionID identifies one run of an action.
type ActionID uint64

// StepState is where one step of an action is.
type StepState int

const (
	StepPending StepState = iota
	StepRunning
	StepDone
	StepFailed
)

// ActionUpdate is what the panel understands; the actions package's events are translated into it so
// that the panel does not depend on their exact shape.
type ActionUpdate struct {
	Target   string    // the node the step is about, for actions on several nodes
	Step     string    // step name; a new name (per target) appends a step
	State    StepState // of that step
	Progress int       // n of Total, when the step reports progress
	Total    int
	Line     string // a log line to append
	Err      string // the failure, as a sentence saying what to do
	Finished bool   // the action is over (successfully when Err is empty)
}

const panelLogLines = 200 // lines kept per action; older ones scroll out

// actionPanel shows the steps and log of one action, below or beside the list (see Layout.Action).
type actionPanel struct {
	id       ActionID
	title    string
	steps    []ActionUpdate
	lines    []string
	err      string
	finished bool
}

func (p *actionPanel) apply(u ActionUpdate) {
	if u.Step != "" {
		p.setStep(u)
	}
	if u.Line != "" {
		p.lines = append(p.lines, u.Line)
		if len(p.lines) > panelLogLines {
			p.lines = p.lines[len(p.lines)-panelLogLines:]
		}
	}
	if u.Err != "" {
		p.err = u.Err
	}
	p.finished = p.finished || u.Finished
}

func (p *actionPanel) setStep(u ActionUpdate) {
	for i := range p.steps {
		if p.steps[i].Step == u.Step && p.steps[i].Target == u.Target {
			p.steps[i] = u
			return
		}
	}
	p.steps = append(p.steps, u)
}

// view renders the panel into a w×h box: the title, the steps (one row per node for several nodes), the
// failure or hint in full, then as many of the latest log lines as fit. Long lines wrap rather than being
// cut: the end of a line ("node left cordoned: …") is often what matters.
// Hints name commands; keys adds the console's keys that do the same now (see commandKeys).
func (p *actionPanel) view(st *styles.Styles, w, h int, keys []binding.CommandKey) string {
	width := max(1, w-4)
	inner := layout.Wrap([]string{st.DetailTitle.Render(p.title)}, width)
	inner = append(inner, p.stepBlock(st, width)...)
	if p.err != "" {
		inner = append(inner, layout.Wrap([]string{st.Bad.Render(binding.WithKeys(p.err, keys...))}, width)...)
	}
	room := max(0, h-2-len(inner))
	recent := p.lines[max(0, len(p.lines)-room):]
	if len(keys) > 0 {
		recent = append([]string(nil), recent...)
		for i := range recent {
			recent[i] = binding.WithKeys(recent[i], keys...)
		}
	}
	logs := layout.Wrap(recent, width)
	inner = append(inner, logs[max(0, len(logs)-room):]...)
	for i := range inner {
		inner[i] = layout.FitLine(inner[i], width)
	}
	return st.PanelBorder.Width(w).Height(h).Padding(0, 1).Render(strings.Join(inner, "\n"))
}

// stepBlock is the steps side by side; for an action on several nodes, one group per node, each named once.
func (p *actionPanel) stepBlock(st *styles.Styles, width int) []string {
	var targets []string
	byTarget := map[string][]ActionUpdate{}
	for _, s := range p.steps {
		if _, seen := byTarget[s.Target]; !seen {
			targets = append(targets, s.Target)
		}
		byTarget[s.Target] = append(byTarget[s.Target], s)
	}
	if len(targets) <= 1 {
		return stepRows(st, p.steps, width)
	}
	var rows []string
	for _, t := range targets {
		name := t
		if name == "" { // the action's own steps, about no one node (an upgrade's plan)
			name = "all nodes"
		}
		rows = append(rows, st.Muted.Render(name+":"))
		for _, r := range stepRows(st, byTarget[t], max(1, width-2)) {
			rows = append(rows, "  "+r)
		}
	}
	return rows
}

// stepRows lays the steps out side by side, wrapping at width, so a long action (a reboot has nine steps)
// leaves the panel room for its latest log lines.
func stepRows(st *styles.Styles, steps []ActionUpdate, width int) []string {
	const gap = "   "
	var rows []string
	var row string
	rowWidth := 0
	for _, s := range steps {
		text := stepLine(st, s)
		w := lipgloss.Width(text)
		if rowWidth > 0 && rowWidth+len(gap)+w > width {
			rows = append(rows, row)
			row, rowWidth = "", 0
		}
		if rowWidth > 0 {
			row += gap
			rowWidth += len(gap)
		}
		row += text
		rowWidth += w
	}
	if rowWidth > 0 {
		rows = append(rows, row)
	}
	return rows
}

func stepLine(st *styles.Styles, s ActionUpdate) string {
	mark, style := "·", st.Muted
	switch s.State {
	case StepRunning:
		mark, style = "…", st.Cell
	case StepDone:
		mark, style = "✓", st.Good
	case StepFailed:
		mark, style = "✗", st.Bad
	}
	text := mark + " " + s.Step
	if s.Total > 0 {
		text += fmt.Sprintf(" (%d/%d)", s.Progress, s.Total)
	}
	return style.Render(text)
}
