package wizard

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui/view"
)

// The wizard reads on its own, off the action panel: the setup's detection and each step's preview change
// nothing and ask nothing, so it runs them through the Runner itself and keeps only what they report.
// What changes something goes to the root as a view.RunAction, so it shows in the action panel like every
// other action (its questions as dialogs, esc twice cancels it) and is audited by the Runner.

// readResult is what one read reported: its plan or setup state, and why it failed when it did.
type readResult struct {
	plan   *event.Plan
	setup  *event.Setup
	failed string // the failure as a sentence (message, error and hint); "" when it succeeded
	lines  []string
}

// runRead runs a request that changes nothing and sums up its events.
func runRead(ctx context.Context, runner view.Runner, req request.Request) readResult {
	events, err := view.RunRead(ctx, runner, req)
	var res readResult
	for _, e := range events {
		switch {
		case e.Plan != nil:
			p := *e.Plan
			res.plan = &p
		case e.Setup != nil:
			s := *e.Setup
			res.setup = &s
		case e.Kind == event.StepFailed || (e.Kind == event.Finished && e.Outcome != event.Succeeded):
			if res.failed == "" {
				res.failed = view.FailureText(e)
			}
		case e.Message != "" && e.Kind != event.Finished:
			res.lines = append(res.lines, e.Message)
		}
	}
	if err != nil && res.failed == "" {
		res.failed = err.Error()
	}
	return res
}

// wizardDetectedMsg carries a detection; wizardPreviewMsg the previews of a step; both name the wizard and
// the read they answer, so a stale answer (the wizard moved on) is dropped.
type (
	wizardDetectedMsg struct {
		owner    *wizardView
		seq      uint64
		res      readResult
		warnings []string // the doctor's warnings, for the Check step
	}
	wizardPreviewMsg struct {
		owner *wizardView
		seq   uint64
		main  readResult // the preview of the request confirm runs
		extra []string   // what the other reads found (SSH reachability of a BYOH host)
		ok    bool       // the main preview succeeded: the step can be confirmed
	}
	// wizardFormMsg is the answer of a form the wizard opened (its values built into a request).
	wizardFormMsg struct {
		owner *wizardView
		req   request.Request
		ok    bool
	}
)

// detect reads where the setup stands, and the doctor's warnings when the console has the doctor.
func (w *wizardView) detect() tea.Cmd {
	w.seq++
	seq, runner, standalone, doctor, ctx := w.seq, w.ctx.Runner, w.standalone, w.ctx.Doctor, w.runCtx
	return func() tea.Msg {
		msg := wizardDetectedMsg{owner: w, seq: seq, res: runRead(ctx, runner, request.SetupDetect{Standalone: standalone})}
		if doctor != nil {
			if rep, err := doctor(ctx); err == nil {
				for _, c := range rep.Checks {
					if c.Status == diagnosis.CheckWarn {
						msg.warnings = append(msg.warnings, c.Title+": "+c.Detail+orEmptyText(" — ", c.Fix))
					}
				}
			}
		}
		return msg
	}
}

// preview runs the preview of main (and the extra reads) and answers with a wizardPreviewMsg.
func (w *wizardView) preview(main request.Request, extra ...probe) tea.Cmd {
	w.seq++
	seq, runner, ctx := w.seq, w.ctx.Runner, w.runCtx
	return func() tea.Msg {
		msg := wizardPreviewMsg{owner: w, seq: seq, main: runRead(ctx, runner, main)}
		msg.ok = msg.main.failed == ""
		for _, p := range extra {
			msg.extra = append(msg.extra, p.describe(runRead(ctx, runner, p.req)))
		}
		return msg
	}
}

// probe is a read whose result is told in a sentence (the SSH reachability of a BYOH host).
type probe struct {
	req      request.Request
	describe func(readResult) string
}

func orEmptyText(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
