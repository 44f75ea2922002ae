package upgrade

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/nodeops"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/remote"
)

// Steps of a node's upgrade beyond the configuration's own (cordon, drain, then configure's steps, whose
// ready step waits for a heartbeat of the restarted kubelet and whose last records the version).
const (
	StepPlan  = "plan"
	StepCheck = "check"
)

func init() { actions.Register(runUpgrade) }

// ReadUpgradePlan reads the cluster (the snapshot, each drifting node's owner as configure decides it) and
// plans the upgrade to the installed operator's version or, without an operator, to the payload's (dir,
// image, or the default payload). It returns the payload when it had to load it.
func ReadUpgradePlan(ctx context.Context, b actions.Backends, dir, image string) (UpgradePlan, *payload.Payload, error) {
	cb := b.Configure
	if cb == nil || b.Snapshot == nil {
		return UpgradePlan{}, nil, errors.New("upgrades are not available here")
	}
	snap, err := b.Snapshot(ctx)
	if err != nil {
		return UpgradePlan{}, nil, err
	}
	target, source := snap.Cluster.WMCOVersion, "the installed operator's version"
	var p *payload.Payload
	if target == "" {
		if p, err = cb.Payload(ctx, dir, image); err != nil {
			return UpgradePlan{}, nil, fmt.Errorf("no operator is installed, so the target is the payload's version: %w", err)
		}
		target, source = configure.StandaloneVersion(p), "no operator installed: the version of payload "+p.Source
	}
	plan, err := planFor(ctx, b, snap, target, source)
	return plan, p, err
}

// planFor plans the upgrade of the snapshot's nodes to target.
func planFor(ctx context.Context, b actions.Backends, snap *model.Snapshot, target, source string) (UpgradePlan, error) {
	in := UpgradeInput{Snapshot: snap, Target: target, TargetSource: source, Owners: map[string]string{}}
	for _, n := range snap.WindowsNodes() {
		if n.WMCOVersion == "" || cluster.SameOperatorVersion(n.WMCOVersion, target) {
			continue
		}
		owner, err := b.Configure.Cluster.WMCOOwner(ctx, n.InternalIP, n.Name)
		if err != nil {
			return UpgradePlan{}, fmt.Errorf("who owns %s: %w", n.Name, err)
		}
		in.Owners[n.Name] = owner
	}
	return PlanUpgrade(in), nil
}

// runUpgrade plans, then upgrades the standalone nodes (audited) or, with Watch, follows the operator.
func runUpgrade(ctx context.Context, b actions.Backends, req request.Upgrade, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: request.ActionUpgrade}
	fail := func(err error, hint string) error {
		r.Failed(StepPlan, err, hint)
		return err
	}
	cb := b.Configure
	switch {
	case cb == nil || b.Snapshot == nil:
		return fail(errors.New("upgrades are not available here"), "")
	case cb.ReadOnly && !req.Watch:
		return fail(errors.New("--read-only is set: refusing to upgrade nodes (wmcon upgrade plan shows what would change; --watch follows the operator)"), "")
	case req.MaxUnavailable < 0:
		return fail(fmt.Errorf("--max-unavailable %d: at least one node must be allowed to be upgrading", req.MaxUnavailable), "")
	}
	r.Started(StepPlan, "reading the nodes' versions and the target")
	plan, p, err := ReadUpgradePlan(ctx, b, req.PayloadDir, req.PayloadImage)
	if err != nil {
		return fail(err, "give a payload with --payload DIR or --payload-image REF")
	}
	for _, l := range strings.Split(strings.TrimRight(plan.Text(), "\n"), "\n") {
		r.Log(StepPlan, l)
	}
	if req.Watch {
		r.Done(StepPlan, nodesWord(len(plan.Operated()))+" for the operator to upgrade")
		return WatchUpgrade(ctx, b, plan.Target, UpgradeWatchOptions{}, sink)
	}
	todo, current, err := selectStandalone(plan, req.Nodes)
	if err != nil {
		return fail(err, "wmcon upgrade plan lists the nodes and who upgrades each")
	}
	if len(current) > 0 {
		r.Log(StepPlan, strings.Join(current, ", ")+" at the target version "+plan.Target+" already: nothing to do there")
	}
	if len(todo) == 0 {
		msg := "no standalone node to upgrade"
		if len(current) > 0 {
			msg = "nothing to do: " + strings.Join(current, ", ") + " at " + plan.Target + " already"
		}
		op := plan.Operated()
		if len(op) > 0 {
			msg += "; the operator upgrades " + nodesWord(len(op)) + " itself: follow it with wmcon upgrade run --watch"
		}
		r.Done(StepPlan, msg)
		if req.Confirm && len(op) > 0 && offerFollow(ctx, r, len(op)) {
			return WatchUpgrade(ctx, b, plan.Target, UpgradeWatchOptions{}, sink)
		}
		return nil
	}
	r.Done(StepPlan, fmt.Sprintf("%s to upgrade to %s, %d at a time", nodesWord(len(todo)), plan.Target, max(req.MaxUnavailable, 1)))
	if req.Confirm {
		if err := confirmUpgrade(ctx, r, plan, todo); err != nil {
			return err
		}
	}
	if p == nil {
		if p, err = cb.Payload(ctx, req.PayloadDir, req.PayloadImage); err != nil {
			return fail(err, "give a complete payload with --payload DIR or --payload-image REF; nothing was changed")
		}
	}
	nf, err := cb.Cluster.ReadNodeFacts(ctx, cluster.NodeFactsOptions{Version: plan.Target})
	if err != nil {
		return fail(err, "fix what is named above in the cluster; nothing was changed")
	}
	u := &upgrader{b: b, req: req, target: plan.Target, facts: nf, payload: p, locks: map[string]*sync.Mutex{}}
	if cb.PubKeyHash != nil {
		u.pubKeyHash = cb.PubKeyHash(ctx)
	}
	r.Log(StepPlan, "target "+plan.Target+" from payload "+p.Source)
	return u.run(ctx, todo, event.Locked(sink)) // the Runner audits each node's upgrade
}

// selectStandalone is the plan's standalone nodes, or those of them named (each named node must be one);
// current lists the named nodes at the target already (nothing to do there is not an error).
func selectStandalone(plan UpgradePlan, names []string) (todo []UpgradeNode, current []string, err error) {
	all := plan.Standalone()
	if len(names) == 0 {
		return all, nil, nil
	}
	for _, name := range names {
		i := slices.IndexFunc(all, func(n UpgradeNode) bool { return n.Node == name })
		switch {
		case i >= 0:
			todo = append(todo, all[i])
		case slices.Contains(plan.UpToDate, name):
			current = append(current, name)
		case slices.ContainsFunc(plan.Operated(), func(n UpgradeNode) bool { return n.Node == name }):
			return nil, nil, fmt.Errorf("the operator owns %s and upgrades it itself: follow it with wmcon upgrade run --watch", name)
		default:
			return nil, nil, fmt.Errorf("%s is not a configured Windows node that needs an upgrade", name)
		}
	}
	slices.SortStableFunc(todo, func(a, b UpgradeNode) int { return a.Order - b.Order })
	return todo, current, nil
}

func confirmUpgrade(ctx context.Context, r event.Reporter, plan UpgradePlan, todo []UpgradeNode) error {
	q := event.Question{Title: fmt.Sprintf("Upgrade %s to %s?", nodesWord(len(todo)), plan.Target),
		Choices: []event.Choice{{Key: event.ChoiceCancel, Label: "Cancel (change nothing)"}, {Key: event.ChoiceUpgrade, Label: "Upgrade, one node at a time"}}}
	for _, n := range todo {
		line := fmt.Sprintf("%d. %s  %s", n.Order, n.Node, n.Reason)
		if n.Waits != "" {
			line += " — waits: " + n.Waits
		}
		q.Detail = append(q.Detail, line)
	}
	answer, err := r.Ask(ctx, q)
	if err != nil {
		return err
	}
	if answer != event.ChoiceUpgrade {
		r.Log(StepPlan, "not upgraded: nothing was changed")
		return configure.ErrNotConfirmed
	}
	return nil
}

// offerFollow asks, when only the operator has nodes to upgrade, whether to follow it here (the console's
// way to wmcon upgrade run --watch); following changes nothing.
func offerFollow(ctx context.Context, r event.Reporter, operated int) bool {
	answer, err := r.Ask(ctx, event.Question{
		Title:   fmt.Sprintf("The operator upgrades %s itself. Follow it here?", nodesWord(operated)),
		Detail:  []string{"which node it is upgrading, its steps, and what holds it (a PodDisruptionBudget, an unhealthy MachineSet); esc stops following"},
		Choices: []event.Choice{{Key: event.ChoiceCancel, Label: "Close"}, {Key: event.ChoiceFollow, Label: "Follow the operator"}},
		Safe:    event.ChoiceCancel,
	})
	return err == nil && answer == event.ChoiceFollow
}

// upgrader runs the standalone nodes' upgrades.
type upgrader struct {
	b          actions.Backends
	req        request.Upgrade
	target     string
	facts      cluster.NodeFacts
	payload    *payload.Payload
	pubKeyHash string

	mu    sync.Mutex
	locks map[string]*sync.Mutex // per MachineSet: never two of its Machines out at once
}

func (u *upgrader) run(ctx context.Context, todo []UpgradeNode, sink event.Sink) error {
	names := make([]string, len(todo))
	for i, n := range todo {
		names[i] = n.Node
	}
	ro := rollout.Rollout{MaxUnavailable: u.req.MaxUnavailable,
		Failed: func(node string) string { return "the upgrade of " + node + " did not finish" },
		NotStarted: func(node, why string) {
			r := event.Reporter{Sink: sink, Action: request.ActionUpgrade, Target: node}
			r.Finish(event.Cancelled, "not upgraded: "+why, "nothing changed on this node; "+event.Run("upgrade", "run", node))
		}}
	sum := ro.Run(ctx, names, func(ctx context.Context, node string) error { return u.node(ctx, node, sink) })
	r := event.Reporter{Sink: sink, Action: request.ActionUpgrade}
	r.Log(StepPlan, "upgrade: "+sum.String())
	if err := sum.Err(); err != nil {
		return err
	}
	if rest := sum.Targets(rollout.NotStarted); len(rest) > 0 {
		return fmt.Errorf("not upgraded: %s", strings.Join(rest, ", "))
	}
	return nil
}

func (u *upgrader) lock(machineSet string) func() {
	if machineSet == "" {
		return func() {}
	}
	u.mu.Lock()
	l := u.locks[machineSet]
	if l == nil {
		l = &sync.Mutex{}
		u.locks[machineSet] = l
	}
	u.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// nodeUpgrade is one node's upgrade in progress.
type nodeUpgrade struct {
	*upgrader
	node     string
	r        event.Reporter
	start    time.Time
	cordoned bool // by this upgrade
	step     string
}

// atTarget reads the node from the API server: the plan came from the watcher's snapshot, which can trail
// the cluster by a moment, and a node an upgrade that just ended brought to the target must not be drained
// and reconfigured again.
func (x *nodeUpgrade) atTarget(ctx context.Context) bool {
	if x.b.Cluster == nil {
		return false
	}
	cur, err := x.b.Cluster.Node(ctx, x.node)
	return err == nil && cur.WMCOVersion != "" && cluster.SameOperatorVersion(cur.WMCOVersion, x.target)
}

// stop ends a node's upgrade after a failed step, saying what state it is left in and how to finish.
func (x *nodeUpgrade) stop(ctx context.Context, step string, err error, state, hint string) error {
	if step != "" {
		x.r.StepFailed(step, err, hint)
	}
	msg := fmt.Sprintf("upgrade of %s stopped at %s after %s", x.node, x.step, event.Elapsed(x.start))
	if state == "" {
		msg += "; nothing changed"
	} else {
		msg += "; node left " + state
	}
	x.r.Emit(event.Event{Kind: event.Finished, Outcome: event.OutcomeOf(ctx), Message: msg, Err: err.Error(), Hint: hint})
	if state == "" {
		return err
	}
	return &nodeops.PartialError{Node: x.node, State: state, Hint: hint, Err: err}
}

// node upgrades one standalone node: check it may go, cordon, drain, stop its services, reconfigure it
// with the new payload through the configuration engine (which waits for a Ready heartbeat of the new
// kubelet, uncordons, and records the target version last), remove the upgrading label.
func (u *upgrader) node(ctx context.Context, name string, sink event.Sink) error {
	x := &nodeUpgrade{upgrader: u, node: name, r: event.Reporter{Sink: sink, Action: request.ActionUpgrade, Target: name}, start: time.Now()}
	snap, err := u.b.Snapshot(ctx)
	if err != nil {
		x.step = StepCheck
		return x.stop(ctx, StepCheck, err, "", "check access to the cluster")
	}
	info, ok := snap.Node(name)
	if !ok {
		x.step = StepCheck
		return x.stop(ctx, StepCheck, fmt.Errorf("node %s is gone", name), "", "")
	}
	ms, _ := MachineSetOf(snap, info)
	unlock := u.lock(ms)
	defer unlock()
	return x.run(ctx)
}

func (x *nodeUpgrade) run(ctx context.Context) error {
	r := x.r
	x.step = StepCheck
	r.Started(StepCheck, "checking the node may go out of service")
	snap, err := x.b.Snapshot(ctx) // fresh: another node of its MachineSet may just have come back
	if err != nil {
		return x.stop(ctx, StepCheck, err, "", "check access to the cluster")
	}
	info, ok := snap.Node(x.node)
	if !ok {
		return x.stop(ctx, StepCheck, fmt.Errorf("node %s is gone", x.node), "", "")
	}
	if x.atTarget(ctx) {
		r.Done(StepCheck, "already at "+x.target+": nothing to do")
		r.Finish(event.Succeeded, x.node+" is at "+x.target+" already; it was not taken out of service", "")
		return nil
	}
	if snap, err = x.waitNotLastHealthy(ctx, snap); err != nil {
		return x.stop(ctx, StepCheck, err, "", "upgrade it once another Machine of its MachineSet is Ready and schedulable: "+event.Run("upgrade", "run", x.node))
	}
	if x.b.Hosts == nil {
		return x.stop(ctx, StepCheck, errors.New("no SSH access to Windows hosts is configured"), "", "give wmcon an SSH key")
	}
	h, err := x.b.Hosts.Host(ctx, info)
	if err != nil {
		return x.stop(ctx, StepCheck, err, "", "check SSH access to the host ("+event.Run("triage", x.node)+")")
	}
	hn, err := h.Hostname(ctx)
	if err != nil {
		return x.stop(ctx, StepCheck, fmt.Errorf("reach %s: %w", x.node, err), "", "check SSH access to the host ("+event.Run("triage", x.node)+")")
	}
	r.Done(StepCheck, fmt.Sprintf("%s (%s): version %s → %s", x.node, info.State(), info.WMCOVersion, x.target))

	x.step = nodeops.StepCordon
	if err := x.b.Configure.Cluster.SetUpgrading(ctx, x.node, true); err != nil {
		return x.stop(ctx, nodeops.StepCordon, err, "", "check that you may patch nodes")
	}
	wasCordoned, err := nodeops.CordonStep(ctx, r, x.b.Cluster, x.node)
	if err != nil {
		return x.stop(ctx, "", err, "labelled upgrading", "check that you may patch nodes, then "+event.Run("upgrade", "run", x.node)+" again")
	}
	// A node cordoned by an upgrade that stopped carries the upgrading label: resuming, the cordon is ours.
	x.cordoned = !wasCordoned || info.Upgrading
	x.step = nodeops.StepDrain
	if err := nodeops.DrainStep(ctx, r, x.b.Cluster, x.node, x.req.Drain); err != nil {
		return x.stop(ctx, "", err, "cordoned", x.finishHint())
	}
	x.step = configure.StepServicesDown
	if err := x.stopServices(ctx, h); err != nil {
		return x.stop(ctx, configure.StepServicesDown, err, "cordoned and drained, some services stopped", x.resumeHint())
	}
	x.step = "configure"
	res, err := x.configure(ctx, h, info, hn)
	if err != nil {
		state := "cordoned and drained, configuration incomplete"
		if res.Uncordoned {
			state = "reconfigured, Ready and schedulable, its version not recorded"
		}
		return x.stop(ctx, "", err, state, x.resumeHint())
	}
	if !x.cordoned {
		r.Log(nodeops.StepUncordon, "the node was cordoned before the upgrade: it stays cordoned")
	}
	if err := x.b.Configure.Cluster.SetUpgrading(ctx, x.node, false); err != nil {
		return x.stop(ctx, nodeops.StepUncordon, err, "upgraded, Ready and schedulable, still labelled upgrading", "remove the label: oc label node "+cmdline.Quote(x.node)+" "+config.UpgradingLabel+"-")
	}
	r.Finish(event.Succeeded, fmt.Sprintf("upgraded to %s in %s", x.target, event.Elapsed(x.start)), "")
	return nil
}

// lastHealthyWait is how long a node that is the last healthy Machine of its MachineSet waits for another
// to be healthy (the one upgraded before it coming back, as the snapshot catches up) before it is skipped.
var lastHealthyWait = time.Minute

// waitNotLastHealthy waits while taking the node would leave its MachineSet without a healthy Machine.
func (x *nodeUpgrade) waitNotLastHealthy(ctx context.Context, snap *model.Snapshot) (*model.Snapshot, error) {
	ms := LastHealthyMachine(snap, x.node)
	if ms == "" {
		return snap, nil
	}
	x.r.Progress(StepCheck, 0, 0, "last healthy Machine of MachineSet "+ms+": waits for another of its Machines to be healthy")
	deadline := time.Now().Add(lastHealthyWait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return snap, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		var err error
		if snap, err = x.b.Snapshot(ctx); err != nil {
			return snap, err
		}
		if LastHealthyMachine(snap, x.node) == "" {
			return snap, nil
		}
	}
	return snap, fmt.Errorf("%s is the last healthy Machine of MachineSet %s: not taken out of service (waited %s)", x.node, ms, lastHealthyWait)
}

func (x *nodeUpgrade) finishHint() string {
	if x.cordoned {
		return nodeops.UncordonHint(x.node) + "; or " + event.Run("upgrade", "run", x.node) + " again"
	}
	return event.Run("upgrade", "run", x.node) + " again"
}

func (x *nodeUpgrade) resumeHint() string {
	h := event.Run("upgrade", "run", x.node) + " again to resume (it skips what is done, then uncordons)"
	if x.cordoned {
		h = "node left cordoned: " + h + "; uncordon it by hand only once it is Ready (" + cmdline.Wmcon("uncordon", x.node) + ")"
	}
	return h
}

// stopServices stops WMCO's services on the drained host, dependents first, so the payload's binaries can
// be replaced (Windows refuses to replace a running executable) and every service starts from the new
// ones. The configuration then finds the kubelet stopped, so it waits for a Ready heartbeat of the new one.
func (x *nodeUpgrade) stopServices(ctx context.Context, h remote.Host) error {
	x.r.Started(configure.StepServicesDown, "stopping the node's services so their binaries can be replaced")
	var names []string
	for _, s := range config.Services {
		names = append(names, s.Name)
	}
	states, err := h.ServiceStates(ctx, names...)
	if err != nil {
		return err
	}
	var stopped []string
	for i := len(config.Services) - 1; i >= 0; i-- {
		name := config.Services[i].Name
		st, ok := states[name]
		if !ok || st == remote.ServiceStopped {
			continue
		}
		if err := h.StopService(ctx, name); err != nil {
			return fmt.Errorf("stop %s: %w", name, err)
		}
		stopped = append(stopped, name)
	}
	if len(stopped) == 0 {
		x.r.Done(configure.StepServicesDown, "no service was running")
	} else {
		x.r.Done(configure.StepServicesDown, "stopped "+strings.Join(stopped, ", "))
	}
	return nil
}

// configure runs the configuration engine with the new payload and the target version; its steps are
// reported as the upgrade's. It uncordons the node when the cordon is this upgrade's.
func (x *nodeUpgrade) configure(ctx context.Context, h remote.Host, info model.NodeInfo, hostname string) (configure.ConfigureResult, error) {
	facts := x.facts.Facts
	facts.Version = x.target
	creq := configure.ConfigureRequest{Facts: facts, BootstrapIdentity: x.facts.BootstrapIdentity,
		Host:      nodeconfig.Host{NodeName: info.Name, IP: info.InternalIP, BYOH: info.BYOH},
		HostNames: []string{strings.TrimSpace(hostname)}, Payload: x.payload.NodeFiles(), PubKeyHash: x.pubKeyHash,
		KnownNode: true, CallerCordoned: x.cordoned, ReadyTimeout: x.req.ReadyTimeout,
		Command: cmdline.Wmcon("upgrade", "run", x.node)}
	return configure.Configure(ctx, x.b.Configure.Cluster, h, creq, &asUpgrade{sink: x.r.Sink})
}

// asUpgrade passes the configuration's events on as the upgrade's: the same node and steps, its end a log
// line (the upgrade says how the node ends, and how to resume).
type asUpgrade struct{ sink event.Sink }

func (s *asUpgrade) Emit(e event.Event) {
	e.Action = request.ActionUpgrade
	if e.Kind == event.Finished {
		e.Kind, e.Step, e.Outcome, e.Hint = event.StepLog, "configure", "", ""
	}
	s.sink.Emit(e)
}

func (s *asUpgrade) Ask(ctx context.Context, q event.Question) (string, error) {
	q.Action = request.ActionUpgrade
	return s.sink.Ask(ctx, q)
}

func nodesWord(n int) string {
	if n == 1 {
		return "1 node"
	}
	return fmt.Sprintf("%d nodes", n)
}
