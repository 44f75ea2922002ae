package session

import (
	"context"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/doctor"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/actions/logs"
	"github.com/wmcon/wmcon/actions/mirrors"
	"github.com/wmcon/wmcon/actions/proxy"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/triage"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
)

// Triage runs the triage of one node with the session's cluster and hosts (the console's health view and
// wmcon triage).
func (s *Session) Triage(ctx context.Context, node string) (diagnosis.Report, error) {
	return triage.Triage(ctx, node, triage.TriageDeps{
		Snapshot: s.Snapshot,
		Cluster:  triage.ClusterReads{Clients: s.Clients},
		Hosts:    s.Hosts,
		Metrics:  s.triageMetrics,
	})
}

// NodeDetail reads the pods, events and YAML of a node for the console's details view.
func (s *Session) NodeDetail(ctx context.Context, node string) (model.NodeDetail, error) {
	return cluster.NodeDetail(ctx, s.Clients.Kube, node)
}

// Doctor checks the cluster's prerequisites for Windows nodes (wmcon doctor and the console's Doctor view);
// sink gets one event per check (nil: none).
func (s *Session) Doctor(ctx context.Context, sink event.Sink) (diagnosis.Report, error) {
	return doctor.Doctor(ctx, doctor.DoctorDeps{Clients: s.Clients}, sink)
}

// LogDeps are the backends the log streams read through.
func (s *Session) LogDeps() logs.LogDeps {
	return logs.LogDeps{Kube: s.Clients.Kube, Resolver: s.Hosts}
}

// StreamLogs streams logs with the session's backends (the console's log view).
func (s *Session) StreamLogs(ctx context.Context, req logline.Request, out func([]logline.Line), notices event.Sink) error {
	return logs.StreamLogs(ctx, req, s.LogDeps(), out, notices)
}

// Proxy reads the cluster-wide proxy and every Windows node's copy of it (the console's Proxy view).
func (s *Session) Proxy(ctx context.Context) (model.ProxyReport, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return model.ProxyReport{}, err
	}
	want, err := cluster.ClusterProxy(ctx, s.Clients)
	if err != nil {
		return model.ProxyReport{}, err
	}
	return model.ProxyReport{Cluster: want, Nodes: proxy.ProxyStatus(ctx, s.Hosts, snap.WindowsNodes(), want, 0)}, nil
}

// Mirrors renders the registries tree from the cluster's mirror sets and reads every Windows node's
// directory back (all at once, bounded), for the console's Mirrors pane.
func (s *Session) Mirrors(ctx context.Context) (model.MirrorsReport, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return model.MirrorsReport{}, err
	}
	tree, err := cluster.MirrorTree(ctx, s.Clients)
	if err != nil {
		return model.MirrorsReport{}, err
	}
	sts := mirrors.MirrorsStatus(ctx, s.Hosts, snap.WindowsNodes(), tree, 0)
	return mirrors.MirrorsReport(tree, sts), nil
}

// DrainPlans reads what draining each node with opts would do, changing nothing (reboot and drain
// --dry-run, and the console's reboot and drain confirmations).
func (s *Session) DrainPlans(ctx context.Context, nodes []string, opts request.DrainOptions) ([]model.DrainPlan, error) {
	ops := cluster.NewOps(s.Clients)
	plans := make([]model.DrainPlan, 0, len(nodes))
	for _, n := range nodes {
		p, err := ops.PlanDrain(ctx, n, cluster.DrainChoices(opts))
		if err != nil {
			return plans, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}
