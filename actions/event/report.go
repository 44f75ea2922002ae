package event

import (
	"context"
	"sync"
	"time"
)

// What every action reports the same way: how a failure ended, a step that failed, the time a step took,
// the hint that shows a service's log, and one sink shared by several targets at once.

// OutcomeOf is how an action that did not succeed ended: Cancelled when its context ended (the user
// stopped it), else Failed.
func OutcomeOf(ctx context.Context) Outcome {
	if ctx.Err() != nil {
		return Cancelled
	}
	return Failed
}

// Fail reports that step failed with err and that the action failed there (with hint), and returns err:
// for an action that stops at its first failure.
func (r Reporter) Fail(step string, err error, hint string) error {
	r.Failed(step, err, hint)
	r.Finish(Failed, step+" failed", hint)
	return err
}

// StepFailed is Failed with the message "<step> failed" for the text output.
func (r Reporter) StepFailed(step string, err error, hint string) {
	r.Emit(FailedStep(step, step+" failed", err, hint))
}

// Elapsed is the time since start, rounded for a step's message ("850ms", "2.4s", "3m10s").
func Elapsed(start time.Time) string {
	d := time.Since(start)
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// RunLogs is the hint that tails service's log on node. It always names the service, so the console can
// tell which of its log keys does the same.
func RunLogs(node, service string) string { return Run("logs", node, "--service", service) }

// Locked is sink serialised for actions that run on several targets at once: one event at a time, one
// question at a time.
func Locked(sink Sink) Sink { return &lockedSink{sink: sink} }

type lockedSink struct {
	sink  Sink
	emit  sync.Mutex
	asked sync.Mutex
}

func (s *lockedSink) Emit(e Event) {
	s.emit.Lock()
	defer s.emit.Unlock()
	s.sink.Emit(e)
}

func (s *lockedSink) Ask(ctx context.Context, q Question) (string, error) {
	s.asked.Lock()
	defer s.asked.Unlock()
	return s.sink.Ask(ctx, q)
}

// Plural is one or many as n says: "1 check", "2 checks".
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// OrNone is s, or "(none)" for an empty value in a message.
func OrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
