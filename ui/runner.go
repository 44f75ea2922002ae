package ui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui/view"
)

// actionEventMsg and actionQuestionMsg carry an action's reports to the root model; actionEndedMsg says
// its channel closed. All carry the run's ID so they reach the panel of that run.
type (
	actionEventMsg struct {
		ID    ActionID
		Event event.Event
	}
	actionQuestionMsg struct {
		ID       ActionID
		Question event.Question
		Reply    chan<- string
	}
	actionEndedMsg struct {
		ID  ActionID
		Err error
	}
)

// channelSink turns an action's events and questions into messages on a channel the UI drains. Emit blocks
// when the UI falls behind by a full buffer, which slows the action rather than losing its reports.
type channelSink struct {
	id  ActionID
	out chan tea.Msg
}

func (s *channelSink) Emit(e event.Event) { s.out <- actionEventMsg{ID: s.id, Event: e} }

func (s *channelSink) Ask(ctx context.Context, q event.Question) (string, error) {
	reply := make(chan string, 1)
	select {
	case s.out <- actionQuestionMsg{ID: s.id, Question: q, Reply: reply}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case a := <-reply:
		return a, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// runningAction is the root model's handle on the action in progress.
type runningAction struct {
	id     ActionID
	req    request.Request
	cancel context.CancelFunc
	msgs   chan tea.Msg
	done   bool
	finish *event.Event // the action's last Finished event (the one that says how it ended)
	// escArmed: esc was pressed once while it ran; a second esc in a row cancels it.
	escArmed bool
}

// startAction runs req off the UI goroutine and returns the command that delivers its first message.
func startAction(runner view.Runner, id ActionID, req request.Request) (*runningAction, tea.Cmd) {
	ctx, cancel := context.WithCancel(context.Background())
	ra := &runningAction{id: id, req: req, cancel: cancel, msgs: make(chan tea.Msg, 256)}
	sink := &channelSink{id: id, out: ra.msgs}
	go func() {
		err := runner.Run(ctx, req, sink)
		ra.msgs <- actionEndedMsg{ID: id, Err: err}
		close(ra.msgs)
	}()
	return ra, waitForAction(ra.msgs)
}

// waitForAction delivers the next message of a running action; the root re-arms it after each one.
func waitForAction(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		msg, ok := <-ch
		if !ok {
			return nil
		}
		return msg
	}
}

// updateFromEvent translates an action event into what the panel shows. Steps of a run over several nodes
// are named per node so they do not overwrite each other.
func updateFromEvent(e event.Event, multi bool) ActionUpdate {
	u := ActionUpdate{Step: e.Step}
	if multi {
		u.Target = e.Target
	}
	switch e.Kind {
	case event.StepStarted:
		u.State = StepRunning
		u.Line = eventLine(e, multi)
	case event.StepDone:
		u.State = StepDone
		u.Line = eventLine(e, multi)
	case event.StepFailed:
		u.State, u.Err = StepFailed, view.FailureText(e)
	case event.StepProgress:
		u.State, u.Progress, u.Total, u.Line = StepRunning, e.N, e.Of, eventLine(e, multi)
	case event.StepLog:
		u.Step, u.Line = "", eventLine(e, multi)
	case event.Finished: // for several nodes, each node's end is named, so the panel sums up every node
		u.Step, u.Finished = "", true
		who := ""
		if multi && e.Target != "" {
			who = e.Target + ": "
		}
		u.Line = fmt.Sprintf("%s%s %s", who, strings.ToUpper(string(e.Outcome)), e.Message)
		if e.Outcome != event.Succeeded {
			u.Err = who + view.FailureText(e)
		}
	}
	return u
}

// eventLine is a log line of the panel; the node is named only when the action has several (the title
// names the one node otherwise).
func eventLine(e event.Event, multi bool) string {
	if e.Message == "" {
		return ""
	}
	prefix := e.Time.Format("15:04:05") + " "
	if multi && e.Target != "" {
		prefix += e.Target + " "
	}
	return prefix + e.Message
}
