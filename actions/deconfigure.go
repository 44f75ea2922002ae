package actions

import (
	"context"
	"fmt"
	"strings"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/remote"
)

// DeconfigureAction is the action name deconfigure events carry.
const DeconfigureAction = "deconfigure"

// Steps of a deconfiguration.
const (
	StepStopServices = "remove-services"
	StepRemoveFiles  = "remove-files"
	StepDeleteNode   = "delete-node"
)

// DeconfigureCluster is what deconfiguring needs from the cluster; cluster.Ops has it.
type DeconfigureCluster interface {
	NodeOps
	NodeExists(ctx context.Context, name string) (bool, error)
	DeleteNode(ctx context.Context, name string) (bool, error)
}

var _ DeconfigureCluster = (*cluster.Ops)(nil)

// DeconfigurePaths are what a configuration leaves on a host, removed by Deconfigure: the node's
// directories, its kubelet certificates, CNI state and the log directory of each service.
func DeconfigurePaths() []string {
	paths := []string{nodeconfig.K8sDir, nodeconfig.CNIStateDir, `C:\var\lib\kubelet`, `C:\Temp\hns.psm1`}
	for _, s := range config.Services {
		if s.LogDir != "" {
			paths = append(paths, `C:\var\log\`+s.LogDir)
		}
	}
	return paths
}

// Deconfigure reverses Configure, as WMCO does when a BYOH host is removed: cordon and drain the Node,
// stop and delete the node services (dependents first), remove the node's files and directories, and
// delete the Node. The host stays reachable over SSH. Every step skips what is already gone.
func Deconfigure(ctx context.Context, c DeconfigureCluster, h remote.Host, node string, drain cluster.DrainOptions, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: DeconfigureAction, Target: node}
	step := ""
	fail := func(err error, hint string) error {
		r.Failed(step, err, hint)
		r.Finish(outcomeOf(ctx), "deconfiguration of "+node+" stopped at "+step, hint)
		return fmt.Errorf("deconfigure %s: %w", node, err)
	}
	again := "run wmcon deconfigure " + node + " again: it skips what is already removed"
	exists, err := c.NodeExists(ctx, node)
	if err != nil {
		step = StepCordon
		return fail(err, "check access to the cluster")
	}
	if exists {
		step = StepCordon
		r.Started(step, "cordoning "+node)
		if _, err := c.Cordon(ctx, node); err != nil {
			return fail(err, again)
		}
		r.Done(step, "cordoned")
		step = StepDrain
		r.Started(step, "draining "+node)
		if err := c.Drain(ctx, node, drain, func(e cluster.DrainEvent) { r.Log(step, e.Message) }); err != nil {
			return fail(err, "the node is cordoned; resolve what blocks the drain, then "+again)
		}
		r.Done(step, "drained")
	}
	step = StepStopServices
	r.Started(step, "stopping and deleting the node services")
	removed, err := removeServices(ctx, h)
	if err != nil {
		return fail(err, again)
	}
	r.Done(step, servicesRemovedText(removed))
	step = StepRemoveFiles
	r.Started(step, "removing the node's files and directories")
	if err := h.RemovePaths(ctx, DeconfigurePaths()); err != nil {
		return fail(err, again)
	}
	r.Done(step, "removed "+strings.Join(DeconfigurePaths(), ", "))
	step = StepDeleteNode
	r.Started(step, "deleting node "+node)
	deleted, err := c.DeleteNode(ctx, node)
	if err != nil {
		return fail(err, again)
	}
	msg := "node deleted"
	if !deleted {
		msg = "no node to delete"
	}
	r.Done(step, msg)
	r.Finish(event.Succeeded, node+" deconfigured; the host stays reachable over SSH", "")
	return nil
}

// removeServices stops and deletes every WMCO service the host has, dependents first.
func removeServices(ctx context.Context, h remote.Host) ([]string, error) {
	var names []string
	for i := len(config.Services) - 1; i >= 0; i-- {
		names = append(names, config.Services[i].Name)
	}
	states, err := h.ServiceStates(ctx, names...)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, n := range names {
		st, ok := states[n]
		if !ok {
			continue
		}
		if st != remote.ServiceStopped {
			if err := h.StopService(ctx, n); err != nil {
				return removed, err
			}
		}
		if err := h.DeleteService(ctx, n); err != nil {
			return removed, err
		}
		removed = append(removed, n)
	}
	return removed, nil
}

func servicesRemovedText(removed []string) string {
	if len(removed) == 0 {
		return "no node services installed"
	}
	return "removed " + strings.Join(removed, ", ")
}
