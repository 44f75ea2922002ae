package operator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
)

// WatchAction is the action name the events of configure --watch carry.
const WatchAction = "configure-watch"

// StepWatch is the one step of a watch: each change the operator makes is a line of it.
const StepWatch = "watch"

// WatchOptions tune WatchOperator.
type WatchOptions struct {
	Addr, Node string        // the host: its address and, when known, its node name
	Version    string        // the operator's version: done when the node carries it ("" = any version)
	Interval   time.Duration // between reads (default 2s)
}

// WatchOperator follows the Windows Machine Config Operator configuring a host it owns, without touching
// anything: the Machine's phase, the Node registering, its certificate requests, its events, the operator's
// own log lines about this host (from its pod log), the version annotation and Ready. It ends when the node
// is Ready and carries the operator's version, or with ctx.
func WatchOperator(ctx context.Context, c actions.OperatorWatcher, opts WatchOptions, sink event.Sink) error {
	if opts.Interval <= 0 {
		opts.Interval = 2 * time.Second
	}
	target := opts.Node
	if target == "" {
		target = opts.Addr
	}
	r := event.Reporter{Sink: sink, Action: WatchAction, Target: target}
	r.Started(StepWatch, "following the operator's progress (nothing is changed; ctrl+c stops watching)")
	var last cluster.OperatorProgress
	seenEvents := map[string]bool{}
	oplog := &operatorLog{c: c, seen: map[string]bool{}}
	first := true
	for {
		p, err := c.OperatorProgress(ctx, opts.Addr, opts.Node)
		if err != nil && ctx.Err() == nil {
			r.Log(StepWatch, "could not read the progress: "+err.Error())
		}
		if err == nil {
			for _, l := range ProgressChanges(last, p, first, seenEvents) {
				r.Log(StepWatch, l)
			}
			for _, l := range oplog.next(ctx, opts.Addr, p, r) {
				r.Log(StepWatch, "operator: "+l)
			}
			last, first = p, false
			if p.NodeReady && p.Version != "" && (opts.Version == "" || p.Version == opts.Version) {
				r.Done(StepWatch, fmt.Sprintf("node %s is Ready and configured by the operator (version %s)", p.Node, p.Version))
				r.Finish(event.Succeeded, p.Node+" is a Ready worker node, configured by the operator", "")
				return nil
			}
		}
		select {
		case <-ctx.Done():
			r.Failed(StepWatch, ctx.Err(), "")
			r.Finish(event.Cancelled, "stopped watching; the operator carries on", "")
			return ctx.Err()
		case <-time.After(opts.Interval):
		}
	}
}

// progressChanges says what changed between two reads, as lines.
func ProgressChanges(old, cur cluster.OperatorProgress, first bool, seenEvents map[string]bool) []string {
	var out []string
	if cur.Machine != "" && (first || cur.MachinePhase != old.MachinePhase) {
		out = append(out, fmt.Sprintf("Machine %s: phase %s", cur.Machine, event.OrNone(cur.MachinePhase)))
	}
	if first && cur.Node == "" {
		out = append(out, "no node yet")
	}
	if cur.Node != "" && old.Node == "" {
		out = append(out, "node "+cur.Node+" registered")
	}
	was := map[string]string{}
	for _, c := range old.CSRs {
		was[c.Name] = c.State
	}
	for _, c := range cur.CSRs {
		if was[c.Name] != c.State {
			out = append(out, fmt.Sprintf("%s CSR %s: %s", c.Kind, c.Name, c.State))
		}
	}
	for i := len(cur.Events) - 1; i >= 0; i-- { // oldest first
		e := cur.Events[i]
		k := e.Object + "/" + e.Reason + "/" + e.Time.String()
		if !seenEvents[k] {
			seenEvents[k] = true
			out = append(out, fmt.Sprintf("event %s %s %s: %s", e.Object, e.Type, e.Reason, e.Message))
		}
	}
	if cur.Version != old.Version && cur.Version != "" {
		out = append(out, "version annotation: "+cur.Version)
	}
	if cur.Node != "" && (first || cur.NodeReady != old.NodeReady) {
		out = append(out, map[bool]string{true: "node Ready", false: "node not Ready yet"}[cur.NodeReady])
	}
	return out
}

// operatorLog reads the operator's pod log a poll at a time and keeps each line about the host once.
type operatorLog struct {
	c      actions.OperatorWatcher
	since  time.Time       // the newest line's time; zero before the first read
	seen   map[string]bool // lines at or after since already reported (sinceTime has a second's resolution)
	failed bool            // the last read failed (said once until one succeeds)
}

func (l *operatorLog) next(ctx context.Context, addr string, p cluster.OperatorProgress, r event.Reporter) []string {
	about := []string{addr, p.Node}
	if _, name, ok := strings.Cut(p.Machine, "/"); ok {
		about = append(about, name)
	}
	lines, err := l.c.OperatorLog(ctx, cluster.OperatorLogOptions{Since: l.since, About: about})
	if err != nil {
		if !l.failed && ctx.Err() == nil {
			r.Log(StepWatch, "could not read the operator's log: "+err.Error())
		}
		l.failed = true
		return nil
	}
	l.failed = false
	var out []string
	for _, line := range lines {
		key := line.Time.Format(time.RFC3339Nano) + " " + line.Text
		if l.seen[key] {
			continue
		}
		if line.Time.After(l.since) {
			l.since = line.Time
		}
		l.seen[key] = true
		out = append(out, line.Text)
	}
	for k := range l.seen { // forget what is older than the next read can return
		if t, err := time.Parse(time.RFC3339Nano, strings.SplitN(k, " ", 2)[0]); err == nil && t.Before(l.since.Truncate(time.Second)) {
			delete(l.seen, k)
		}
	}
	return out
}
