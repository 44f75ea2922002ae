// Package nodeops cordons, uncordons and drains nodes, as oc adm does. Reboot, configure, deconfigure and
// upgrade cordon and drain through its steps, so they report them, refuse a node and leave it part-way
// (PartialError) the same way.
package nodeops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/cluster"
)

// The steps of cordoning and draining, as reboot, configure, deconfigure and upgrade report them too.
const (
	StepCordon   = "cordon"
	StepDrain    = "drain"
	StepUncordon = "uncordon"
)

// PartialError is an action that stopped part-way (failed, aborted or cancelled) and left its node in an
// intermediate state, such as cordoned. Headless commands exit with a distinct code for it.
type PartialError struct {
	Node  string
	State string // "cordoned", "cordoned, rebooting", ...
	Hint  string // how to finish by hand
	Err   error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%s: %v — %s", e.Node, e.Err, e.Hint)
}

func (e *PartialError) Unwrap() error { return e.Err }

// uncordonHint tells how to make a cordoned node schedulable again.
func UncordonHint(node string) string {
	return "node left cordoned: " + event.Run("uncordon", node)
}

// drainAgain tells how to drain the node again.
func DrainAgain(node string) string { return "drain it again: " + event.Run("drain", node) }

func init() {
	actions.Register(func(ctx context.Context, b actions.Backends, req request.Cordon, sink event.Sink) error {
		return rollout.Each(req.Nodes, func(n string) error { return Cordon(ctx, b.Cluster, n, sink) })
	})
	actions.Register(func(ctx context.Context, b actions.Backends, req request.Uncordon, sink event.Sink) error {
		return rollout.Each(req.Nodes, func(n string) error { return Uncordon(ctx, b.Cluster, n, sink) })
	})
	actions.Register(runDrain)
}

// runDrain drains the nodes as a rollout, one after another, and stops at the first that cannot be drained
// (the console and wmcon drain alike), naming the nodes it did not drain.
func runDrain(ctx context.Context, b actions.Backends, req request.Drain, sink event.Sink) error {
	s := rollout.Rollout{}.Run(ctx, req.Nodes, func(ctx context.Context, n string) error {
		return Drain(ctx, b.Cluster, n, req.Options, sink)
	})
	err := s.Failures()
	rest := s.Targets(rollout.NotStarted)
	switch {
	case err != nil && len(rest) > 0:
		err = fmt.Errorf("%w (not drained: %s)", err, strings.Join(rest, ", "))
	case err == nil:
		err = s.Err() // a cancellation before a drain started is no success either
	}
	return err
}

// Cordon marks a node unschedulable, as `oc adm cordon` does.
func Cordon(ctx context.Context, ops actions.NodeOps, node string, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: request.ActionCordon, Target: node}
	r.Started("cordon", "marking the node unschedulable")
	changed, err := ops.Cordon(ctx, node)
	if err != nil {
		r.StepFailed("cordon", err, FailHint(err, "check that you may patch nodes ('oc auth can-i patch nodes') and retry"))
		r.Finish(event.OutcomeOf(ctx), "not cordoned", "")
		return err
	}
	r.Done("cordon", map[bool]string{true: "cordoned", false: "already cordoned"}[changed])
	r.Finish(event.Succeeded, "node cordoned: no new pods will be scheduled on it", "uncordon it when done: "+event.Run("uncordon", node))
	return nil
}

// Uncordon makes a node schedulable again, as `oc adm uncordon` does.
func Uncordon(ctx context.Context, ops actions.NodeOps, node string, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: request.ActionUncordon, Target: node}
	r.Started("uncordon", "marking the node schedulable")
	changed, err := ops.Uncordon(ctx, node)
	if err != nil {
		r.StepFailed("uncordon", err, FailHint(err, "check that you may patch nodes ('oc auth can-i patch nodes') and retry"))
		r.Finish(event.OutcomeOf(ctx), "still cordoned", "")
		return err
	}
	r.Done("uncordon", map[bool]string{true: "uncordoned", false: "already schedulable"}[changed])
	r.Finish(event.Succeeded, "node schedulable", "")
	return nil
}

// Drain cordons a node and evicts its pods, as `oc adm drain` does; the node stays cordoned afterwards.
// A drain that fails or is cancelled after the cordon returns *PartialError.
func Drain(ctx context.Context, ops actions.NodeOps, node string, opts request.DrainOptions, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: request.ActionDrain, Target: node}
	if _, err := ops.Node(ctx, node); err != nil {
		r.StepFailed("cordon", err, FailHint(err, ""))
		r.Finish(event.OutcomeOf(ctx), "nothing changed", "")
		return err
	}
	if _, err := CordonStep(ctx, r, ops, node); err != nil {
		r.Finish(event.OutcomeOf(ctx), "nothing changed", "")
		return err
	}
	if err := DrainStep(ctx, r, ops, node, opts); err != nil {
		hint := UncordonHint(node)
		r.Finish(event.OutcomeOf(ctx), "drain incomplete: "+err.Error(), hint)
		return &PartialError{Node: node, State: "cordoned", Hint: hint, Err: err}
	}
	r.Finish(event.Succeeded, "node drained and cordoned", "uncordon it when done: "+event.Run("uncordon", node))
	return nil
}

// cordonStep is the "cordon" step of drain and reboot; it reports whether the node was cordoned before.
func CordonStep(ctx context.Context, r event.Reporter, ops actions.NodeOps, node string) (bool, error) {
	r.Started("cordon", "marking the node unschedulable")
	changed, err := ops.Cordon(ctx, node)
	if err != nil {
		r.StepFailed("cordon", err, FailHint(err, "nothing changed; check that you may patch nodes ('oc auth can-i patch nodes') and retry"))
		return false, err
	}
	if changed {
		r.Done("cordon", "cordoned")
	} else {
		r.Done("cordon", "already cordoned")
	}
	return !changed, nil
}

// drainStep is the "drain" step: it reports every pod and asks what to do when PodDisruptionBudgets block.
func DrainStep(ctx context.Context, r event.Reporter, ops actions.NodeOps, node string, choices request.DrainOptions) error {
	const step = "drain"
	r.Started(step, "evicting pods ("+choices.String()+")")
	opts := cluster.DrainOptions{DrainChoices: cluster.DrainChoices(choices), OnBlocked: func(ctx context.Context, b cluster.PDBBlock) (cluster.BlockDecision, error) {
		return askBlocked(ctx, r, node, b)
	}}
	var mu sync.Mutex // the drain reports from several goroutines
	total := 0
	err := ops.Drain(ctx, node, opts, func(e cluster.DrainEvent) {
		mu.Lock()
		defer mu.Unlock()
		verb := map[bool]string{true: "evicted", false: "deleted"}[e.Eviction]
		switch e.Kind {
		case cluster.DrainPlanned:
			total = e.Of
			if e.Of == 0 {
				r.Progress(step, 0, 0, "no pods to evict")
			} else {
				r.Progress(step, 0, e.Of, fmt.Sprintf("%d pods to evict: %s", e.Of, e.Message))
			}
		case cluster.DrainWarning:
			r.Log(step, "warning: "+e.Message)
		case cluster.DrainStarted:
			r.Log(step, map[bool]string{true: "evicting ", false: "deleting "}[e.Eviction]+e.Pod)
		case cluster.DrainPodGone:
			r.Progress(step, e.N, total, fmt.Sprintf("%s %s", verb, e.Pod))
		case cluster.DrainPodFailed:
			r.Log(step, fmt.Sprintf("%s: %v", e.Pod, e.Err))
		case cluster.DrainBlocked:
			r.Progress(step, 0, 0, "blocked: "+e.Message)
		case cluster.DrainUnblocked, cluster.DrainEvictionOff:
			r.Log(step, e.Message)
		}
	})
	if err != nil {
		var blocked *cluster.DrainBlockedError
		switch {
		case ctx.Err() != nil:
			r.StepFailed(step, err, UncordonHint(node)+"; or "+DrainAgain(node))
		case errors.As(err, &blocked):
			r.Log(step, "abort chosen: drain stopped; evicted: "+podList(blocked.Evicted)+"; still on the node: "+podList(blocked.Remaining))
			r.StepFailed(step, err, UncordonHint(node)+"; to drain anyway, relax the budget or delete the pods past it: "+event.Run("drain", node, "--on-pdb", event.ChoiceDisableEviction, "--yes-disable-eviction"))
		default:
			r.StepFailed(step, err, FailHint(err, UncordonHint(node)+"; fix the cause and "+DrainAgain(node)))
		}
		return err
	}
	r.Done(step, "drained")
	return nil
}

func podList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// askBlocked asks what to do about a PodDisruptionBudget block; the default is to wait.
func askBlocked(ctx context.Context, r event.Reporter, node string, b cluster.PDBBlock) (cluster.BlockDecision, error) {
	budgets := strings.Join(b.BudgetNames(), ", ")
	if budgets == "" {
		budgets = "a PodDisruptionBudget"
	}
	q := event.Question{
		Title:  fmt.Sprintf("PodDisruptionBudget %s blocks the drain of %s", budgets, node),
		Detail: nil,
		Safe:   event.ChoiceAbort, // backing out of the question must not leave the drain waiting on its own
		Choices: []event.Choice{
			{Key: event.ChoiceWait, Label: "Wait for the budget to allow it"},
			{Key: event.ChoiceAbort, Label: "Abort (the node stays cordoned)"},
			{Key: event.ChoiceDisableEviction, Label: "Delete the pods instead (disable eviction)",
				Confirm: fmt.Sprintf("Delete %s without eviction? This ignores %s and may take the application below its budget.",
					strings.Join(b.Pods, ", "), budgets)},
		},
	}
	for _, bu := range b.Budgets {
		q.Detail = append(q.Detail, fmt.Sprintf("budget %s: pods %s", bu, strings.Join(bu.Pods, ", ")))
	}
	if len(b.Budgets) == 0 {
		q.Detail = append(q.Detail, fmt.Sprintf("pods %s: %s", strings.Join(b.Pods, ", "), b.Reason))
	}
	answer, err := r.Ask(ctx, q)
	if err != nil {
		return cluster.BlockWait, err
	}
	switch answer {
	case event.ChoiceAbort: // said once the drain has stopped, with what it evicted (no eviction starts after)
		return cluster.BlockAbort, nil
	case event.ChoiceDisableEviction:
		r.Log("drain", "eviction disabled by the user: deleting "+strings.Join(b.Pods, ", "))
		return cluster.BlockDisableEviction, nil
	case event.ChoiceWait, "":
		r.Log("drain", "waiting for "+budgets+" to allow the evictions")
		return cluster.BlockWait, nil
	default:
		return cluster.BlockWait, fmt.Errorf("unknown answer %q to the PodDisruptionBudget question", answer)
	}
}

// failHint adds what to check for well-known errors to a step's own hint.
func FailHint(err error, hint string) string {
	var nf *cluster.NodeNotFoundError
	switch {
	case errors.As(err, &nf):
		return "check the node name with 'oc get nodes'"
	case errors.Is(err, context.Canceled):
		if hint == "" {
			return "cancelled"
		}
		return hint
	case errors.Is(err, context.DeadlineExceeded):
		if hint == "" {
			return "timed out"
		}
		return hint
	}
	if hint == "" {
		return "see the error above"
	}
	return hint
}

// NotWindowsError refuses to reboot a node that is not a Windows node.
type NotWindowsError struct{ Node string }

func (e *NotWindowsError) Error() string {
	return fmt.Sprintf("%s is not a Windows node: wmcon reboots Windows nodes over SSH only (cordon and drain work on any node)", e.Node)
}

// postedSince says whether a heartbeat was posted at or after t. The API server keeps times to the whole
// second (RFC 3339), so a post made in the same second as t, after it, reads as earlier than t: compare
// whole seconds. (A post from before t in that same second would pass too; the callers' t lies seconds
// after the last post of the process they wait to see replaced.)
func PostedSince(heartbeat, t time.Time) bool { return !heartbeat.Before(t.Truncate(time.Second)) }

// timeoutErr names what was waited for when the step's own timeout (not the caller's ctx) ended the wait.
func TimeoutErr(ctx context.Context, err error, timeout time.Duration, what string) error {
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %s waiting for %s: %w", timeout, what, err)
	}
	return err
}
