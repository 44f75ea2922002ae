// Package ui is wmcon's console: a Bubble Tea program that renders cluster snapshots in list panes
// (nodes, MachineSets, secrets, mirrors), opens views over them on a stack (see Component) and dispatches
// actions whose progress it shows inline.
package ui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/logview"
	"github.com/wmcon/wmcon/ui/theme"
)

// Options are the choices main makes when it starts the console.
type Options struct {
	ReadOnly bool                 // hide and refuse every action that changes the cluster or a host
	NoColor  bool                 // render without colours (also forced by the NO_COLOR environment variable)
	Mouse    bool                 // enable wheel scrolling and click-to-select
	ASCII    bool                 // draw marks with ASCII characters only (!, ->, >) for limited terminals
	Profile  colorprofile.Profile // the terminal's colours; a profile without colours turns them off (Run detects it)
	Now      func() time.Time     // clock for ages; tests inject a fixed one
	// Tick schedules the console's timed work (metrics refreshes, age updates): tea.Tick by default; a test
	// injects its own to stand for minutes of a console at rest without waiting for them.
	Tick    func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
	Runner  Runner            // runs actions (reboot, drain, ...); nil leaves the action keys off
	Triage  TriageFunc        // checks a node for the health view; nil leaves it off
	Logs    logview.StartFunc // streams a node's service logs for the log view; nil leaves it off
	Mirrors MirrorsFunc       // reads the nodes' registry mirrors for the Mirrors pane; nil lists the mirror sets only
	// Hosts are addresses of unconfigured Windows hosts that C offers to configure besides the selected
	// node's (the demo's bare host); one that has become a node is no longer offered.
	Hosts []string
	// NodeDetail reads a node's pods, events and YAML for its details view; nil shows the snapshot only.
	NodeDetail NodeDetailFunc
	// Doctor checks the cluster's prerequisites for the Doctor view (D); nil leaves it off.
	Doctor DoctorFunc
	// Proxy reads the cluster proxy and the nodes' copies for the Proxy view (P); nil leaves it off.
	Proxy ProxyFunc
	// DrainPlan reads what a drain would evict for the reboot and drain confirmations; nil shows none.
	DrainPlan DrainPlanFunc
	// Metrics reads the nodes' CPU, memory, disk and network for the Nodes pane's columns and the
	// sparklines, every MetricsInterval (default 30 s; the first time after MetricsWarmup when set); nil
	// leaves the columns off.
	Metrics         MetricsFunc
	MetricsInterval time.Duration
	MetricsWarmup   time.Duration
	// KeyFile is a private key file the guided setup offers in its key step (the fresh demo's, which its
	// bare hosts accept); "" offers none.
	KeyFile string
}

// NodeDetailFunc reads what a node's details view adds to the snapshot (cluster.NodeDetail).
type NodeDetailFunc func(ctx context.Context, node string) (model.NodeDetail, error)

// TriageFunc checks one node's health (actions.Triage with the session's backends).
type TriageFunc func(ctx context.Context, node string) (diagnosis.Report, error)

// ProgramContext is what every part of the console reads: sizes, the theme and styles, keys and flags. It
// is built once and only the sizes change afterwards; the root and every view share one, so children never
// need their own copies of configuration.
type ProgramContext struct {
	Width, Height int
	Layout        Layout
	Theme         *theme.Theme // handed to every component (health, logs) so all look alike
	Styles        Styles
	Keys          KeyMap
	ReadOnly      bool
	Mouse         bool
	Marks         Marks
	Now           func() time.Time
	Tick          func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
	Runner        Runner
	Triage        TriageFunc
	Logs          logview.StartFunc
	Mirrors       MirrorsFunc
	Hosts         []string
	NodeDetail    NodeDetailFunc
	Doctor        DoctorFunc
	Proxy         ProxyFunc
	DrainPlan     DrainPlanFunc

	Metrics         MetricsFunc
	MetricsInterval time.Duration
	MetricsWarmup   time.Duration
	KeyFile         string
}

// NewProgramContext builds the theme, the styles and the key map from the options.
func NewProgramContext(opts Options) ProgramContext {
	th := theme.New(theme.Options{NoColor: opts.NoColor, ASCII: opts.ASCII, Profile: opts.Profile})
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	tick := opts.Tick
	if tick == nil {
		tick = tea.Tick
	}
	keys := NewKeyMap()
	if opts.Runner != nil && !opts.ReadOnly {
		keys.enableNodeActions()
	}
	keys.Health.SetEnabled(opts.Triage != nil)
	keys.Logs.SetEnabled(opts.Logs != nil)
	keys.MirrorsReload.SetEnabled(opts.Mirrors != nil)
	keys.MirrorsApply.SetEnabled(opts.Mirrors != nil && opts.Runner != nil && !opts.ReadOnly)
	for _, b := range []*key.Binding{&keys.SetupNew, &keys.SetupScale, &keys.SetupDelete} {
		b.SetEnabled(opts.Runner != nil && !opts.ReadOnly)
	}
	interval := opts.MetricsInterval
	if interval <= 0 {
		interval = 30 * time.Second
	}
	return ProgramContext{
		Metrics:         opts.Metrics,
		MetricsInterval: interval,
		MetricsWarmup:   opts.MetricsWarmup,
		Runner:          opts.Runner,
		Triage:          opts.Triage,
		Logs:            opts.Logs,
		Mirrors:         opts.Mirrors,
		Hosts:           opts.Hosts,
		Theme:           th,
		Styles:          NewStyles(th),
		Keys:            keys,
		ReadOnly:        opts.ReadOnly,
		Mouse:           opts.Mouse,
		Marks:           th.Marks,
		Now:             now,
		Tick:            tick,
		NodeDetail:      opts.NodeDetail,
		Doctor:          opts.Doctor,
		Proxy:           opts.Proxy,
		DrainPlan:       opts.DrainPlan,
		KeyFile:         opts.KeyFile,
	}
}

// resize records a new terminal size and recomputes the layout.
func (c *ProgramContext) resize(width, height int, actionPanelOpen bool) {
	c.Width, c.Height = width, height
	c.Layout = ComputeLayout(width, height, actionPanelOpen)
}
