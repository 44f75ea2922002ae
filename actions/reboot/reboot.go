// Package reboot reboots Windows nodes the documented way: cordon, drain, Restart-Computer over SSH, wait
// for the host and the node to come back Ready, uncordon; at most N at once, none after a failure.
package reboot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/nodeops"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

// The steps of a reboot, in order.
const (
	StepRestart       = "restart"
	StepDown          = "down"
	StepUp            = "up"
	StepMetadataRoute = "metadata-route"
	StepReady         = "ready"
	StepVerify        = "verify"
)

// RebootSteps lists the steps of a reboot in the order they run.
var RebootSteps = []string{nodeops.StepCordon, nodeops.StepDrain, StepRestart, StepDown, StepUp, StepMetadataRoute, StepReady, nodeops.StepUncordon, StepVerify}

func init() { actions.Register(Run) }

// runReboot reboots the request's nodes with RebootMany.
func Run(ctx context.Context, b actions.Backends, req request.Reboot, sink event.Sink) error {
	// The Runner audits every request (Backends.Audited): no second record here.
	opts := RebootOptions{Drain: req.Drain, DownTimeout: req.DownTimeout, UpTimeout: req.UpTimeout,
		ReadyTimeout: req.ReadyTimeout}
	return RebootMany(ctx, b.Cluster, b.Hosts, req.Nodes, req.MaxUnavailable, opts, sink)
}

// RebootOptions tune a graceful reboot. Zero durations take the defaults noted.
type RebootOptions struct {
	Drain        request.DrainOptions // the confirmation shows them; request.DefaultDrainOptions is the procedure's
	DownTimeout  time.Duration        // for the host to stop answering after Restart-Computer (default 5m)
	UpTimeout    time.Duration        // for SSH to answer again once down (default 15m)
	ReadyTimeout time.Duration        // for the kubelet to run and the node to be Ready once SSH is back (default 10m)
	PollInterval time.Duration        // between SSH probes while waiting (default 2s)
	Platform     string               // the cluster's platform; "" asks the cluster
}

// applyDefaults takes the user-facing defaults from request.Reboot, their one place.
func (o *RebootOptions) applyDefaults() {
	d := request.Reboot{DownTimeout: o.DownTimeout, UpTimeout: o.UpTimeout, ReadyTimeout: o.ReadyTimeout}.WithDefaults()
	o.DownTimeout, o.UpTimeout, o.ReadyTimeout = d.DownTimeout, d.UpTimeout, d.ReadyTimeout
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
}

// CheckRebootable reads a node and refuses nodes wmcon cannot reboot.
func CheckRebootable(ctx context.Context, c actions.NodeOps, node string) (model.NodeInfo, error) {
	info, err := c.Node(ctx, node)
	if err != nil {
		return info, err
	}
	if !info.Windows {
		return info, &nodeops.NotWindowsError{Node: node}
	}
	return info, nil
}

// Reboot restarts a Windows node gracefully, the documented way: cordon, drain, Restart-Computer -Force over
// SSH, wait for the host to go down and for SSH to return, re-add the EC2 metadata route on AWS if the boot
// lost it, wait for the kubelet and the node to be Ready, uncordon, and verify. Each step is reported live
// (the Runner's audit point records them). Failing or cancelled after the cordon, it returns *PartialError
// saying how the node was left and how to finish.
func Reboot(ctx context.Context, c actions.NodeCluster, hosts actions.HostResolver, node string, opts RebootOptions, sink event.Sink) error {
	opts.applyDefaults()
	run := &rebootRun{c: c, hosts: hosts, node: node, opts: opts, r: event.Reporter{Sink: sink, Action: "reboot", Target: node}}
	return run.run(ctx)
}

type rebootRun struct {
	c     actions.NodeCluster
	hosts actions.HostResolver
	node  string
	opts  RebootOptions
	r     event.Reporter
	start time.Time
	// Evidence of the new boot: the Node's bootID before the restart, and when SSH answered again (the
	// old kubelet is dead by then, so a Ready heartbeat after it comes from the new boot).
	bootBefore string
	upAt       time.Time
}

// stop ends the reboot after a failed step: the step's Failed event (with its hint), the Finished event, and
// the error to return (a *PartialError when state says the node was left changed).
func (x *rebootRun) stop(ctx context.Context, step string, err error, state, hint string) error {
	x.r.StepFailed(step, err, hint)
	outcome := event.OutcomeOf(ctx)
	msg := fmt.Sprintf("reboot %s at step %s after %s", map[event.Outcome]string{event.Cancelled: "cancelled", event.Failed: "failed"}[outcome], step, event.Elapsed(x.start))
	if state != "" {
		msg += "; node left " + state
	} else {
		msg += "; nothing changed"
	}
	x.r.Emit(event.Event{Kind: event.Finished, Outcome: outcome, Message: msg, Err: err.Error(), Hint: hint})
	if state == "" {
		return err
	}
	return &nodeops.PartialError{Node: x.node, State: state, Hint: hint, Err: err}
}

func (x *rebootRun) run(ctx context.Context) error {
	x.start = time.Now()
	node, r := x.node, x.r

	// Checks that change nothing: the node exists, is Windows, and its host answers SSH.
	info, err := CheckRebootable(ctx, x.c, node)
	if err != nil {
		return x.refuse(ctx, err, nodeops.FailHint(err, "pick a Windows node"))
	}
	x.bootBefore = info.BootID
	host, err := x.hosts.Host(ctx, info)
	if err != nil {
		return x.refuse(ctx, err, "nothing changed; check the node's addresses and the SSH settings")
	}
	name, err := host.Hostname(ctx)
	if err != nil {
		if !errors.As(err, new(*remote.LocalError)) { // a local problem says so itself; the host was not tried
			err = fmt.Errorf("cannot reach the host over SSH: %w", err)
		}
		return x.refuse(ctx, err,
			"nothing changed: the node was not cordoned; fix SSH access to the host first (wmcon needs it to restart it)")
	}
	r.Log("", fmt.Sprintf("host %s answers over SSH; drain options: %s", name, x.opts.Drain))
	platform := x.opts.Platform
	if platform == "" {
		if platform, err = x.c.Platform(ctx); err != nil {
			r.Log("", fmt.Sprintf("cluster platform unknown (%v): the EC2 metadata route will not be checked", err))
		}
	}

	// cordon
	wasCordoned, err := nodeops.CordonStep(ctx, r, x.c, node)
	if err != nil {
		return x.finishFailed(ctx, nodeops.StepCordon, err, "")
	}
	if wasCordoned {
		r.Log(nodeops.StepCordon, "the node was already cordoned; it is uncordoned at the end, as the procedure does")
	}
	cordoned := nodeops.UncordonHint(node)

	// drain
	if err := nodeops.DrainStep(ctx, r, x.c, node, x.opts.Drain); err != nil {
		var blocked *cluster.DrainBlockedError
		hint := cordoned + "; or " + nodeops.DrainAgain(node)
		if errors.As(err, &blocked) {
			hint = cordoned + "; to reboot anyway, relax the budget or delete the pods past it: " +
				event.Run("reboot", node, "--on-pdb", event.ChoiceDisableEviction, "--yes-disable-eviction")
		}
		return x.finishFailed(ctx, nodeops.StepDrain, err, "cordoned (partly drained)", hint)
	}

	// restart, down, up
	if err := x.restart(ctx, host); err != nil {
		return err
	}

	// metadata-route
	if err := x.metadataRoute(ctx, host, platform); err != nil {
		return err
	}

	// ready
	if err := x.ready(ctx, host); err != nil {
		return err
	}

	// uncordon
	r.Started(nodeops.StepUncordon, "marking the node schedulable")
	if _, err := x.c.Uncordon(ctx, node); err != nil {
		return x.stop(ctx, nodeops.StepUncordon, err, "cordoned (rebooted and Ready)", cordoned)
	}
	r.Done(nodeops.StepUncordon, "uncordoned")

	// verify
	r.Started(StepVerify, "checking the node is Ready and schedulable")
	final, err := x.c.Node(ctx, node)
	if err == nil && (final.Status != model.NodeReady || final.Unschedulable) {
		err = fmt.Errorf("node is %s after the reboot", final.State())
	}
	if err != nil {
		return x.stop(ctx, StepVerify, err, "rebooted, in an unexpected state",
			"look at the node's conditions and its kubelet log ("+event.Run("triage", node)+"); once it is healthy, "+event.Run("uncordon", node))
	}
	r.Done(StepVerify, "Ready and schedulable")
	r.Finish(event.Succeeded, fmt.Sprintf("rebooted in %s", event.Elapsed(x.start)), "")
	return nil
}

// refuse ends a reboot that was refused before anything changed.
func (x *rebootRun) refuse(ctx context.Context, err error, hint string) error {
	x.r.Emit(event.Event{Kind: event.Finished, Outcome: event.OutcomeOf(ctx), Message: "not rebooted: " + err.Error() + "; nothing changed", Err: err.Error(), Hint: hint})
	return err
}

// finishFailed ends the reboot after a step that reported its own failure.
func (x *rebootRun) finishFailed(ctx context.Context, step string, err error, state string, hint ...string) error {
	h := strings.Join(hint, "")
	outcome := event.OutcomeOf(ctx)
	msg := fmt.Sprintf("reboot %s at step %s after %s", map[event.Outcome]string{event.Cancelled: "cancelled", event.Failed: "failed"}[outcome], step, event.Elapsed(x.start))
	if state == "" {
		msg += "; nothing changed"
		x.r.Emit(event.Event{Kind: event.Finished, Outcome: outcome, Message: msg, Err: err.Error(), Hint: h})
		return err
	}
	msg += "; node left " + state
	x.r.Emit(event.Event{Kind: event.Finished, Outcome: outcome, Message: msg, Err: err.Error(), Hint: h})
	return &nodeops.PartialError{Node: x.node, State: state, Hint: h, Err: err}
}

// serviceQuerier reads one service's state: waiting for the kubelet after a reboot needs only that.
type serviceQuerier interface {
	ServiceQuery(ctx context.Context, name string) (remote.ServiceStatus, error)
}

// restart runs Restart-Computer -Force and follows the host down and back up.
func (x *rebootRun) restart(ctx context.Context, host remote.Rebooter) error {
	r, node := x.r, x.node
	cordoned := nodeops.UncordonHint(node)
	r.Started(StepRestart, "Restart-Computer -Force over SSH")
	step := StepRestart
	var lastProgress time.Time
	err := host.Reboot(ctx, remote.RebootOptions{
		DownTimeout:  x.opts.DownTimeout,
		UpTimeout:    x.opts.UpTimeout,
		PollInterval: x.opts.PollInterval,
		Progress: func(p remote.RebootProgress) {
			switch p.Phase {
			case remote.RebootSent:
				r.Done(StepRestart, "restart sent")
				r.Started(StepDown, "waiting for the host to go down")
				step = StepDown
			case remote.RebootDown:
				r.Done(StepDown, fmt.Sprintf("host down after %s", p.Elapsed.Round(100*time.Millisecond)))
				r.Started(StepUp, "waiting for SSH to return")
				step = StepUp
			case remote.RebootWaitingUp:
				if time.Since(lastProgress) >= 10*time.Second || lastProgress.IsZero() {
					lastProgress = time.Now()
					r.Progress(StepUp, 0, 0, fmt.Sprintf("not back yet, %s since the restart", p.Elapsed.Round(time.Second)))
				}
			case remote.RebootUp:
				x.upAt = time.Now()
				r.Done(StepUp, fmt.Sprintf("SSH answers again, %s after the restart", p.Elapsed.Round(100*time.Millisecond)))
				step = ""
			}
		},
	})
	if err == nil {
		return nil
	}
	switch step {
	case StepRestart:
		if ctx.Err() != nil {
			return x.stop(ctx, StepRestart, err, "cordoned and drained",
				cordoned+"; whether the restart reached the host is unknown: check it before uncordoning")
		}
		return x.stop(ctx, StepRestart, err, "cordoned and drained",
			cordoned+"; the host was not restarted: fix SSH, then "+event.Run("reboot", node))
	case StepDown:
		var stayed *remote.HostStayedUpError
		if errors.As(err, &stayed) {
			return x.stop(ctx, StepDown, err, "cordoned and drained",
				cordoned+"; the host never went down: a shutdown may be blocked, check the host and reboot again")
		}
		return x.stop(ctx, StepDown, err, "cordoned, host restarting",
			cordoned+"; the host is restarting: once it is back and the node Ready")
	default: // up
		var never *remote.HostNeverCameBackError
		if errors.As(err, &never) {
			return x.stop(ctx, StepUp, err, "cordoned, host down",
				cordoned+" once the host is back (check the instance in the cloud console) and the node Ready")
		}
		return x.stop(ctx, StepUp, err, "cordoned, host restarting",
			cordoned+" once the host is back and the node Ready")
	}
}

// metadataRoute re-adds the EC2 metadata route on AWS when the boot lost it, through the host's gateway.
func (x *rebootRun) metadataRoute(ctx context.Context, host remote.Routes, platform string) error {
	r := x.r
	r.Started(StepMetadataRoute, "checking the EC2 metadata route ("+config.EC2MetadataIP+")")
	if !strings.EqualFold(platform, "AWS") {
		if platform == "" {
			platform = "unknown"
		}
		r.Done(StepMetadataRoute, fmt.Sprintf("skipped: the platform (%s) is not AWS", platform))
		return nil
	}
	hint := nodeops.UncordonHint(x.node) + " after adding the route by hand: route -p add " + config.EC2MetadataIP +
		" MASK 255.255.255.255 <default gateway> (see ipconfig) on the host"
	state := "cordoned, rebooted without the EC2 metadata route"
	ok, err := host.HasMetadataRoute(ctx)
	if err != nil {
		return x.stop(ctx, StepMetadataRoute, err, state, hint)
	}
	if ok {
		r.Done(StepMetadataRoute, "present")
		return nil
	}
	gw, err := host.Gateway(ctx)
	if err != nil {
		return x.stop(ctx, StepMetadataRoute, err, state, hint)
	}
	r.Log(StepMetadataRoute, fmt.Sprintf("the route is missing; adding it through the default gateway %s", gw))
	if _, err := host.EnsureMetadataRoute(ctx); err != nil {
		return x.stop(ctx, StepMetadataRoute, err, state, hint)
	}
	if ok, err := host.HasMetadataRoute(ctx); err != nil || !ok {
		if err == nil {
			err = errors.New("the route is still missing after route add")
		}
		return x.stop(ctx, StepMetadataRoute, err, state, hint)
	}
	r.Done(StepMetadataRoute, fmt.Sprintf("added %s/32 via %s", config.EC2MetadataIP, gw))
	return nil
}

// ready waits for the kubelet service to run again and then for the node to be Ready.
func (x *rebootRun) ready(ctx context.Context, host serviceQuerier) error {
	r, node := x.r, x.node
	r.Started(StepReady, "waiting for the kubelet to run and the node to be Ready")
	rctx, cancel := context.WithTimeout(ctx, x.opts.ReadyTimeout)
	defer cancel()
	state := "cordoned, rebooted"
	hint := func(what string) string {
		return fmt.Sprintf("%s once %s (read the kubelet log: %s; or oc describe node %s)", nodeops.UncordonHint(node), what, event.RunLogs(node, "kubelet"), cmdline.Quote(node))
	}
	for {
		st, err := host.ServiceQuery(rctx, "kubelet")
		if err == nil && (!st.Exists || st.State == remote.ServiceRunning) {
			if !st.Exists {
				r.Log(StepReady, "no kubelet service on the host; waiting for the node only")
			} else {
				r.Progress(StepReady, 0, 0, "kubelet running")
			}
			break
		}
		if rctx.Err() != nil {
			if err == nil {
				err = fmt.Errorf("the kubelet service is %s", st.State)
			}
			return x.stop(ctx, StepReady, nodeops.TimeoutErr(ctx, err, x.opts.ReadyTimeout, "the kubelet to run"), state, hint("the kubelet runs"))
		}
		select {
		case <-rctx.Done():
		case <-time.After(x.opts.PollInterval):
		}
	}
	stale := false
	last, err := x.c.WaitNode(rctx, node, func(n model.NodeInfo) bool {
		if n.Status != model.NodeReady {
			return false
		}
		if x.newBoot(n) {
			return true
		}
		if !stale {
			stale = true
			r.Progress(StepReady, 0, 0, "the node still shows the Ready from before the reboot; waiting for the kubelet to report the new boot")
		}
		return false
	})
	if err != nil {
		return x.stop(ctx, StepReady, nodeops.TimeoutErr(ctx, err, x.opts.ReadyTimeout, "the node to be Ready"), state, hint("the node is Ready"))
	}
	r.Done(StepReady, fmt.Sprintf("node %s", last.State()))
	return nil
}

// newBoot tells whether the node's status comes from after the reboot: its bootID changed, or, for a node
// that reports no bootID, its Ready heartbeat is newer than the moment SSH answered again. A Ready from
// before the reboot can still stand when the node-monitor grace period is long, and must not let the node
// be uncordoned.
func (x *rebootRun) newBoot(n model.NodeInfo) bool {
	if n.BootID != "" && n.BootID != x.bootBefore { // changed, or reported where there was none
		return true
	}
	if x.bootBefore != "" {
		// The node reports boot IDs: only a new one proves the new boot. The API server keeps heartbeats to
		// the second, so one from SSH's own second may be the old kubelet's (CI saw a 0.7 s reboot end so).
		return false
	}
	for _, c := range n.Conditions {
		if c.Type == "Ready" && !x.upAt.IsZero() && nodeops.PostedSince(c.LastHeartbeatTime, x.upAt) {
			return true
		}
	}
	return false
}

// RebootMany reboots nodes as a rollout (package rollout): at most maxUnavailable (default 1) in progress at
// once, in the order given. Every node is checked first (it exists and is Windows); a bad one refuses the
// whole batch before any change. After a failure no further reboot starts (the failed node may still be
// unavailable); those not started are reported as cancelled. The errors of the nodes that failed are joined.
func RebootMany(ctx context.Context, c actions.NodeCluster, hosts actions.HostResolver, nodes []string, maxUnavailable int,
	opts RebootOptions, sink event.Sink) error {
	seen := map[string]bool{}
	var list []string
	var bad []error
	for _, n := range nodes {
		if seen[n] {
			continue
		}
		seen[n] = true
		list = append(list, n)
		if _, err := CheckRebootable(ctx, c, n); err != nil {
			bad = append(bad, err)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("nothing rebooted: %w", errors.Join(bad...))
	}
	sink = event.Locked(sink)
	batch := rollout.Rollout{
		MaxUnavailable: maxUnavailable,
		NotStarted: func(n, why string) {
			sink.Emit(event.Event{Time: time.Now(), Action: "reboot", Target: n, Kind: event.Finished, Outcome: event.Cancelled,
				Message: "not rebooted: " + why, Hint: "nothing changed on this node; reboot it when ready: " + event.Run("reboot", n)})
		},
		Failed: func(n string) string { return "the reboot of " + n + " failed" },
	}
	sum := batch.Run(ctx, list, func(ctx context.Context, n string) error {
		return Reboot(ctx, c, hosts, n, opts, sink)
	})
	err := sum.Failures()
	if rest := sum.Targets(rollout.NotStarted); len(rest) > 0 && ctx.Err() != nil {
		err = errors.Join(err, &NotStartedError{Nodes: rest, Err: ctx.Err()})
	}
	return err
}

// NotStartedError is a batch whose reboots were cancelled before they started: those nodes are unchanged,
// but the command did not do what was asked, so it is an error (it wraps ctx's error).
type NotStartedError struct {
	Nodes []string
	Err   error
}

func (e *NotStartedError) Error() string {
	return fmt.Sprintf("not rebooted (cancelled before starting, nothing changed): %s", strings.Join(e.Nodes, ", "))
}

func (e *NotStartedError) Unwrap() error { return e.Err }
