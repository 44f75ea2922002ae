// Package session is wmcon's composition root: it connects to its backend's cluster, runs the watcher,
// prepares the SSH pool with WMCO's conventions for reaching hosts, and wires the actions to them.
// The console and every headless command build one Session and use it; cli keeps only the cobra wiring and
// the printers.
package session

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions"
	_ "github.com/wmcon/wmcon/actions/all" // every action registers its handler with the Runner
	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/backend"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/registries"
	"github.com/wmcon/wmcon/remote"
)

// Options say which cluster to use and how to reach its Windows hosts.
type Options struct {
	// Backend is the cluster and hosts to work on (backend.NewCluster, or the demo); the session owns it
	// and closes it, also when New fails.
	Backend backend.Backend
	SSH     SSHOptions
	// ReadOnly is --read-only: no write request leaves the process, to the cluster or to a host, and a
	// first-use host key is trusted for this session only.
	ReadOnly bool
	// Version is wmcon's own version: a node configured without an installed operator is annotated with it.
	Version string
	// KeyTrustedOnce tells the user a host key was trusted for this session only (read-only); nil says nothing.
	KeyTrustedOnce func(host, fingerprint string)
	// AuditLog is where changes are recorded (--audit-log, or the config file's auditLog); "" is
	// actions.DefaultAuditPath. A backend with a log of its own (the demo) keeps that one.
	AuditLog string
}

// Session is what the console and a headless command need: cluster clients, a live watcher, a way to reach
// each Windows node's host, and the runner of every action. It works the same on every backend.
type Session struct {
	Clients  cluster.Clients
	Target   cluster.Target
	Hosts    actions.HostResolver // resolves nodes with what the current snapshot says
	HostKeys *cluster.HostKeyStore
	Pool     *remote.Pool
	Watcher  *cluster.Watcher
	Runner   actions.Runner // runs every action request

	backend   backend.Backend
	cancel    context.CancelFunc
	infraOnce sync.Once
	infraName string

	// feed is the console's live metrics, once it reads them: triage takes a node's figures (and their
	// history) from it rather than reading them again.
	feed atomic.Pointer[MetricsFeed]
	// podFeed is the console's live pod metrics, once it reads them: triage takes a node's pods' figures
	// from it, so the console's reads stay at one per node per interval.
	podFeed atomic.Pointer[PodMetricsFeed]
}

// New connects to the backend's cluster, starts the watcher and prepares the SSH pool. It does not
// wait for the first snapshot: Snapshot does. Close releases everything, the backend included.
func New(ctx context.Context, opts Options) (*Session, error) {
	if opts.Backend == nil {
		return nil, errors.New("no backend to work on: give session.Options.Backend (backend.NewCluster, or the demo)")
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Session{cancel: cancel, backend: opts.Backend}
	if err := s.connect(ctx, opts); err != nil {
		cancel()
		opts.Backend.Close()
		return nil, err
	}
	rememberSandbox(s.backend.Sandbox().Dir)
	s.Watcher = cluster.NewWatcher(s.Clients, s.Target, cluster.WatcherOptions{})
	go s.Watcher.Run(ctx)
	if err := s.openPool(ctx, opts); err != nil {
		s.Close()
		return nil, err
	}
	s.Hosts = &liveResolver{s: s}
	ops := cluster.NewOps(s.Clients)
	s.Runner = actions.Runner{Backends: actions.Backends{Cluster: ops, Hosts: s.Hosts, Node: s.Node,
		User:      s.backend.User,
		Configure: s.configureBackends(ops, opts),
		Mirrors:   func(ctx context.Context) (registries.Tree, error) { return cluster.MirrorTree(ctx, s.Clients) },
		Proxy:     func(ctx context.Context) (model.Proxy, error) { return cluster.ClusterProxy(ctx, s.Clients) },
		Where:     s.where,
		Setup: &actions.SetupBackends{MachineSets: cluster.NewMachineSets(s.Clients), BYOH: cluster.NewBYOHConfigMap(s.Clients),
			OLM: cluster.NewOLM(s.Clients), Keys: cluster.NewKeys(s.Clients), Ops: cluster.NewSetupOps(s.Clients), Watch: ops,
			Doctor:   func(ctx context.Context) (diagnosis.Report, error) { return s.Doctor(ctx, nil) },
			ReadOnly: opts.ReadOnly, KeyInstalled: s.useClusterKey(opts)},
		Snapshot: s.Snapshot}}
	s.Runner.Backends.HostKeys = s.HostKeys
	switch log := s.backend.Sandbox().AuditLog; {
	case log != "": // never the user's log, even when $WMCON_AUDIT_LOG or the config file names one
		s.Runner.Backends.Audit = &actions.AuditLog{Path: log, Fixed: true}
	case opts.AuditLog != "":
		s.Runner.Backends.Audit = &actions.AuditLog{Path: opts.AuditLog}
	}
	return s, nil
}

// where names the cluster for audit records: the API server (its userinfo already redacted by Connect),
// the context, and the infrastructure name once the watcher has read it.
func (s *Session) where() actions.AuditCluster {
	w := actions.AuditCluster{Server: model.RedactURL(s.Target.Server), Context: s.Target.Context}
	if snap := s.Watcher.Current(); snap != nil {
		w.Infrastructure = snap.Cluster.InfraID
	}
	if w.Infrastructure == "" {
		w.Infrastructure = s.infrastructureName()
	}
	return w
}

// infrastructureName reads the Infrastructure object's name once (a read, allowed under --read-only), for
// audit records written before the watcher has it; "" on plain Kubernetes or when it cannot be read.
func (s *Session) infrastructureName() string {
	s.infraOnce.Do(func() {
		if s.Clients.Config == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		inf, err := s.Clients.Config.ConfigV1().Infrastructures().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
		if err == nil {
			s.infraName = inf.Status.InfrastructureName
		}
	})
	return s.infraName
}

func (s *Session) connect(ctx context.Context, opts Options) error {
	var err error
	if s.Clients, s.Target, err = s.backend.Connect(ctx); err != nil {
		return err
	}
	if opts.ReadOnly {
		// The one guard of --read-only for the cluster: no write request leaves the process.
		c, err := s.Clients.ReadOnly()
		if err != nil {
			return err
		}
		s.Clients = c
	}
	// Started only now: the read-only guard above may add reactors to a simulation's fake clientsets,
	// which must not change under its running control plane.
	s.backend.Run(ctx)
	return nil
}

// Snapshot waits (bounded by ctx and 30s) until nodes are listed and every other resource has answered,
// then returns the current snapshot. The watcher lists the Nodes first and the rest after, so a snapshot with
// the Nodes alone would lack what actions read beside them (a node's Machine and MachineSet, the operator's
// version); a resource still loading settleWait after the Nodes were listed (an API that keeps failing) is
// not waited for longer: the snapshot with the Nodes is returned.
func (s *Session) Snapshot(ctx context.Context) (*model.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var listed *model.Snapshot
	var listedAt time.Time
	for {
		if snap := s.Watcher.Current(); snap != nil {
			switch st := snap.Resources[model.ResNodes]; st.Availability {
			case model.Available:
				if listed == nil {
					listedAt = time.Now()
				}
				listed = snap
				if settled(snap) || time.Since(listedAt) > settleWait {
					return snap, nil
				}
			case model.Forbidden:
				return nil, errors.New(st.Message)
			}
		}
		select {
		case <-ctx.Done():
			if listed != nil {
				return listed, nil
			}
			return nil, fmt.Errorf("the cluster's nodes could not be listed within 30s (%s): check the connection and your access", lastProblem(s.Watcher.Current()))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// settleWait bounds how long Snapshot waits for the other resources once the Nodes are listed.
const settleWait = 5 * time.Second

// settled says whether every resource of snap has answered its first list (or is absent or forbidden).
func settled(snap *model.Snapshot) bool {
	for _, st := range snap.Resources {
		if st.Availability == model.Syncing {
			return false
		}
	}
	return true
}

func lastProblem(snap *model.Snapshot) string {
	if snap == nil {
		return "no answer yet"
	}
	if !snap.Connection.Connected {
		return snap.Connection.LastError
	}
	return snap.Resources[model.ResNodes].Message
}

// Node returns a node of the snapshot by name, or an error that lists the Windows nodes there are.
func (s *Session) Node(ctx context.Context, name string) (model.NodeInfo, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return model.NodeInfo{}, err
	}
	if n, ok := snap.Node(name); ok {
		return n, nil
	}
	var names []string
	for _, n := range snap.WindowsNodes() {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	hint := "there are no Windows nodes"
	if len(names) > 0 {
		hint = "Windows nodes: " + strings.Join(names, ", ")
	}
	return model.NodeInfo{}, fmt.Errorf("node %q not found (%s)", name, hint)
}

// Close stops the watcher, every SSH connection and the backend.
func (s *Session) Close() {
	s.cancel()
	if s.Pool != nil {
		_ = s.Pool.Close()
	}
	s.backend.Close()
	forgetSandbox(s.backend.Sandbox().Dir)
}

// Sandbox is what the session's backend keeps apart from the user's own setup (the console offers its
// bare hosts and key file).
func (s *Session) Sandbox() backend.Sandbox { return s.backend.Sandbox() }
