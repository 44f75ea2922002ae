package configure

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/nodeops"
	"github.com/wmcon/wmcon/actions/request"
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
	StepRemoveHNS    = "remove-hns"
	StepRemoveFiles  = "remove-files"
	StepDeleteNode   = "delete-node"
)

// DeconfigureCluster is what deconfiguring needs from the cluster; cluster.Ops has it.
type DeconfigureCluster interface {
	actions.NodeOps
	NodeExists(ctx context.Context, name string) (bool, error)
	DeleteNode(ctx context.Context, name string) (bool, error)
}

var _ DeconfigureCluster = (*cluster.Ops)(nil)

// DeconfigurePaths are what a configuration leaves on a host, removed by Deconfigure: the node's
// directories, its kubelet certificates, CNI state and the log directory of each service.
func DeconfigurePaths() []string {
	paths := []string{nodeconfig.K8sDir, nodeconfig.CNIStateDir, `C:\var\lib\kubelet`, nodeconfig.HNSModulePath}
	for _, s := range config.Services {
		if s.LogDir != "" {
			paths = append(paths, `C:\var\log\`+s.LogDir)
		}
	}
	return paths
}

// DeconfigureHost is what deconfiguring changes on a host: its services, its HNS networks and its files.
type DeconfigureHost interface {
	ServiceStates(ctx context.Context, names ...string) (map[string]remote.ServiceState, error)
	StopService(ctx context.Context, name string) error
	DeleteService(ctx context.Context, name string) error
	PathsExist(ctx context.Context, paths []string) (map[string]bool, error)
	RemovePaths(ctx context.Context, paths []string) error
	remote.Networks
}

// Deconfigure reverses Configure, as WMCO does when a BYOH host is removed: cordon and drain the Node,
// stop and delete the node services (dependents first), remove the node's files and directories, and
// delete the Node. The host stays reachable over SSH. Every step skips what is already gone.
func Deconfigure(ctx context.Context, c DeconfigureCluster, h DeconfigureHost, node string, drain request.DrainOptions, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: DeconfigureAction, Target: node}
	step := ""
	fail := func(err error, hint string) error {
		r.Failed(step, err, hint)
		r.Finish(event.OutcomeOf(ctx), "deconfiguration of "+node+" stopped at "+step, hint)
		return fmt.Errorf("deconfigure %s: %w", node, err)
	}
	again := event.Run("deconfigure", node) + " again: it skips what is already removed"
	exists, err := c.NodeExists(ctx, node)
	if err != nil {
		step = nodeops.StepCordon
		return fail(err, "check access to the cluster")
	}
	if exists {
		step = nodeops.StepCordon
		if _, err := nodeops.CordonStep(ctx, r, c, node); err != nil {
			r.Finish(event.OutcomeOf(ctx), "deconfiguration of "+node+" stopped at "+step, again)
			return fmt.Errorf("deconfigure %s: %w", node, err)
		}
		step = nodeops.StepDrain
		if err := nodeops.DrainStep(ctx, r, c, node, drain); err != nil {
			hint := "the node is cordoned; resolve what blocks the drain, then " + again
			r.Finish(event.OutcomeOf(ctx), "deconfiguration of "+node+" stopped at "+step, hint)
			return &nodeops.PartialError{Node: node, State: "cordoned", Hint: hint, Err: err}
		}
	}
	step = StepStopServices
	r.Started(step, "stopping and deleting the node services")
	removed, err := removeServices(ctx, h)
	if err != nil {
		return fail(err, again)
	}
	r.Done(step, servicesRemovedText(removed))
	step = StepRemoveHNS
	r.Started(step, "removing the hybrid overlay's HNS networks")
	msg, err := removeHNSNetworks(ctx, h)
	if err != nil {
		return fail(err, again)
	}
	r.Done(step, msg)
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
	msg = "node deleted"
	if !deleted {
		msg = "no node to delete"
	}
	r.Done(step, msg)
	r.Finish(event.Succeeded, node+" deconfigured; the host stays reachable over SSH", "")
	return nil
}

// removeServices stops and deletes every WMCO service the host has, dependents first.
func removeServices(ctx context.Context, h DeconfigureHost) ([]string, error) {
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

// removeHNSNetworks removes the HNS networks hybrid-overlay-node created, with the hns.psm1 module WMCO
// installs; it must run before the module's directory is removed. Without the module there is nothing to
// read them with: the step says so.
func removeHNSNetworks(ctx context.Context, h DeconfigureHost) (string, error) {
	module := nodeconfig.HNSModulePath
	has, err := h.PathsExist(ctx, []string{module})
	if err != nil {
		return "", err
	}
	if !has[module] {
		return "no " + module + " on the host (the payload had none): HNS networks not checked", nil
	}
	present, err := h.HNSNetworks(ctx, module)
	if err != nil {
		return "", err
	}
	var remove []string
	for _, n := range present {
		if slices.Contains(nodeconfig.HNSNetworks, n) {
			remove = append(remove, n)
		}
	}
	if len(remove) == 0 {
		return "no hybrid overlay HNS network", nil
	}
	if err := h.RemoveHNSNetworks(ctx, module, remove); err != nil {
		return "", err
	}
	return "removed " + strings.Join(remove, ", "), nil
}

func servicesRemovedText(removed []string) string {
	if len(removed) == 0 {
		return "no node services installed"
	}
	return "removed " + strings.Join(removed, ", ")
}
