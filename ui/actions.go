package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// This file is the place reserved for the actions of the next issue (reboot, cordon, uncordon, drain,
// logs, health). The intended flow:
//
//  1. A reserved key (KeyMap.Reboot, …, disabled today) is pressed in the list; Model.requestAction
//     opens a dialog (confirmation with options) for the selected object.
//  2. On dialogResultMsg the root model starts the action off the UI goroutine, assigns it an ActionID,
//     opens the actionPanel and returns a command that waits on the action's event channel.
//  3. Each event comes back wrapped in an actionMsg carrying that ID (an envelope, as in gh-dash), so it
//     reaches the panel of the run it belongs to; the command re-arms itself until the channel closes.
//  4. esc / ctrl+c while an action runs cancels its context instead of quitting.

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
	Step     string    // step name; a new name appends a step
	State    StepState // of that step
	Progress int       // n of Total, when the step reports progress
	Total    int
	Line     string // a log line to append
	Err      string // the failure, as a sentence saying what to do
	Finished bool   // the action is over (successfully when Err is empty)
}

// actionMsg is the envelope of one update from a running action.
type actionMsg struct {
	ID     ActionID
	Update ActionUpdate
}

// DialogID identifies one dialog so its answer reaches whoever asked.
type DialogID uint64

// dialogResultMsg is the envelope of a dialog's answer.
type dialogResultMsg struct {
	ID        DialogID
	Confirmed bool
	Option    string // the chosen option, e.g. a drain mode
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
		if p.steps[i].Step == u.Step {
			p.steps[i] = u
			return
		}
	}
	p.steps = append(p.steps, u)
}

// view renders the panel into a w×h box: title, steps, then as many of the latest log lines as fit.
func (p *actionPanel) view(st *Styles, w, h int) string {
	inner := []string{st.DetailTitle.Render(p.title)}
	inner = append(inner, stepRows(st, p.steps, max(1, w-4))...)
	if p.err != "" {
		inner = append(inner, st.Bad.Render(p.err))
	}
	room := max(0, h-2-len(inner))
	logs := p.lines[max(0, len(p.lines)-room):]
	inner = append(inner, logs...)
	for i := range inner {
		inner[i] = fitLine(inner[i], max(0, w-4))
	}
	return st.PanelBorder.Width(w).Height(h).Padding(0, 1).Render(strings.Join(inner, "\n"))
}

// stepRows lays the steps out side by side, wrapping at width, so a long action (a reboot has nine steps)
// leaves the panel room for its latest log lines.
func stepRows(st *Styles, steps []ActionUpdate, width int) []string {
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

func stepLine(st *Styles, s ActionUpdate) string {
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

// dialog is a modal question with options (for example: drain, drain ignoring DaemonSets, cancel).
type dialog struct {
	id      DialogID
	title   string
	body    string
	options []string // the last option cancels
	cursor  int
}

func (d *dialog) update(msg tea.KeyPressMsg, keys KeyMap) (done bool, cmd tea.Cmd) {
	switch {
	case msg.String() == "left" || key.Matches(msg, keys.Up):
		d.cursor = max(0, d.cursor-1)
	case msg.String() == "right" || key.Matches(msg, keys.Down) || msg.String() == "tab":
		d.cursor = min(len(d.options)-1, d.cursor+1)
	case msg.String() == "enter":
		return true, d.answer(d.cursor < len(d.options)-1)
	case msg.String() == "esc" || msg.String() == "ctrl+c":
		return true, d.answer(false)
	}
	return false, nil
}

func (d *dialog) answer(confirmed bool) tea.Cmd {
	msg := dialogResultMsg{ID: d.id, Confirmed: confirmed}
	if confirmed {
		msg.Option = d.options[d.cursor]
	}
	return func() tea.Msg { return msg }
}

func (d *dialog) view(st *Styles, w int) string {
	buttons := make([]string, len(d.options))
	for i, o := range d.options {
		label := "[ " + o + " ]"
		if i == d.cursor {
			buttons[i] = st.Selected.Render(label)
		} else {
			buttons[i] = label
		}
	}
	content := st.DetailTitle.Render(d.title) + "\n\n" + d.body + "\n\n" + strings.Join(buttons, "  ")
	return st.PanelBorder.Padding(1, 2).Width(min(w, 72)).Render(content)
}

// placeInBox centres s in a w×h box (used for dialogs over the body).
func placeInBox(s string, w, h int) string {
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, s)
}
