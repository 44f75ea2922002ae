package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/ui"
)

// consoleRunner runs the console's action requests with the session's cluster and SSH backends: the same
// actions the headless commands run.
type consoleRunner struct{ s *session }

func (r consoleRunner) Run(ctx context.Context, req ui.ActionRequest, sink actions.Sink) error {
	ops := cluster.NewOps(r.s.Clients)
	switch req.Kind {
	case "reboot":
		opts := actions.RebootOptions{Drain: drainOptions(req.Drain), User: ops.WhoAmI(ctx)}
		return actions.RebootMany(ctx, ops, r.s.Resolver, req.Nodes, req.MaxUnavailable, opts, sink)
	case "drain":
		return eachNode(req.Nodes, func(n string) error { return actions.Drain(ctx, ops, n, drainOptions(req.Drain), sink) })
	case "cordon":
		return eachNode(req.Nodes, func(n string) error { return actions.Cordon(ctx, ops, n, sink) })
	case "uncordon":
		return eachNode(req.Nodes, func(n string) error { return actions.Uncordon(ctx, ops, n, sink) })
	case "restart-service":
		return eachNode(req.Nodes, func(n string) error {
			node, err := r.s.Node(ctx, n)
			if err != nil {
				return err
			}
			return actions.RestartService(ctx, r.s.Resolver, node, req.Service, sink)
		})
	}
	return fmt.Errorf("unknown action %q", req.Kind)
}

// eachNode runs f for every node, one after another, and joins the failures.
func eachNode(nodes []string, f func(string) error) error {
	var errs []error
	for _, n := range nodes {
		errs = append(errs, f(n))
	}
	return errors.Join(errs...)
}

func drainOptions(d ui.DrainChoices) cluster.DrainOptions {
	return cluster.DrainOptions{GracePeriodSeconds: d.GracePeriodSeconds, Timeout: d.Timeout, IgnoreDaemonSets: d.IgnoreDaemonSets,
		DeleteEmptyDirData: d.DeleteEmptyDirData, Force: d.Force, DisableEviction: d.DisableEviction}
}
