// Package event is the vocabulary actions report in: typed Events, the Questions an action asks mid-way,
// and the Sink that receives both. It imports neither client-go nor SSH nor Bubble Tea, so the console, the
// headless printers and the actions themselves can all share it.
package event

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wmcon/wmcon/cmdline"
)

// Kind says what an Event reports.
type Kind string

const (
	StepStarted  Kind = "step-started"  // a step began
	StepProgress Kind = "step-progress" // N of Of done (pods evicted, ...), or a status message
	StepLog      Kind = "log"           // a line of detail (a pod evicted, a host reply)
	StepDone     Kind = "step-done"     // the step succeeded
	StepFailed   Kind = "step-failed"   // the step failed; Err says why, Hint what to do
	Finished     Kind = "finished"      // the action ended; Outcome says how
)

// Outcome is how an action ended.
type Outcome string

const (
	Succeeded Outcome = "succeeded"
	Failed    Outcome = "failed"
	Cancelled Outcome = "cancelled"
)

// Event is one report from a running action. Events are values: safe to keep, copy and print.
type Event struct {
	Time    time.Time `json:"time"`
	Action  string    `json:"action"`           // "reboot", "drain", ...
	Target  string    `json:"target,omitempty"` // node name
	Kind    Kind      `json:"kind"`
	Step    string    `json:"step,omitempty"` // "cordon", "drain", "restart", ...
	Message string    `json:"message,omitempty"`
	N       int       `json:"n,omitempty"`
	Of      int       `json:"of,omitempty"`
	Err     string    `json:"error,omitempty"`
	// Hint is what the user should do next, always set when a step failed or the action was cancelled
	// part-way (for example "node left cordoned: run wmcon uncordon NODE to make it schedulable again").
	// It names headless commands (see Run), never console keys.
	Hint    string  `json:"hint,omitempty"`
	Outcome Outcome `json:"outcome,omitempty"`
	// Plan is set on a PlanShown event: what a step will do (setup.go).
	Plan *Plan `json:"plan,omitempty"`
	// Setup is set on a SetupState event: where the guided setup stands (setup.go).
	Setup *Setup `json:"setup,omitempty"`
}

// Run is how a hint or a triage fix names what to do next: "run wmcon uncordon NODE". Actions speak in
// headless commands, never in console keys, so their words read right in a script, in JSON and on
// screen; the console adds its own key where one does the same thing (ui/binding.WithKeys). Each argument
// is quoted for a POSIX shell when it needs it (cmdline.Wmcon), so the command is safe to paste.
func Run(args ...string) string { return "run " + cmdline.Wmcon(args...) }

// Question is a decision an action needs from the user mid-way (a PodDisruptionBudget blocks a drain).
type Question struct {
	Action  string   `json:"action"`
	Target  string   `json:"target"`
	Title   string   `json:"title"`
	Detail  []string `json:"detail"`  // lines: the budgets and pods involved
	Choices []Choice `json:"choices"` // in display order; the first is what a headless run takes by default
	// Safe is the key of the choice that changes least, which esc (backing out) gives; "" means the first.
	Safe string `json:"safe,omitempty"`
}

// SafeChoice is the choice esc gives: Safe, or the first choice.
func (q Question) SafeChoice() Choice {
	for _, c := range q.Choices {
		if c.Key == q.Safe {
			return c
		}
	}
	return q.Choices[0]
}

// Choice is one answer to a Question.
type Choice struct {
	Key   string `json:"key"`   // "wait", "abort", "disable-eviction"
	Label string `json:"label"` // what the button says
	// Confirm, when set, is asked again before this choice is taken (dangerous choices need two yeses).
	Confirm string `json:"confirm,omitempty"`
}

// Sink receives an action's events and answers its questions. The console implements it with channels
// that the UI reads; headless commands print events and answer from flags (or abort).
type Sink interface {
	Emit(Event)
	Ask(ctx context.Context, q Question) (string, error)
}

// EmitFunc is the Sink of an action that only reports and never asks (reading logs): each event goes to
// the function.
type EmitFunc func(Event)

func (f EmitFunc) Emit(e Event) { f(e) }

func (f EmitFunc) Ask(context.Context, Question) (string, error) {
	return "", errors.New("this action asks no questions")
}

// Reporter stamps events of one action on one target and sends them to a sink.
type Reporter struct {
	Sink   Sink
	Action string
	Target string
	Now    func() time.Time
}

func (r Reporter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Emit sends e after filling in action, target and time.
func (r Reporter) Emit(e Event) {
	e.Action, e.Target, e.Time = r.Action, r.Target, r.now()
	r.Sink.Emit(e)
}

func (r Reporter) Started(step, msg string) {
	r.Emit(Event{Kind: StepStarted, Step: step, Message: msg})
}
func (r Reporter) Done(step, msg string) { r.Emit(Event{Kind: StepDone, Step: step, Message: msg}) }
func (r Reporter) Log(step, msg string)  { r.Emit(Event{Kind: StepLog, Step: step, Message: msg}) }
func (r Reporter) Progress(step string, n, of int, msg string) {
	r.Emit(Event{Kind: StepProgress, Step: step, N: n, Of: of, Message: msg})
}

// Failed reports a failed step with what to do next.
func (r Reporter) Failed(step string, err error, hint string) {
	r.Emit(FailedStep(step, "", err, hint))
}

// Interrupt is why a signal stopped an action: the command line cancels its context with it as the cause
// (context.Cause), so actions report the signal, not what a wait made of the cancellation. It is a
// cancellation (errors.Is(err, context.Canceled)).
type Interrupt struct {
	Word   string // "interrupted" (SIGINT) or "terminated" (SIGTERM)
	Signal string // "SIGINT", "SIGTERM"
}

func (e *Interrupt) Error() string        { return e.Word + " by " + e.Signal }
func (e *Interrupt) Is(target error) bool { return target == context.Canceled }

// FailedStep is the event of a step that ended with err. A step ended by cancellation (the user's ctrl+c
// or esc) says "cancelled", not "failed: context canceled"; one a signal ended names the signal.
func FailedStep(step, message string, err error, hint string) Event {
	var in *Interrupt
	if errors.As(err, &in) {
		return Event{Kind: StepFailed, Step: step, Message: step + " stopped: " + in.Error(), Outcome: Cancelled, Hint: hint}
	}
	if errors.Is(err, context.Canceled) {
		return Event{Kind: StepFailed, Step: step, Message: step + " cancelled", Outcome: Cancelled, Hint: hint}
	}
	return Event{Kind: StepFailed, Step: step, Message: message, Err: err.Error(), Hint: hint}
}

// Finish reports the end of the action.
func (r Reporter) Finish(o Outcome, msg, hint string) {
	r.Emit(Event{Kind: Finished, Outcome: o, Message: msg, Hint: hint})
}

// Ask forwards a question to the sink.
func (r Reporter) Ask(ctx context.Context, q Question) (string, error) {
	q.Action, q.Target = r.Action, r.Target
	return r.Sink.Ask(ctx, q)
}

// TextSink prints events as lines for headless commands and answers every question with its first
// (safe) choice unless an answer was given up front (for example --disable-eviction).
type TextSink struct {
	W       io.Writer
	JSON    bool              // one JSON object per line instead of text
	Answers map[string]string // question title prefix or action → choice key
}

// Emit prints one event.
func (s *TextSink) Emit(e Event) {
	if s.JSON {
		b, _ := json.Marshal(e)
		fmt.Fprintln(s.W, string(b))
		return
	}
	fmt.Fprintln(s.W, Format(e))
}

// Ask answers from Answers (by action name) or takes the first choice, and says so.
func (s *TextSink) Ask(_ context.Context, q Question) (string, error) {
	answer := q.Choices[0].Key
	if a, ok := s.Answers[q.Action]; ok {
		answer = a
	}
	if !s.JSON {
		fmt.Fprintf(s.W, "? %s: %s\n", q.Target, q.Title)
		for _, d := range q.Detail {
			fmt.Fprintf(s.W, "    %s\n", d)
		}
		fmt.Fprintf(s.W, "  → %s\n", answer)
	}
	return answer, nil
}

// Format renders an event as one line of text.
func Format(e Event) string {
	var b strings.Builder
	b.WriteString(e.Time.Format("15:04:05"))
	if e.Target != "" {
		b.WriteString(" " + e.Target)
	}
	if e.Step != "" {
		b.WriteString(" [" + e.Step + "]")
	}
	switch e.Kind {
	case StepStarted:
		b.WriteString(" … ")
	case StepDone:
		b.WriteString(" ✓ ")
	case StepFailed:
		b.WriteString(" ✗ ")
	case StepProgress:
		if e.Of > 0 {
			fmt.Fprintf(&b, " %d/%d ", e.N, e.Of)
		} else {
			b.WriteString(" ")
		}
	case Finished:
		b.WriteString(" " + strings.ToUpper(string(e.Outcome)) + " ")
	case PlanShown, SetupState:
		b.WriteString(" ")
	default:
		b.WriteString("   ")
	}
	b.WriteString(e.Message)
	if e.Err != "" {
		b.WriteString(": " + e.Err)
	}
	if e.Hint != "" {
		b.WriteString(" — " + e.Hint)
	}
	if e.Plan != nil {
		b.WriteString(formatPlan(*e.Plan))
	}
	if e.Setup != nil {
		b.WriteString(formatSetup(*e.Setup))
	}
	return strings.TrimRight(b.String(), " ")
}
