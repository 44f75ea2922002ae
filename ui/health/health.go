// Package health is the console's health view of one Windows node: the triage report (checks with status
// marks, likeliest cause first, details expandable) and the keys that act on it. It is a plain component
// (View() string, SetSize, help.KeyMap); it never acts itself but emits request messages (RestartService,
// OpenLogs, Reboot, Refresh, Close) that the root model routes.
package health

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/theme"
)

// Requests the component emits for the root model. Each names the node so the root can check that it
// still applies.
type (
	// RestartService asks to start (or restart) one of WMCO's services on the node's host.
	RestartService struct{ Node, Service string }
	// OpenLogs asks for a live tail of a service's log.
	OpenLogs struct{ Node, Service string }
	// Reboot asks for the node's graceful reboot (the root confirms first).
	Reboot struct{ Node string }
	// Refresh asks for a new triage of the node; answer with a ReportMsg (see Load).
	Refresh struct{ Node string }
	// Close asks the root to close the health view.
	Close struct{ Node string }
)

// ReportMsg delivers a triage of Node; the component ignores reports of other nodes.
type ReportMsg struct {
	Node   string
	Report diagnosis.Report
	Err    error
}

// Load runs triage off the UI goroutine and delivers its result as a ReportMsg.
func Load(ctx context.Context, node string, triage func(ctx context.Context, node string) (diagnosis.Report, error)) tea.Cmd {
	return func() tea.Msg {
		r, err := triage(ctx, node)
		return ReportMsg{Node: node, Report: r, Err: err}
	}
}

// Options configure a health view.
type Options struct {
	Node     string
	Theme    *theme.Theme   // the console's; nil: theme.New with no options
	Keys     KeyMap         // zero value: DefaultKeyMap()
	ReadOnly bool           // no restart, no reboot
	Location *time.Location // times are shown in it; nil: the local zone
	// Cluster shows a report about the whole cluster (the prerequisite doctor's) rather than a node's: the
	// title says so and the node's keys (restart, logs, reboot) are off. Node is then only the name the
	// component's messages carry (see DoctorSubject).
	Cluster bool
	// Every is how often the open view checks again by itself (0: DefaultEvery; negative: never).
	Every time.Duration
}

// DefaultEvery is how often an open health or doctor view checks again: often enough that what it shows
// is current, rarely enough that the checks (SSH to the host, API reads) cost little.
const DefaultEvery = 30 * time.Second

// tickMsg asks for the next check of node; seq matches the report it followed, so a report that came
// sooner (g, an action that ended) leaves the older tick with nothing to do.
type tickMsg struct {
	node string
	seq  int
}

// DoctorSubject is the Node a cluster report's messages carry (Options.Cluster).
const DoctorSubject = "(cluster)"

// Model is the health view of one node.
type Model struct {
	opts     Options
	styles   Styles
	marks    theme.Marks
	report   *diagnosis.Report
	err      error
	loading  bool
	cursor   int
	expanded map[string]bool
	notice   string
	metrics  *Metrics // nil: the console reads no metrics
	width    int
	height   int
	seq      int // the reports received, for tickMsg
}

// New returns a health view waiting for its first report; Init asks for it.
func New(opts Options) Model {
	if opts.Theme == nil {
		opts.Theme = theme.New(theme.Options{})
	}
	if len(opts.Keys.Close.Keys()) == 0 {
		opts.Keys = DefaultKeyMap()
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Every == 0 {
		opts.Every = DefaultEvery
	}
	return Model{opts: opts, styles: NewStyles(opts.Theme), marks: opts.Theme.Marks, loading: true, expanded: map[string]bool{}, width: 80, height: 24}
}

// Node is the node shown.
func (m Model) Node() string { return m.opts.Node }

// Loading reports whether a triage is under way.
func (m Model) Loading() bool { return m.loading }

// Report is the report shown, if any.
func (m Model) Report() (diagnosis.Report, bool) {
	if m.report == nil {
		return diagnosis.Report{}, false
	}
	return *m.report, true
}

// Selected is the check under the cursor.
func (m Model) Selected() (diagnosis.Check, bool) {
	if m.report == nil || m.cursor >= len(m.report.Checks) {
		return diagnosis.Check{}, false
	}
	return m.report.Checks[m.cursor], true
}

// SetSize sets the area the view may fill.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = max(20, width), max(3, height)
}

// Init asks the root for the first triage.
func (m Model) Init() tea.Cmd { return request(Refresh{Node: m.opts.Node}) }

// Refresh asks the root for a new triage and shows that a check is under way (the g key, and the root
// after an action on the node ended).
func (m *Model) Refresh() tea.Cmd {
	m.loading, m.notice = true, ""
	return request(Refresh{Node: m.opts.Node})
}

func request(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// Update handles reports and keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case ReportMsg:
		if msg.Node == m.opts.Node {
			m.setReport(msg)
			return m, m.nextCheck()
		}
	case tickMsg:
		if msg.node == m.opts.Node && msg.seq == m.seq && !m.loading {
			return m, m.Refresh()
		}
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	}
	return m, nil
}

// nextCheck schedules the check that follows a report while the view is open.
func (m *Model) nextCheck() tea.Cmd {
	m.seq++
	if m.opts.Every < 0 {
		return nil
	}
	next := tickMsg{node: m.opts.Node, seq: m.seq}
	return tea.Tick(m.opts.Every, func(time.Time) tea.Msg { return next })
}

// setReport shows a new report, keeping the cursor on the same check when it is still there.
func (m *Model) setReport(msg ReportMsg) {
	m.loading, m.err, m.notice = false, msg.Err, ""
	if msg.Err != nil {
		return
	}
	selected, hadSelection := m.Selected()
	first := m.report == nil
	r := msg.Report
	m.report, m.cursor = &r, 0
	if hadSelection {
		if i := r.Index(selected.ID); i >= 0 {
			m.cursor = i
		}
	}
	if first && len(r.Checks) > 0 && r.Checks[0].Status != diagnosis.CheckOK {
		m.expanded[r.Checks[0].ID] = true // the likeliest cause, opened
	}
}

func (m Model) handleKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k := m.keys()
	node := m.opts.Node
	m.notice = ""
	switch {
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.Toggle):
		if c, ok := m.Selected(); ok {
			m.expanded[c.ID] = !m.expanded[c.ID]
		}
	case key.Matches(msg, k.Restart):
		c, _ := m.Selected()
		m.notice = "restart of " + c.Service + " requested"
		return m, request(RestartService{Node: node, Service: c.Service})
	case key.Matches(msg, k.Logs):
		svc := m.logService()
		m.notice = "opening the log of " + svc
		return m, request(OpenLogs{Node: node, Service: svc})
	case key.Matches(msg, k.Reboot):
		return m, request(Reboot{Node: node})
	case key.Matches(msg, k.Refresh):
		return m, m.Refresh()
	case key.Matches(msg, k.Close):
		return m, request(Close{Node: node})
	case m.opts.Cluster:
	case m.opts.ReadOnly && (msg.String() == "r" || msg.String() == "R"):
		m.notice = "read-only: restart and reboot are disabled"
	case msg.String() == "r":
		m.notice = "nothing to restart here: select a stopped service"
	}
	return m, nil
}

func (m *Model) move(d int) {
	if m.report == nil || len(m.report.Checks) == 0 {
		return
	}
	m.cursor = min(max(0, m.cursor+d), len(m.report.Checks)-1)
}

// logService is the service whose log l opens: the selected check's, else the kubelet's.
func (m Model) logService() string {
	if c, ok := m.Selected(); ok && c.Service != "" {
		return c.Service
	}
	return "kubelet"
}

// keys is the key map with the actions that do not apply right now disabled, so they neither match nor
// show in help.
func (m Model) keys() KeyMap {
	k := m.opts.Keys
	c, ok := m.Selected()
	k.Restart.SetEnabled(!m.opts.ReadOnly && !m.opts.Cluster && ok && c.Restartable)
	k.Reboot.SetEnabled(!m.opts.ReadOnly && !m.opts.Cluster)
	k.Logs.SetEnabled(!m.opts.Cluster)
	k.Toggle.SetEnabled(ok)
	return k
}

// ShortHelp lists the keys that work now (help.KeyMap).
func (m Model) ShortHelp() []key.Binding { return binding.Enabled(m.keys().short()...) }

// FullHelp lists every key that works now (help.KeyMap).
func (m Model) FullHelp() [][]key.Binding {
	var out [][]key.Binding
	for _, g := range m.keys().full() {
		if bs := binding.Enabled(g...); len(bs) > 0 {
			out = append(out, bs)
		}
	}
	return out
}
