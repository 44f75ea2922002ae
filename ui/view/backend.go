package view

import (
	"context"
	"strings"
	"sync"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/logview"
)

// Backend is everything the console reads and runs through, in one place: the session's in the real
// console (the demo's or the cluster's, ui never knows which), fakes in tests. Each is optional: a console
// without one leaves the keys and views that need it off, which is how a test narrows the console to
// what it checks.
type Backend struct {
	Runner Runner            // runs actions (reboot, drain, ...); nil leaves the action keys off
	Triage TriageFunc        // checks a node for the health view; nil leaves it off
	Logs   logview.StartFunc // streams a node's service logs for the log view; nil leaves it off
	// Mirrors reads the nodes' registry mirrors for the Mirrors pane; nil lists the mirror sets only.
	Mirrors MirrorsFunc
	// NodeDetail reads a node's pods, events and YAML for its details view; nil shows the snapshot only.
	NodeDetail NodeDetailFunc
	// Doctor checks the cluster's prerequisites for the Doctor view (D); nil leaves it off.
	Doctor DoctorFunc
	// Proxy reads the cluster proxy and the nodes' copies for the Proxy view (P); nil leaves it off.
	Proxy ProxyFunc
	// DrainPlan reads what a drain would evict for the reboot and drain confirmations; nil shows none.
	DrainPlan DrainPlanFunc
	// Metrics reads the nodes' CPU, memory, disk and network for the Nodes pane's columns and the
	// sparklines (see Options.MetricsInterval); nil leaves the columns off.
	Metrics MetricsFunc
}

// Runner starts actions (actions.Runner in the real console). Run blocks until the action ends; it reports
// through sink.
type Runner interface {
	Run(ctx context.Context, req request.Request, sink event.Sink) error
}

// The backend's reads, each a function of the session.
type (
	// TriageFunc checks one node's health (actions.Triage with the session's backends).
	TriageFunc func(ctx context.Context, node string) (diagnosis.Report, error)
	// DoctorFunc checks the cluster's prerequisites for Windows nodes (actions.Doctor with the session's clients).
	DoctorFunc func(ctx context.Context) (diagnosis.Report, error)
	// NodeDetailFunc reads what a node's details view adds to the snapshot (cluster.NodeDetail).
	NodeDetailFunc func(ctx context.Context, node string) (model.NodeDetail, error)
	// ProxyFunc reads the cluster-wide proxy and every Windows node's copy of it (the session's Proxy).
	ProxyFunc func(ctx context.Context) (model.ProxyReport, error)
	// MirrorsFunc renders the registries tree and reads every Windows node's copy back (the session's Mirrors).
	MirrorsFunc func(ctx context.Context) (model.MirrorsReport, error)
	// DrainPlanFunc reads what draining nodes with opts would do, changing nothing (session.DrainPlans): the
	// reboot and drain confirmations show it, so the PodDisruptionBudgets that would hold the drain up are
	// known before Run.
	DrainPlanFunc func(ctx context.Context, nodes []string, opts request.DrainOptions) ([]model.DrainPlan, error)
	// MetricsFunc reads the figures of the nodes (the session's MetricsFeed.Refresh). Nodes it cannot read
	// are in the report's Errors with why.
	MetricsFunc func(ctx context.Context, nodes []model.MetricsTarget) model.MetricsReport
)

// RunRead runs a request that changes nothing (a status, a detection, a preview) through the Runner,
// off the action panel, and returns what it reported. Such a read never asks: a question is refused,
// since a read that needs an answer would be a change, which belongs in the panel (RunAction).
func RunRead(ctx context.Context, runner Runner, req request.Request) ([]event.Event, error) {
	var mu sync.Mutex
	var events []event.Event
	err := runner.Run(ctx, req, event.EmitFunc(func(e event.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}))
	mu.Lock()
	defer mu.Unlock()
	return events, err
}

// FailureText is a failed step or action as one sentence: what failed, the error, and the hint.
func FailureText(e event.Event) string {
	parts := []string{}
	for _, s := range []string{e.Message, e.Err} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	text := strings.Join(parts, ": ")
	if e.Hint != "" {
		text += " — " + e.Hint
	}
	return text
}
