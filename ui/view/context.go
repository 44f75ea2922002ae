package view

import (
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/wmcon/wmcon/ui/keymap"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/theme"
)

// Options are the choices main makes when it starts the console.
type Options struct {
	ReadOnly bool                 // hide and refuse every action that changes the cluster or a host
	NoColor  bool                 // render without colours (also forced by the NO_COLOR environment variable)
	Theme    string               // the palette's name (theme.Names); "" is dark. NoColor wins over it
	Mouse    bool                 // enable wheel scrolling and click-to-select
	ASCII    bool                 // draw marks with ASCII characters only (!, ->, >) for limited terminals
	Profile  colorprofile.Profile // the terminal's colours; a profile without colours turns them off (Run detects it)
	Now      func() time.Time     // clock for ages; tests inject a fixed one (nil: time.Now)
	// Tick schedules the console's timed work (metrics refreshes, age updates): nil is tea.Tick; a test
	// injects its own to stand for minutes of a console at rest without waiting for them.
	Tick    func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
	Backend // what the console reads and runs through

	// Hosts are addresses of unconfigured Windows hosts that C offers to configure besides the selected
	// node's (the demo's bare host); one that has become a node is no longer offered.
	Hosts []string
	// KeyFile is a private key file the guided setup offers in its key step (the fresh demo's, which its
	// bare hosts accept); "" offers none.
	KeyFile string
	// KeyOut is where a generated ed25519 key goes unless the user says otherwise (backend.Sandbox.KeyOut:
	// the demo's private directory, else ~/.ssh/wmcon_windows_ed25519); "" starts the field empty.
	KeyOut string
	// MetricsInterval is how often Backend.Metrics is read (0: every 30 s); MetricsWarmup, when set, is
	// when the second read comes (a source that needs two reads for its rates).
	MetricsInterval time.Duration
	MetricsWarmup   time.Duration
	// PodMetricsInterval is how often Backend.PodMetrics is read for each node a view shows (0: every
	// 30 s); PodMetricsWarmup, when set, is when the second read comes if the first had no CPU rate yet.
	PodMetricsInterval time.Duration
	PodMetricsWarmup   time.Duration
}

// ProgramContext is what every part of the console reads: the options as main gave them (the backend
// among them), the sizes, and the theme, styles and keys built from them. The root builds it once
// (ui.NewProgramContext) and only the sizes change afterwards; the root and every view share one pointer,
// so no view keeps its own copy of configuration or of a backend function.
type ProgramContext struct {
	Options
	Width, Height int
	Layout        layout.Layout
	Theme         *theme.Theme // handed to every component (health, logs) so all look alike
	Styles        styles.Styles
	Keys          keymap.Map
	Marks         theme.Marks // the theme's marks, which rows, dialogs and views draw with
}

// CanChange says whether the console may change the cluster or a host: it has a runner and is not
// read-only. The keys of every change are on only then.
func (c *ProgramContext) CanChange() bool { return c.Runner != nil && !c.ReadOnly }

// Resize records a new terminal size and recomputes the layout.
func (c *ProgramContext) Resize(width, height int, actionPanelOpen bool) {
	c.Width, c.Height = width, height
	c.Layout = layout.Compute(width, height, actionPanelOpen)
}
