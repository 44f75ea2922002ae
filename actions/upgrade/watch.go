package upgrade

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/operator"
	"github.com/wmcon/wmcon/cluster"
)

// UpgradeWatchAction is the action name the events of upgrade run --watch carry.
const UpgradeWatchAction = "upgrade-watch"

// UpgradeWatchOptions tune WatchUpgrade.
type UpgradeWatchOptions struct {
	Interval time.Duration // between reads (default 2s)
}

// budgetReader names the PodDisruptionBudgets holding a node's drain; cluster.Ops has it.
type budgetReader interface {
	BlockingBudgets(ctx context.Context, node string) ([]cluster.Budget, error)
}

var _ budgetReader = (*cluster.Ops)(nil)

// WatchUpgrade follows the operator upgrading the nodes it owns, changing nothing: each node's turn and
// state, the steps of the node being upgraded (its Machine's phase, events, version annotation, Ready),
// and what holds it: a PodDisruptionBudget that blocks its drain, an unhealthy Machine of its MachineSet.
// It ends when every node the operator owns carries the target version, or with ctx.
func WatchUpgrade(ctx context.Context, b actions.Backends, target string, opts UpgradeWatchOptions, sink event.Sink) error {
	if opts.Interval <= 0 {
		opts.Interval = 2 * time.Second
	}
	r := event.Reporter{Sink: sink, Action: UpgradeWatchAction}
	r.Started(operator.StepWatch, "following the operator's upgrade to "+target+" (nothing is changed; ctrl+c stops watching)")
	w := &upgradeWatch{b: b, r: r, target: target, state: map[string]string{}, progress: map[string]cluster.OperatorProgress{},
		seenEvents: map[string]bool{}, budgets: map[string]string{}}
	for {
		done, err := w.once(ctx)
		if err != nil && ctx.Err() == nil {
			r.Log(operator.StepWatch, "could not read the progress: "+err.Error())
		}
		if done {
			r.Done(operator.StepWatch, "every node the operator owns is at "+target)
			r.Finish(event.Succeeded, "the operator's upgrade is complete", "")
			return nil
		}
		select {
		case <-ctx.Done():
			r.Failed(operator.StepWatch, ctx.Err(), "")
			r.Finish(event.Cancelled, "stopped watching; the operator carries on", "")
			return ctx.Err()
		case <-time.After(opts.Interval):
		}
	}
}

type upgradeWatch struct {
	b          actions.Backends
	r          event.Reporter
	target     string
	state      map[string]string // node → its last reported line
	progress   map[string]cluster.OperatorProgress
	seenEvents map[string]bool
	budgets    map[string]string // node → the budgets last reported blocking it
}

// once reads the cluster and reports what changed; done when no node the operator owns drifts.
func (w *upgradeWatch) once(ctx context.Context) (bool, error) {
	snap, err := w.b.Snapshot(ctx)
	if err != nil {
		return false, err
	}
	plan, err := planFor(ctx, w.b, snap, w.target, "")
	if err != nil {
		return false, err
	}
	op := plan.Operated()
	current := map[string]bool{}
	for _, n := range op {
		current[n.Node] = true
		info, _ := snap.Node(n.Node)
		line := fmt.Sprintf("%d. %s: %s (%s)", n.Order, n.Node, n.Reason, info.State())
		if n.Waits != "" {
			line += "; held: " + n.Waits
		}
		if w.state[n.Node] != line {
			w.state[n.Node] = line
			w.r.Log(operator.StepWatch, line)
		}
		if n.Order == 1 || info.Upgrading {
			w.follow(ctx, n.Node, info.InternalIP, info.Unschedulable)
		}
	}
	for node := range w.state {
		if !current[node] {
			delete(w.state, node)
			w.r.Log(operator.StepWatch, node+" is at "+plan.Target)
		}
	}
	return len(op) == 0, nil
}

// follow reports the steps of the node being upgraded and the budgets holding its drain.
func (w *upgradeWatch) follow(ctx context.Context, node, ip string, cordoned bool) {
	if cw := w.b.Configure; cw != nil {
		last, seen := w.progress[node]
		if p, err := cw.Cluster.OperatorProgress(ctx, ip, node); err == nil {
			for _, l := range operator.ProgressChanges(last, p, !seen, w.seenEvents) {
				w.r.Log(operator.StepWatch, node+": "+l)
			}
			w.progress[node] = p
		}
	}
	br, ok := w.b.Cluster.(budgetReader)
	if !ok || !cordoned {
		return
	}
	budgets, err := br.BlockingBudgets(ctx, node)
	if err != nil {
		return
	}
	var names []string
	for _, b := range budgets {
		names = append(names, b.String())
	}
	text := strings.Join(names, "; ")
	if text != w.budgets[node] {
		w.budgets[node] = text
		if text == "" {
			w.r.Log(operator.StepWatch, node+": no PodDisruptionBudget holds its drain any more")
		} else {
			w.r.Log(operator.StepWatch, node+": its drain is held by PodDisruptionBudget "+text)
		}
	}
}
