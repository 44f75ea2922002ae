// Package request declares one type per action the console and the headless commands ask for. A request
// is plain data: actions.Runner finds the handler registered for its type and runs it, so a new action is
// a new type here, its handler in a feature package under actions/, and one Register call beside that
// handler (docs/recipes.md). This package imports neither client-go nor SSH nor Bubble Tea, so the console
// can build requests freely.
package request

import (
	"fmt"
	"strings"
	"time"

	"github.com/wmcon/wmcon/config"
)

// Request is one action to run on some nodes.
type Request interface {
	// Action names the action as its Events do ("reboot", "drain", ...).
	Action() string
	// Targets are the nodes it acts on, in order.
	Targets() []string
	// Title is how a panel or a log names the run ("reboot ip-127-0-1-5", "restart-service node kubelet").
	Title() string
	// Audit is what the run's audit records say beside its action and targets, and whether it is audited
	// at all: the Runner reads it, so it needs to know no request type.
	Audit() Audit
}

// Audit is how the audit log records a run of a request. A run that only reads (a preview, a dry run, a
// watch, a status) has Changes false and is not audited; every other run gets an intent record before it
// starts and one outcome record per target.
type Audit struct {
	Changes bool
	Options string // the options it runs with, as its records show them ("drain: --ignore-daemonsets ...")
}

// changes is the Audit of a run that changes something, with its options.
func changes(options string) Audit { return Audit{Changes: true, Options: options} }

// readsOnly is the Audit of a run that changes nothing.
var readsOnly = Audit{}

// DefaultMaxUnavailable is how many nodes a reboot, a proxy sync's reboot or an upgrade takes out of
// service at once unless the user says otherwise (a MaxUnavailable of 0 means it too): one, the safe choice.
const DefaultMaxUnavailable = 1

// maxUnavailable is n, or the default for 0 (and below).
func maxUnavailable(n int) int {
	if n < 1 {
		return DefaultMaxUnavailable
	}
	return n
}

// Action names, as the Events of each action carry them.
const (
	ActionReboot         = "reboot"
	ActionDrain          = "drain"
	ActionCordon         = "cordon"
	ActionUncordon       = "uncordon"
	ActionRestartService = "restart-service"
)

// title is the usual Title: the action and its node, or its nodes in brackets.
// title is "reboot NODE", or for several nodes "reboot 5 nodes: a, b, c and 2 more".
func title(action string, nodes []string) string {
	const named = 3
	switch {
	case len(nodes) == 1:
		return action + " " + nodes[0]
	case len(nodes) <= named:
		return fmt.Sprintf("%s %d nodes: %s", action, len(nodes), strings.Join(nodes, ", "))
	}
	return fmt.Sprintf("%s %d nodes: %s and %d more", action, len(nodes), strings.Join(nodes[:named], ", "), len(nodes)-named)
}

// Cordon marks nodes unschedulable, as `oc adm cordon` does.
type Cordon struct{ Nodes []string }

func (r Cordon) Action() string    { return ActionCordon }
func (r Cordon) Targets() []string { return r.Nodes }
func (r Cordon) Title() string     { return title(r.Action(), r.Nodes) }
func (r Cordon) Audit() Audit      { return changes("") }

// Uncordon makes nodes schedulable again.
type Uncordon struct{ Nodes []string }

func (r Uncordon) Action() string    { return ActionUncordon }
func (r Uncordon) Targets() []string { return r.Nodes }
func (r Uncordon) Title() string     { return title(r.Action(), r.Nodes) }
func (r Uncordon) Audit() Audit      { return changes("") }

// Drain cordons nodes and evicts their pods, as `oc adm drain` does; the nodes stay cordoned.
type Drain struct {
	Nodes   []string
	Options DrainOptions
}

func (r Drain) Action() string    { return ActionDrain }
func (r Drain) Targets() []string { return r.Nodes }
func (r Drain) Title() string     { return title(r.Action(), r.Nodes) }
func (r Drain) Audit() Audit      { return changes("drain: " + r.Options.String()) }

// RestartService starts (or stops and starts) one of WMCO's services on the nodes' hosts.
type RestartService struct {
	Nodes   []string
	Service string
}

func (r RestartService) Action() string    { return ActionRestartService }
func (r RestartService) Targets() []string { return r.Nodes }
func (r RestartService) Title() string     { return title(r.Action(), r.Nodes) + " " + r.Service }
func (r RestartService) Audit() Audit      { return changes("service " + r.Service) }

// Reboot gracefully reboots Windows nodes: cordon, drain, Restart-Computer over SSH, wait for Ready,
// uncordon. At most MaxUnavailable reboot at once; after a failure no further one starts.
type Reboot struct {
	Nodes          []string
	Drain          DrainOptions
	MaxUnavailable int // 0 = DefaultMaxUnavailable
	// Zero durations take the defaults (config.RebootDownTimeout, ...; WithDefaults fills them in).
	DownTimeout  time.Duration // for the host to stop answering after Restart-Computer
	UpTimeout    time.Duration // for SSH to answer again once down
	ReadyTimeout time.Duration // for the kubelet to run and the node to be Ready once SSH is back
}

func (r Reboot) Action() string    { return ActionReboot }
func (r Reboot) Targets() []string { return r.Nodes }
func (r Reboot) Title() string     { return title(r.Action(), r.Nodes) }

// NewReboot is the reboot of nodes with the drain options the user chose (the console's confirmation),
// one at a time, its waits left to their defaults.
func NewReboot(nodes []string, drain DrainOptions) Reboot {
	return Reboot{Nodes: nodes, Drain: drain, MaxUnavailable: DefaultMaxUnavailable}
}

// WithDefaults is r with every zero limit replaced by its default.
func (r Reboot) WithDefaults() Reboot {
	r.MaxUnavailable = maxUnavailable(r.MaxUnavailable)
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&r.DownTimeout, config.RebootDownTimeout}, {&r.UpTimeout, config.RebootUpTimeout}, {&r.ReadyTimeout, config.RebootReadyTimeout}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	return r
}

// Audit records the limits the reboot runs with, defaults included.
func (r Reboot) Audit() Audit {
	r = r.WithDefaults()
	return changes(fmt.Sprintf("max unavailable %d; drain: %s; down timeout %s, up timeout %s, ready timeout %s",
		r.MaxUnavailable, r.Drain, r.DownTimeout, r.UpTimeout, r.ReadyTimeout))
}

// ActionProxySync names the proxy sync, as its Events do.
const ActionProxySync = "proxy-sync"

// ProxySync writes the cluster-wide proxy to Windows nodes (HTTP_PROXY, HTTPS_PROXY, NO_PROXY as machine
// variables, the trusted CA bundle), then asks whether to give the changed nodes the graceful reboot their
// services need to see it, with Drain and MaxUnavailable. No Nodes = every Windows node.
type ProxySync struct {
	Nodes          []string
	Drain          DrainOptions
	MaxUnavailable int // 0 = DefaultMaxUnavailable
}

func (r ProxySync) Action() string    { return ActionProxySync }
func (r ProxySync) Targets() []string { return r.Nodes }
func (r ProxySync) Audit() Audit {
	return changes(fmt.Sprintf("on reboot: max unavailable %d; drain: %s", maxUnavailable(r.MaxUnavailable), r.Drain.String()))
}
func (r ProxySync) Title() string {
	if len(r.Nodes) == 0 {
		return "sync the cluster proxy to every Windows node"
	}
	return "sync the cluster proxy to " + strings.Join(r.Nodes, ", ")
}

// ActionMirrorsApply names the registry mirrors' apply, as its Events do.
const ActionMirrorsApply = "mirrors-apply"

// MirrorsApply replaces the registries directory (containerd's hosts.toml files rendered from the cluster's
// mirror sets) on Windows nodes, Concurrency at once (0 = the action's default).
type MirrorsApply struct {
	Nodes       []string
	Concurrency int
}

func (r MirrorsApply) Action() string    { return ActionMirrorsApply }
func (r MirrorsApply) Targets() []string { return r.Nodes }
func (r MirrorsApply) Audit() Audit      { return changes(fmt.Sprintf("--concurrency=%d", r.Concurrency)) }
func (r MirrorsApply) Title() string {
	if len(r.Nodes) == 1 {
		return "apply registry mirrors to " + r.Nodes[0]
	}
	return fmt.Sprintf("apply registry mirrors to %d nodes", len(r.Nodes))
}
