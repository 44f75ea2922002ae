// Package restart starts (or stops and starts) one of WMCO's services on a node's host and waits until it
// runs.
package restart

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

func init() { actions.Register(runRestartService) }

// runRestartService restarts the service on each node in turn.
func runRestartService(ctx context.Context, b actions.Backends, req request.RestartService, sink event.Sink) error {
	return rollout.Each(req.Nodes, func(n string) error {
		node, err := b.FindNode(ctx, n)
		if err != nil {
			return err
		}
		return RestartService(ctx, b.Hosts, node, req.Service, sink)
	})
}

// RestartService brings one of WMCO's services on a node's host back: a stopped service is started
// (Windows starts its stopped dependencies first), a running one is stopped and started again. It
// checks afterwards that the service runs, and reports every step to sink.
func RestartService(ctx context.Context, hosts actions.HostResolver, node model.NodeInfo, service string, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: request.ActionRestartService, Target: node.Name}
	fail := func(step string, err error, hint string) error {
		r.Failed(step, err, hint)
		r.Finish(outcomeOfRestart(ctx), "service "+service+" not restarted", hint)
		return fmt.Errorf("restart %s on %s: %w", service, node.Name, err)
	}
	if err := checkWMCOService(service); err != nil {
		return fail("check", err, "name one of WMCO's services")
	}
	if !node.Windows {
		return fail("check", fmt.Errorf("%s is not a Windows node: restart-service manages WMCO's services on Windows hosts only", node.Name),
			"pick a Windows node; on a Linux node restart the service with 'oc debug node/"+node.Name+"'")
	}
	if hosts == nil {
		return fail("connect", errors.New("no SSH access to Windows hosts is configured"), "give wmcon an SSH key (the cloud-private-key secret or --ssh-key)")
	}
	r.Started("query", "reading the state of "+service)
	h, err := hosts.Host(ctx, node)
	if err != nil {
		return fail("query", err, "fix SSH access to the node first ("+event.Run("triage", node.Name)+")")
	}
	st, err := h.ServiceQuery(ctx, service)
	if err != nil {
		return fail("query", err, "fix SSH access to the node first ("+event.Run("triage", node.Name)+")")
	}
	if !st.Exists {
		return fail("query", fmt.Errorf("service %s is not installed on the host", service),
			"WMCO installs it when it configures the node: remove the node's "+config.VersionAnnotation+" annotation to have it reconfigured")
	}
	r.Done("query", service+" is "+stateText(st.State))
	if st.State == remote.ServiceRunning || st.State == remote.ServiceStartPending {
		if err := stopStep(ctx, r, h, service); err != nil {
			return fail("stop", err, stopHint(node.Name, service, err))
		}
	}
	r.Started("start", "starting "+service)
	if err := h.StartService(ctx, service); err != nil {
		return fail("start", err, "read its log to see why it does not start: "+event.RunLogs(node.Name, service))
	}
	r.Done("start", service+" is running")
	r.Finish(event.Succeeded, service+" running on "+node.Name, "")
	return nil
}

// serviceStopper stops a service: restart's and deconfigure's stop step.
type serviceStopper interface {
	StopService(ctx context.Context, name string) error
}

func stopStep(ctx context.Context, r event.Reporter, h serviceStopper, service string) error {
	r.Started("stop", "stopping "+service)
	if err := h.StopService(ctx, service); err != nil {
		return err
	}
	r.Done("stop", service+" stopped")
	return nil
}

// stopHint explains a refused stop: Windows will not stop a service that running services depend on.
func stopHint(node, service string, err error) string {
	reboot := event.Run("reboot", node)
	if !errors.Is(err, remote.ErrServiceHasDependents) {
		return "retry; if the service hangs, reboot the node: " + reboot
	}
	var deps []string
	for _, s := range config.Services {
		for _, d := range s.DependsOn {
			if d == service {
				deps = append(deps, s.Name)
			}
		}
	}
	return "services depending on it are running (" + strings.Join(deps, ", ") + "): restart those too, dependents first, or reboot the node: " + reboot
}

func stateText(s remote.ServiceState) string {
	if s == remote.ServiceMissing {
		return "missing"
	}
	return strings.ToLower(string(s))
}

func outcomeOfRestart(ctx context.Context) event.Outcome {
	if ctx.Err() != nil {
		return event.Cancelled
	}
	return event.Failed
}

// checkWMCOService refuses names that are not WMCO's services, listing those that are.
func checkWMCOService(name string) error {
	if _, ok := config.ServiceByName(name); ok {
		return nil
	}
	var names []string
	for _, s := range config.Services {
		names = append(names, s.Name)
	}
	return fmt.Errorf("%q is not one of WMCO's services (%s)", name, strings.Join(names, ", "))
}
