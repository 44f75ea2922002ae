package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/styles"
)

// drainPlanTimeout bounds the read behind a confirmation: the dialog must not wait on a slow cluster.
const drainPlanTimeout = 10 * time.Second

// drainPlanMsg is a plan read for one form (by seq, so an answer to older options is dropped).
type drainPlanMsg struct {
	form  *drainForm
	seq   int
	plans []model.DrainPlan
	err   error
}

// drainPlanState is what a confirmation knows of its drain's plan.
type drainPlanState struct {
	seq     int
	loading bool
	plans   []model.DrainPlan
	err     error
}

// loadPlan reads the plan for the form's nodes and options; nothing when the console has no reader.
func (f *drainForm) loadPlan() tea.Cmd {
	read := f.ctx.DrainPlan
	if read == nil || len(f.nodes) == 0 {
		return nil
	}
	f.plan.seq++
	f.plan.loading = true
	seq, nodes, opts := f.plan.seq, f.nodes, f.opts
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), drainPlanTimeout)
		defer cancel()
		plans, err := read(ctx, nodes, opts)
		return drainPlanMsg{form: f, seq: seq, plans: plans, err: err}
	}
}

func (f *drainForm) takePlan(msg drainPlanMsg) {
	if msg.form != f || msg.seq != f.plan.seq {
		return
	}
	f.plan = drainPlanState{seq: msg.seq, plans: msg.plans, err: msg.err}
}

// planLines describe the plan in the dialog: for one node its pods and each covering budget, for several
// a line per node; budgets that would block are marked and say what will happen.
func (f *drainForm) planLines(st *styles.Styles) []string {
	p := f.plan
	switch {
	case f.ctx.DrainPlan == nil:
		return nil
	case p.loading:
		return []string{st.Muted.Render("reading what the drain would evict…")}
	case p.err != nil:
		return []string{st.Bad.Render("could not read what the drain would evict: " + p.err.Error())}
	case len(p.plans) == 1:
		return singlePlanLines(st, p.plans[0])
	}
	lines := make([]string, 0, len(p.plans)+1)
	for i, pl := range p.plans {
		if i == maxPlanNodes {
			lines = append(lines, st.Muted.Render(fmt.Sprintf("… and %d more node(s)", len(p.plans)-i)))
			break
		}
		lines = append(lines, planSummary(st, pl))
	}
	return lines
}

// compactPlanLines are planLines for a small terminal: a line per node, at most two, then a count.
func (f *drainForm) compactPlanLines(st *styles.Styles) []string {
	p := f.plan
	if f.ctx.DrainPlan == nil || p.loading || p.err != nil {
		return f.planLines(st)
	}
	var lines []string
	for i, pl := range p.plans {
		if i == 2 {
			lines = append(lines, st.Muted.Render(fmt.Sprintf("… and %d more node(s)", len(p.plans)-i)))
			break
		}
		lines = append(lines, planSummary(st, pl))
	}
	return lines
}

// maxPlanNodes is how many nodes a batch confirmation describes before "… and N more".
const maxPlanNodes = 6

func singlePlanLines(st *styles.Styles, p model.DrainPlan) []string {
	if p.Blocker != "" {
		return []string{st.Bad.Render(p.Blocker)}
	}
	lines := []string{fmt.Sprintf("evicts %d pod(s)%s", len(p.Pods), podList(p.Pods))}
	for _, b := range p.Budgets {
		if b.Blocks() {
			lines = append(lines, st.Bad.Render("PodDisruptionBudget "+b.String()+": WOULD BLOCK — you will be asked to abort, wait or disable eviction"))
		} else {
			lines = append(lines, "PodDisruptionBudget "+b.String()+": allows it")
		}
	}
	return lines
}

func planSummary(st *styles.Styles, p model.DrainPlan) string {
	if p.Blocker != "" {
		return st.Bad.Render(p.Node + ": " + p.Blocker)
	}
	line := fmt.Sprintf("%s: %d pod(s) to evict", p.Node, len(p.Pods))
	if blocking := p.WouldBlock(); len(blocking) > 0 {
		names := make([]string, len(blocking))
		for i, b := range blocking {
			names[i] = b.Name
		}
		return st.Bad.Render(line + ", " + strings.Join(names, ", ") + " WOULD BLOCK")
	}
	return line
}

// podList is ": a, b, c" (at most five, then "…"), or "" for none.
func podList(pods []string) string {
	if len(pods) == 0 {
		return ""
	}
	if len(pods) > 5 {
		return ": " + strings.Join(pods[:5], ", ") + fmt.Sprintf(", … (%d more)", len(pods)-5)
	}
	return ": " + strings.Join(pods, ", ")
}
