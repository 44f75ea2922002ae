// Package rollout runs one operation over many targets (nodes, hosts) the way a careful operator would: at
// most N in progress at once, in the order given, and either stopping after the first failure or carrying
// on and reporting every target. Reboots, drains, mirror applies, proxy syncs, configures and upgrades of
// many nodes share it, so they agree on one policy and each target's final state is always accounted for.
//
// The operation itself reports its own steps (through an event.Sink, as every action does); rollout only
// decides when each target starts, tells the caller about targets it never started, and sums up.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Rollout is the policy of one run over many targets. The zero value runs one target at a time and stops
// after the first failure, which is the safe default for anything that takes a node out of service.
type Rollout struct {
	// MaxUnavailable is how many targets may be in progress at once; below 1 means 1.
	MaxUnavailable int
	// ContinueOnFailure keeps starting targets after one has failed, so every target is tried and
	// reported. Without it no target starts after a failure (targets already running finish).
	ContinueOnFailure bool
	// NotStarted is told about each target that was never started and why ("cancelled", or the Failed
	// text of the failure that stopped the run); it reports that target's final state. Nil says nothing.
	NotStarted func(target, why string)
	// Failed says why a failure stops the run, for NotStarted ("the reboot of n failed"); nil gives
	// "<target> failed".
	Failed func(target string) string
}

// State is how one target ended.
type State string

const (
	Succeeded  State = "succeeded"
	Failed     State = "failed"      // the operation returned an error
	Cancelled  State = "cancelled"   // the operation returned an error after ctx ended
	NotStarted State = "not-started" // never started: cancelled before its turn, or after a failure
)

// Result is one target's final state.
type Result struct {
	Target string
	State  State
	Err    error  // Failed and Cancelled: what the operation returned
	Why    string // NotStarted: why it was not started
}

// Summary is the final state of every target, in the order they were given.
type Summary struct {
	Results []Result
	ctxErr  error // ctx's error, if it ended with targets not started
}

// Run runs op for each target under the policy and returns when every started op has returned. op gets
// ctx as is: cancelling it stops the ops in progress (each reports how it left its target) and starts no
// more. A failure is known before the next target starts, so with MaxUnavailable 1 nothing follows it.
func (r Rollout) Run(ctx context.Context, targets []string, op func(ctx context.Context, target string) error) Summary {
	limit := max(r.MaxUnavailable, 1)
	results := make([]Result, len(targets))
	slots := make(chan struct{}, limit)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		stopped string // why no further target starts
	)
	for i, t := range targets {
		acquired := false
		select {
		case slots <- struct{}{}: // a failure frees its slot only after it is recorded
			acquired = true
		case <-ctx.Done():
		}
		mu.Lock()
		if stopped == "" && ctx.Err() != nil {
			stopped = "cancelled"
		}
		why := stopped
		mu.Unlock()
		if why != "" {
			if acquired {
				<-slots
			}
			results[i] = Result{Target: t, State: NotStarted, Why: why}
			if r.NotStarted != nil {
				r.NotStarted(t, why)
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := op(ctx, t)
			res := Result{Target: t, State: Succeeded, Err: err}
			if err != nil {
				res.State = Failed
				if ctx.Err() != nil {
					res.State = Cancelled
				}
			}
			mu.Lock()
			results[i] = res
			switch {
			case stopped != "":
			case res.State == Cancelled: // said as such, even when the loop sees it first
				stopped = "cancelled"
			case res.State == Failed && !r.ContinueOnFailure:
				stopped = r.failed(t)
			}
			mu.Unlock()
			<-slots // after recording the failure, so the loop sees it before starting the next target
		}()
	}
	wg.Wait()
	sum := Summary{Results: results}
	if slices.ContainsFunc(results, func(r Result) bool { return r.State == NotStarted }) {
		sum.ctxErr = ctx.Err()
	}
	return sum
}

func (r Rollout) failed(target string) string {
	if r.Failed != nil {
		return r.Failed(target)
	}
	return target + " failed"
}

// Failures joins the errors of the targets that failed or were cancelled part-way, in target order; nil
// when none did.
func (s Summary) Failures() error {
	var errs []error
	for _, r := range s.Results {
		errs = append(errs, r.Err)
	}
	return errors.Join(errs...)
}

// Err is Failures and, when ctx ended with targets not started, a *NotStartedError naming them: a run
// cut short is no success even when nothing failed. It is nil only when every target succeeded, or when
// a failure kept the rest from starting.
func (s Summary) Err() error {
	err := s.Failures()
	if rest := s.Targets(NotStarted); len(rest) > 0 && s.ctxErr != nil {
		err = errors.Join(err, &NotStartedError{Targets: rest, Err: s.ctxErr})
	}
	return err
}

// NotStartedError names the targets a cancellation kept from starting; nothing changed on them. It wraps
// ctx's error.
type NotStartedError struct {
	Targets []string
	Err     error
}

func (e *NotStartedError) Error() string {
	return fmt.Sprintf("not started (cancelled before their turn, nothing changed on them): %s", strings.Join(e.Targets, ", "))
}

func (e *NotStartedError) Unwrap() error { return e.Err }

// Targets lists the targets that ended in state st, in order.
func (s Summary) Targets(st State) []string {
	var out []string
	for _, r := range s.Results {
		if r.State == st {
			out = append(out, r.Target)
		}
	}
	return out
}

// String sums the run up in one line, naming the targets that did not succeed:
// "1 succeeded; 1 failed: b; 1 not started (the reboot of b failed): c".
func (s Summary) String() string {
	var parts []string
	for _, st := range []State{Succeeded, Failed, Cancelled, NotStarted} {
		names := s.Targets(st)
		if len(names) == 0 {
			continue
		}
		label := strings.ReplaceAll(string(st), "-", " ")
		if st == Succeeded {
			parts = append(parts, fmt.Sprintf("%d %s", len(names), label))
			continue
		}
		if st == NotStarted {
			label += " (" + s.whyNotStarted() + ")"
		}
		parts = append(parts, fmt.Sprintf("%d %s: %s", len(names), label, strings.Join(names, ", ")))
	}
	if len(parts) == 0 {
		return "no targets"
	}
	return strings.Join(parts, "; ")
}

// whyNotStarted is the reasons targets were not started, each once.
func (s Summary) whyNotStarted() string {
	var whys []string
	for _, r := range s.Results {
		if r.State == NotStarted && !slices.Contains(whys, r.Why) {
			whys = append(whys, r.Why)
		}
	}
	return strings.Join(whys, "; ")
}
