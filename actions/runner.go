// Package actions is what every action shares: the Runner, which runs a typed request (package request)
// with the handler its feature package registered (Register), the one audit point every change passes
// (Backends.audited, the audit log), and the ports the actions reach the cluster and the hosts through
// (Backends and the interfaces in ports.go and hosts.go). The actions themselves live in feature packages
// below it (nodeops, reboot, configure, setup, ...); package all links them in. Actions run off the UI
// goroutine and report typed Events (package event); this package and those below never import Bubble Tea.
package actions

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/registries"
)

// Backends are what registered actions reach the cluster and the hosts through. The session builds them
// once; tests build their own.
type Backends struct {
	Cluster NodeCluster  // node reads and writes (cluster.Ops)
	Hosts   HostResolver // SSH to Windows hosts; nil when none is configured
	// Node looks a node up as the console sees it (the watcher's snapshot), with an error that lists the
	// nodes there are; nil reads it from the cluster.
	Node func(ctx context.Context, name string) (model.NodeInfo, error)
	// User names who acts, for the audit log: as the cluster knows them, "" = the local user.
	User func(ctx context.Context) string
	// Audit is where changes are recorded; nil = DefaultAuditLog().
	Audit *AuditLog
	// Configure is what configuring and deconfiguring hosts needs; nil when they are not available.
	Configure *ConfigureBackends
	// Mirrors renders the registries tree from the cluster's mirror sets and pull secret; nil when there is
	// no cluster to read them from.
	Mirrors func(ctx context.Context) (registries.Tree, error)
	// Proxy reads the cluster-wide proxy and its trusted CA bundle; nil when there is no cluster to read.
	Proxy func(ctx context.Context) (model.Proxy, error)
	// Where names the cluster in audit records; nil leaves it out (tests).
	Where func() AuditCluster
	// Setup is what the cluster-side setup actions change (MachineSets, BYOH hosts); nil when unavailable.
	Setup *SetupBackends
	// Snapshot is the cluster as the console sees it (the watcher's); nil when there is none (upgrades need it).
	Snapshot func(ctx context.Context) (*model.Snapshot, error)
	// HostKeys are the pinned SSH host keys (cluster.HostKeyStore); nil when there is no store.
	HostKeys HostKeyPins
}

// audited is the one audit point of wmcon: Runner.Run wraps the sink of every request that changes
// something with the Auditor it returns, which appends one record per action and target to the audit log,
// naming who acted and on which cluster. Before anything changes it writes the run's intent record, and
// refuses when that cannot be written: a change that cannot be audited is not made. The Runner ends the run
// with the Auditor's Result, which turns a record lost afterwards (the disk filled up) into an error saying
// the change was made but not recorded. Nothing but the Runner calls it: a change that is not a request
// run by the Runner is not audited, so every change is a request.
func (b Backends) audited(ctx context.Context, sink event.Sink, intent auditIntent) (*Auditor, error) {
	log := b.Audit
	if log == nil {
		l, err := DefaultAuditLog()
		if err != nil {
			return nil, fmt.Errorf("%w: refusing to change anything that cannot be audited", err)
		}
		log = l
	}
	var where AuditCluster
	if b.Where != nil {
		where = b.Where()
	}
	a := &Auditor{Sink: sink, Log: log, User: b.user(ctx), Cluster: where, Options: intent.Options, Run: newRunID(),
		Failed: func(target string, err error) {
			sink.Emit(event.Event{Time: time.Now(), Target: target, Kind: event.StepLog, Message: "audit log not written: " + err.Error()})
		}}
	if err := a.intend(intent); err != nil {
		return nil, fmt.Errorf("%w: refusing to change anything that cannot be audited (free disk space or raise the file-size limit, or set %s to a writable file)", err, AuditEnv)
	}
	return a, nil
}

// FindNode looks a node up as Backends.Node says, or in the cluster.
func (b Backends) FindNode(ctx context.Context, name string) (model.NodeInfo, error) {
	if b.Node != nil {
		return b.Node(ctx, name)
	}
	return b.Cluster.Node(ctx, name)
}

func (b Backends) user(ctx context.Context) string {
	if b.User != nil {
		return b.User(ctx)
	}
	return ""
}

// Handler runs one kind of request with the backends, reporting to sink until it ends.
type Handler[R request.Request] func(ctx context.Context, b Backends, req R, sink event.Sink) error

// handlers maps a request's type to its handler. It is filled by Register from the actions' init
// functions and only read afterwards.
var handlers = map[reflect.Type]func(context.Context, Backends, request.Request, event.Sink) error{}

// Register makes Runner.Run hand requests of type R to h. Each action calls it once, from an init function
// beside its handler; registering a type twice is a programming error and panics.
func Register[R request.Request](h Handler[R]) {
	t := reflect.TypeFor[R]()
	if _, dup := handlers[t]; dup {
		panic("actions: a second handler for " + t.String())
	}
	handlers[t] = func(ctx context.Context, b Backends, req request.Request, sink event.Sink) error {
		return h(ctx, b, req.(R), sink)
	}
}

// Registered are the request types that have a handler in this program.
func Registered() []reflect.Type {
	out := make([]reflect.Type, 0, len(handlers))
	for t := range handlers {
		out = append(out, t)
	}
	return out
}

// Runner runs requests with one set of backends; the console and every headless command share it.
type Runner struct{ Backends Backends }

// Run runs req with its registered handler and returns when the action ends. The action reports every
// step to sink (and asks its questions there); the error says how it ended when it did not succeed. A
// request whose Audit says it changes something is audited (Backends.audited) before it starts; one that
// only reads (a preview, a dry run, a watch) is run as it is.
func (r Runner) Run(ctx context.Context, req request.Request, sink event.Sink) error {
	h, ok := handlers[reflect.TypeOf(req)]
	if !ok {
		return fmt.Errorf("no action is registered for %T: register its handler with actions.Register", req)
	}
	a := req.Audit()
	if !a.Changes {
		return h(ctx, r.Backends, req, sink)
	}
	audited, err := r.Backends.audited(ctx, sink, auditIntent{Action: req.Action(), Targets: req.Targets(), Options: a.Options})
	if err != nil {
		return err
	}
	return audited.Result(h(ctx, r.Backends, req, audited))
}
