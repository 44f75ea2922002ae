package wizard

import (
	"fmt"
	"strings"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/setup/steps"
	"github.com/wmcon/wmcon/ui/layout"
)

// wizardStepNames are the step list's short names, in steps.All order.
var wizardStepNames = map[event.SetupStepID]string{
	event.SetupCheck: "Check", event.SetupOperator: "Operator", event.SetupKey: "Key", event.SetupMachines: "Machines",
	event.SetupConfigure: "Configure", event.SetupWorkloads: "Workloads", event.SetupDone: "Done",
}

const wizardListWidth = 16

// View is the step list on the left and the step on the right: its state and evidence, then its choices
// or the plan being confirmed.
func (w *wizardView) View() string {
	st := &w.ctx.Styles
	title := st.DetailTitle.Render("Guided setup") + st.Muted.Render(" · from no Windows nodes to a Ready Windows node"+w.modeText())
	left := w.stepList()
	height := max(1, w.height-2)
	right := w.stepText(max(10, w.width-wizardListWidth-2), height)
	if w.scroll > 0 && w.phase != wizChoose {
		right = right[min(w.scroll, max(0, len(right)-1)):]
	}
	rows := make([]string, height)
	for i := range rows {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		rows[i] = layout.FitLine(l, wizardListWidth) + st.Muted.Render("│ ") + r
	}
	if len(right) > height && w.phase != wizChoose {
		rows[height-1] = layout.FitLine("", wizardListWidth) + st.Muted.Render(fmt.Sprintf("│ … %d more lines: ↓ scrolls", len(right)-height))
	}
	return layout.FitBox(title+"\n\n"+strings.Join(rows, "\n"), w.width, w.height)
}

func (w *wizardView) modeText() string {
	switch {
	case w.setup == nil:
		return ""
	case w.standalone:
		return " · standalone (no operator)"
	case w.setup.Mode == event.ModeOperator:
		return " · with WMCO"
	}
	return ""
}

// stepList marks each step done (✓), blocked (✗) or not yet (·), and the one shown.
func (w *wizardView) stepList() []string {
	st, marks := &w.ctx.Styles, w.ctx.Marks
	out := make([]string, 0, len(steps.All))
	for i, id := range steps.IDs() {
		mark, style := marks.Item, st.Muted
		if w.setup != nil {
			s := w.setup.Step(id)
			switch {
			case s.Done:
				mark, style = marks.OK, st.Good
			case s.Blocking != "":
				mark, style = marks.Fail, st.Bad
			}
		}
		line := fmt.Sprintf("%s %d %s", mark, i+1, wizardStepNames[id])
		if i == w.step && w.setup != nil {
			out = append(out, st.Selected.Render(marks.Cursor+" "+line))
			continue
		}
		out = append(out, "  "+style.Render(line))
	}
	return out
}

// stepText is the right-hand side, wrapped at width. Outside a plan (which scrolls) the choices always
// show: when the step's findings are longer than height, they are cut, saying how much.
func (w *wizardView) stepText(width, height int) []string {
	st := &w.ctx.Styles
	if w.setup == nil {
		if w.detectErr != "" {
			return layout.Wrap([]string{st.Bad.Render("cannot tell where the setup stands: " + w.detectErr), "", w.choiceLine(0)}, width)
		}
		return []string{st.Muted.Render("reading where the setup stands (the doctor, the operator, the key, machines, nodes)…")}
	}
	id := w.stepID()
	s := w.setup.Step(id)
	lines := []string{st.DetailTitle.Render(fmt.Sprintf("%d of %d  %s", w.step+1, len(steps.All), s.Title))}
	lines = append(lines, w.stateLines(s)...)
	if id == event.SetupCheck && len(w.warnings) > 0 && s.Blocking == "" {
		lines = append(lines, st.Warn.Render(fmt.Sprintf("%d warnings (they do not stop the setup):", len(w.warnings))))
		for _, warn := range w.warnings {
			lines = append(lines, "  "+w.ctx.Marks.Warn+" "+warn)
		}
	}
	if id == event.SetupDone {
		lines = append(lines, w.doneLines()...)
	}
	head := layout.WrapIndented(lines, width)
	tail := layout.WrapIndented(w.tailLines(true), width)
	if w.phase == wizPlan || len(head)+len(tail) <= height {
		return append(head, tail...)
	}
	if len(tail)+min(len(head), 4) > height {
		tail = layout.WrapIndented(w.tailLines(false), width) // a small screen: the choices without their sentences, the outcome left to the panel
	}
	keep := max(1, height-len(tail)-1)
	if keep < len(head) {
		head = append(head[:keep:keep], st.Muted.Render(fmt.Sprintf("  … %d more lines", len(head)-keep)))
	}
	return append(head, tail...)
}

// tailLines are what follows the step's findings: how its last run went, then the phase's text (the
// choices, the plan, what runs). full = false leaves out what the action panel or a larger screen adds.
func (w *wizardView) tailLines(full bool) []string {
	st := &w.ctx.Styles
	var lines []string
	if w.last != "" && full {
		lines = append(lines, st.Muted.Render("last run: "+w.last))
	}
	if w.problem != "" {
		lines = append(lines, st.Bad.Render(w.problem))
	}
	if full {
		lines = append(lines, "")
	}
	switch w.phase {
	case wizDetecting:
		lines = append(lines, st.Muted.Render("checking again where the setup stands…"))
	case wizPreviewing:
		lines = append(lines, st.Muted.Render("preparing the plan (nothing is changed)…"))
	case wizRunning:
		lines = append(lines, st.Cell.Render("running — progress is in the action panel; esc twice cancels, and the panel says what was left"))
	case wizPlan:
		lines = append(lines, w.planLines()...)
	default:
		for i := range w.choices {
			lines = append(lines, w.choiceLine(i))
			if w.choices[i].about != "" && i == w.cursor && full {
				lines = append(lines, "    "+st.Muted.Render(w.choices[i].about))
			}
		}
	}
	return lines
}

// doneLines sum up what the setup found or made, a line a step, and the new node.
func (w *wizardView) doneLines() []string {
	var out []string
	for _, id := range steps.IDs()[:len(steps.All)-1] {
		if ev := w.setup.Step(id).Evidence; len(ev) > 0 {
			out = append(out, fmt.Sprintf("  %-10s %s", strings.ToLower(wizardStepNames[id])+":", ev[0]))
		}
	}
	if w.node != "" {
		out = append(out, w.ctx.Styles.Good.Render("new node "+w.node+": selected in the Nodes pane"))
	}
	return out
}

// stateLines say whether the step is done, what was found, and what stands in its way.
func (w *wizardView) stateLines(s event.SetupStep) []string {
	st := &w.ctx.Styles
	var out []string
	switch {
	case s.ID == event.SetupDone && !s.Done:
		var open []string
		for i, id := range steps.IDs()[:len(steps.All)-1] {
			if !w.setup.Step(id).Done {
				open = append(open, fmt.Sprintf("%d %s", i+1, wizardStepNames[id]))
			}
		}
		out = append(out, st.Warn.Render("reached with steps not done: "+strings.Join(open, ", ")+" (b goes back)"))
	case s.Done:
		out = append(out, st.Good.Render(w.ctx.Marks.OK+" done"))
	case s.Blocking != "":
		out = append(out, st.Bad.Render(w.ctx.Marks.Fail+" blocked: "+s.Blocking))
	default:
		out = append(out, st.Warn.Render("not done yet"))
	}
	for _, e := range s.Evidence {
		out = append(out, "  "+e)
	}
	if !s.Done && s.Hint != "" {
		out = append(out, st.Muted.Render("headless: "+s.Hint))
	}
	return out
}

func (w *wizardView) choiceLine(i int) string {
	if i >= len(w.choices) {
		return ""
	}
	if i == w.cursor {
		return w.ctx.Styles.Selected.Render(w.ctx.Marks.Cursor + " " + w.choices[i].label)
	}
	return "  " + w.choices[i].label
}

// planLines show the plan: what will happen, the YAML, the commands that do the same, then the question.
func (w *wizardView) planLines() []string {
	st, p := &w.ctx.Styles, w.plan
	out := []string{st.DetailTitle.Render("Plan: " + p.Title),
		st.Selected.Render("enter/y do it") + "   n other choices   s skip   b back   esc close"}
	for _, s := range p.Summary {
		out = append(out, "  "+w.ctx.Marks.Item+" "+s)
	}
	for _, n := range w.notes {
		out = append(out, "  "+st.Warn.Render(w.ctx.Marks.Arrow+" "+n))
	}
	for _, c := range p.Commands {
		out = append(out, st.Muted.Render("  $ ")+c)
	}
	if p.YAML != "" {
		for _, l := range strings.Split(strings.TrimRight(p.YAML, "\n"), "\n") {
			out = append(out, st.Muted.Render("  | ")+l)
		}
	}
	return out
}
