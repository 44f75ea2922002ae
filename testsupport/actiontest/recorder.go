package actiontest

import (
	"context"
	"github.com/stretchr/testify/require"
	"sync"
	"testing"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
)

// Audited is sink with the records of what passes through it appended to the audit log at path, by alice,
// as the Runner's audit point writes them: for tests that call an action outside the Runner.
func Audited(sink event.Sink, path string) event.Sink {
	return &actions.Auditor{Sink: sink, Log: &actions.AuditLog{Path: path}, User: "alice"}
}

// Recorder is a Sink that keeps every event and answers questions with answer.
type Recorder struct {
	Mu        sync.Mutex
	Events    []event.Event
	Questions []event.Question
	Answer    func(event.Question) string
	OnEvent   func(event.Event) // called outside the lock
}

func (r *Recorder) Emit(e event.Event) {
	r.Mu.Lock()
	r.Events = append(r.Events, e)
	on := r.OnEvent
	r.Mu.Unlock()
	if on != nil {
		on(e)
	}
}

func (r *Recorder) Ask(ctx context.Context, q event.Question) (string, error) {
	r.Mu.Lock()
	r.Questions = append(r.Questions, q)
	answer := r.Answer
	r.Mu.Unlock()
	if answer == nil {
		return q.Choices[0].Key, nil
	}
	a := answer(q)
	if a == "" { // wait for the question to be withdrawn
		<-ctx.Done()
		return "", ctx.Err()
	}
	return a, nil
}

func (r *Recorder) All() []event.Event {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	return append([]event.Event(nil), r.Events...)
}

func (r *Recorder) Asked() []event.Question {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	return append([]event.Question(nil), r.Questions...)
}

// Of filters the events of one target and kind ("" = any).
func (r *Recorder) Of(target string, kind event.Kind) []event.Event {
	var out []event.Event
	for _, e := range r.All() {
		if (target == "" || e.Target == target) && (kind == "" || e.Kind == kind) {
			out = append(out, e)
		}
	}
	return out
}

// Final is the Finished event of target.
func (r *Recorder) Final(t *testing.T, target string) event.Event {
	t.Helper()
	f := r.Of(target, event.Finished)
	require.Len(t, f, 1, "one Finished event for %s; events:\n%s", target, r.Dump())
	return f[0]
}

// Steps lists the steps that started, in order.
func (r *Recorder) Steps(target string) []string {
	var out []string
	for _, e := range r.Of(target, event.StepStarted) {
		out = append(out, e.Step)
	}
	return out
}

func (r *Recorder) Dump() string {
	s := ""
	for _, e := range r.All() {
		s += event.Format(e) + "\n"
	}
	return s
}

// DoneOf is the message of step's StepDone event, "" when it did not finish.
func (r *Recorder) DoneOf(step string) string {
	for _, e := range r.Of("", event.StepDone) {
		if e.Step == step {
			return e.Message
		}
	}
	return ""
}
