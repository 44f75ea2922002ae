package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions"
)

// ActionRequest is what the console asks the runner to do; the runner (in cli) maps it onto the actions
// package, so the console never builds cluster or SSH clients itself.
type ActionRequest struct {
	Kind           string // "reboot", "drain", "cordon", "uncordon", "restart-service"
	Nodes          []string
	Service        string // for restart-service
	Drain          DrainChoices
	MaxUnavailable int
}

// DrainChoices are the drain options of the confirmation dialog; the defaults are the documented reboot
// procedure (--ignore-daemonsets --delete-emptydir-data --force, evicting).
type DrainChoices struct {
	GracePeriodSeconds int // -1: each pod's own
	Timeout            time.Duration
	IgnoreDaemonSets   bool
	DeleteEmptyDirData bool
	Force              bool
	DisableEviction    bool
}

// DefaultDrainChoices are the documented procedure's options.
func DefaultDrainChoices() DrainChoices {
	return DrainChoices{GracePeriodSeconds: -1, Timeout: 10 * time.Minute, IgnoreDaemonSets: true, DeleteEmptyDirData: true, Force: true}
}

// Runner starts actions. Run blocks until the action ends; it reports through sink.
type Runner interface {
	Run(ctx context.Context, req ActionRequest, sink actions.Sink) error
}

// actionEventMsg and actionQuestionMsg carry an action's reports to the root model; actionEndedMsg says
// its channel closed. All carry the run's ID so they reach the panel of that run.
type (
	actionEventMsg struct {
		ID    ActionID
		Event actions.Event
	}
	actionQuestionMsg struct {
		ID       ActionID
		Question actions.Question
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

func (s *channelSink) Emit(e actions.Event) { s.out <- actionEventMsg{ID: s.id, Event: e} }

func (s *channelSink) Ask(ctx context.Context, q actions.Question) (string, error) {
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
	req    ActionRequest
	cancel context.CancelFunc
	msgs   chan tea.Msg
	done   bool
}

// startAction runs req off the UI goroutine and returns the command that delivers its first message.
func startAction(runner Runner, id ActionID, req ActionRequest) (*runningAction, tea.Cmd) {
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
func updateFromEvent(e actions.Event, multi bool) ActionUpdate {
	step := e.Step
	if multi && step != "" && e.Target != "" {
		step = e.Target + ": " + step
	}
	u := ActionUpdate{Step: step}
	switch e.Kind {
	case actions.StepStarted:
		u.State = StepRunning
		u.Line = eventLine(e)
	case actions.StepDone:
		u.State = StepDone
		u.Line = eventLine(e)
	case actions.StepFailed:
		u.State, u.Err = StepFailed, failureText(e)
	case actions.StepProgress:
		u.State, u.Progress, u.Total, u.Line = StepRunning, e.N, e.Of, eventLine(e)
	case actions.StepLog:
		u.Step, u.Line = "", eventLine(e)
	case actions.Finished:
		u.Step, u.Finished = "", true
		u.Line = fmt.Sprintf("%s %s", strings.ToUpper(string(e.Outcome)), e.Message)
		if e.Outcome != actions.Succeeded {
			u.Err = failureText(e)
		}
	}
	return u
}

func eventLine(e actions.Event) string {
	if e.Message == "" {
		return ""
	}
	prefix := e.Time.Format("15:04:05") + " "
	if e.Target != "" {
		prefix += e.Target + " "
	}
	return prefix + e.Message
}

func failureText(e actions.Event) string {
	parts := []string{}
	for _, s := range []string{e.Message, e.Err} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	text := strings.Join(parts, ": ")
	if e.Hint != "" {
		text += " — " + e.Hint
	}
	return text
}
