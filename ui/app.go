package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/helpview"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/view"
)

// snapshotMsg carries a new snapshot from the watcher; snapshotsClosedMsg says the watcher has stopped.
type (
	snapshotMsg        struct{ snap *model.Snapshot }
	snapshotsClosedMsg struct{}
)

// waitForSnapshot waits for the next snapshot. When several are queued it keeps only the newest, since
// each one is complete and rendering the older ones would be wasted work.
func waitForSnapshot(ch <-chan *model.Snapshot) tea.Cmd {
	return func() tea.Msg {
		snap, ok := <-ch
		if !ok {
			return snapshotsClosedMsg{}
		}
		for {
			select {
			case next, ok := <-ch:
				if !ok {
					return snapshotMsg{snap} // the closed channel is seen on the next wait
				}
				snap = next
			default:
				return snapshotMsg{snap}
			}
		}
	}
}

// Model is the root of the console: the list panes, with the views opened over them on a stack (see
// view.Component), the action panel and the header, status and help lines around them.
type Model struct {
	ctx          *view.ProgramContext // shared with every view; only the sizes change after New
	snapshots    <-chan *model.Snapshot
	snap         *model.Snapshot
	watchStopped bool

	panes     []listPane
	active    paneKind
	filtering bool // the status line is the filter prompt
	filter    textinput.Model
	help      help.Model
	status    string // a one-line message for the user, cleared by the next key

	stack   []view.Component // the views over the list, top last
	panel   *actionPanel     // the running or last action, nil when closed
	running *runningAction   // the action in progress or last run, nil before the first
	mirrors mirrorsState     // the nodes' registry mirrors (Mirrors pane)
	metrics metricsState     // the nodes' live metrics (Nodes pane columns, sparklines)
	nextID  uint64           // numbers action runs
	// setupOffer offers the guided setup on a cluster with no Windows nodes (wizard_root.go).
	setupOffer    string
	setupOffered  bool
	pendingSelect string        // a node to select once the snapshots list it (the guided setup's new node)
	ageGen        uint64        // the live age tick's generation (see agetick.go)
	agePace       time.Duration // how often the live age tick comes
	youngest      youngestOf    // the newest creation time of the snapshot it was read from
	// podMetrics are the figures of the pods of the nodes the open views show (podmetrics.go).
	podMetrics podMetricsState
}

// New builds the console around a stream of snapshots.
func New(ctx view.ProgramContext, snapshots <-chan *model.Snapshot) Model {
	m := Model{ctx: &ctx, snapshots: snapshots, panes: newListPanes()}
	m.panes[paneNodes].metricsOn = ctx.Metrics != nil
	m.filter = dialog.NewTextInput(&ctx.Styles)
	m.help = newHelp(m.ctx)
	return m
}

// newHelp is a help model styled by the theme and as wide as the terminal.
func newHelp(ctx *view.ProgramContext) help.Model {
	hm := help.New()
	hm.Styles = helpStyles(&ctx.Styles)
	hm.SetWidth(ctx.Width)
	return hm
}

func helpStyles(st *styles.Styles) help.Styles {
	return help.Styles{
		ShortKey: st.HelpKey, ShortDesc: st.HelpDesc, ShortSeparator: st.Muted, Ellipsis: st.Muted,
		FullKey: st.HelpKey, FullDesc: st.HelpDesc, FullSeparator: st.Muted,
	}
}

// Init starts waiting for snapshots. The nodes' registries are read once the Nodes are listed (mirrors.go).
func (m Model) Init() tea.Cmd {
	if m.snapshots == nil {
		return nil
	}
	return waitForSnapshot(m.snapshots)
}

// Update handles one message: the root's own, a key or mouse event for the top view (or the list), a
// request from a view, and otherwise a message every view on the stack may be waiting for.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case snapshotMsg:
		m.applySnapshot(msg.snap)
		var metrics tea.Cmd
		if m.metrics.reads == 0 {
			metrics = m.readMetrics() // the first read waits for the first snapshot's nodes
		}
		cmd = tea.Batch(waitForSnapshot(m.snapshots), m.broadcast(msg), m.scheduleAgeTick(), metrics, m.mirrorsAtStart())
	case ageTickMsg:
		if msg.gen == m.ageGen {
			m.ageTick()
			cmd = m.scheduleAgeTick()
		}
	case snapshotsClosedMsg:
		m.watchStopped = true
	case tea.KeyPressMsg:
		m.status = ""
		if m.running != nil && msg.String() != "esc" {
			m.running.escArmed = false // a second esc must follow the first directly
		}
		if m.unseen() {
			cmd = m.quitKey(msg)
		} else {
			cmd = m.handleKey(msg)
		}
	case tea.MouseWheelMsg, tea.MouseClickMsg:
		if !m.unseen() {
			cmd = m.handleMouse(msg)
		}
	default:
		var handled bool
		if cmd, handled = m.handleRequest(msg); !handled {
			cmd = m.broadcast(msg)
		}
	}
	m.keepCursorVisible()
	pods := m.watchPods() // before m is returned: it records the reads it starts
	return m, tea.Batch(cmd, pods)
}

// handleRequest handles what views and running actions ask of the root. It reports whether msg was one.
func (m *Model) handleRequest(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case view.OpenMsg:
		return m.push(msg.View), true
	case openHealthMsg:
		return m.openHealth(msg.node), true
	case openLogsMsg:
		return m.openLogs(msg.service, msg.nodes...), true
	case view.RunAction, confirmRebootMsg:
		return m.handleActionRequest(msg), true
	case view.FormResult:
		if msg.Confirmed {
			return m.startBatch(m.atConfirmation(msg.Request)), true
		}
		return nil, true
	case mirrorsLoadedMsg:
		m.applyMirrors(msg)
		return nil, true
	case metricsLoadedMsg:
		return m.applyMetrics(msg), true
	case metricsTickMsg:
		if msg.seq != m.metrics.seq {
			return nil, true
		}
		return m.readMetrics(), true
	case podMetricsLoadedMsg:
		return m.applyPodMetrics(msg), true
	case podMetricsTickMsg:
		return m.podMetricsTick(msg), true
	case actionEventMsg, actionQuestionMsg, actionEndedMsg:
		return m.handleActionMsg(msg), true
	}
	return m.handleWizardMsg(msg)
}

func (m *Model) resize(w, h int) {
	m.ctx.Resize(w, h, m.panel != nil)
	body := m.ctx.Layout.Body
	for k := range m.panes {
		m.panes[k].resize(body.W)
	}
	m.help.SetWidth(w)
	m.filter.SetWidth(max(10, w/2))
	m.resizeViews()
}

func (m *Model) env() rowEnv {
	return rowEnv{Now: m.ctx.Now(), Marks: m.ctx.Marks, Metrics: m.metricsEnv()}
}

func (m *Model) applySnapshot(snap *model.Snapshot) {
	if snap == nil {
		return
	}
	m.snap = snap
	m.offerSetup(snap)
	env := m.env()
	for k := range m.panes {
		if paneKind(k) != m.active && paneKind(k).spec().count != nil {
			m.panes[k].stale = true // rebuilt when shown (showPane)
			continue
		}
		m.panes[k].rebuild(snap, env, m.ctx.Layout.Body.W)
	}
	m.selectPending()
}

// showPane makes k the shown pane. A pane whose tab counts from the snapshot itself (Secrets: a row per
// node's key state, 10,000 on a large fleet) is not rebuilt with every snapshot while it is hidden — a
// Nodes list in flight sends several a second — but when it is shown again.
func (m *Model) showPane(k paneKind) tea.Cmd {
	m.active = k
	if p := m.pane(); p.stale && m.snap != nil {
		p.rebuild(m.snap, m.env(), m.ctx.Layout.Body.W)
	}
	if k == paneMirrors {
		return m.mirrorsWhenShown()
	}
	return nil
}

func (m *Model) pane() *listPane { return &m.panes[m.active] }

// unseen says the console is not drawn: the terminal is below the minimum size (the screen only asks for
// a bigger one) or its size is not known yet. Keys must not drive what nobody can see.
func (m *Model) unseen() bool { return m.ctx.Width == 0 || m.ctx.Layout.TooSmall }

// quitKey is the only key handling while the console is unseen: ctrl+c cancels a running action (as
// everywhere) or quits, q quits when nothing runs; every other key is ignored, open dialogs included.
func (m *Model) quitKey(msg tea.KeyPressMsg) tea.Cmd {
	if !key.Matches(msg, m.ctx.Keys.Quit) {
		return nil
	}
	if m.actionRunning() {
		if msg.String() == "ctrl+c" {
			m.cancelAction()
		}
		return nil
	}
	return tea.Quit
}

// handleKey routes a key: ctrl+c cancels a running action or quits (unless a dialog takes it), the top
// view gets the rest, or the list when no view is open.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	top := m.top()
	if _, dialog := top.(view.Dialog); msg.String() == "ctrl+c" && !dialog {
		if m.actionRunning() {
			m.cancelAction()
			return nil
		}
		return tea.Quit
	}
	if top == nil {
		return m.handleListKey(msg)
	}
	if _, ok := top.(view.EscCancelsAction); ok && msg.String() == "esc" && m.panel != nil {
		m.escapeAction() // the panel first: cancel what runs, or close what ended; the view stays
		return nil
	}
	return m.updateTop(msg)
}

func (m *Model) handleListKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.filtering {
		return m.handleFilterKey(msg)
	}
	if m.refuseReadOnly(msg) {
		return nil
	}
	if cmd, ok := m.handleMirrorsKey(msg); ok {
		return cmd
	}
	if cmd, ok := m.handleMachineSetsKey(msg); ok {
		return cmd
	}
	k, p := m.ctx.Keys, m.pane()
	switch {
	case msg.String() == "esc" && m.panel != nil && p.query == "":
		m.escapeAction()
	case key.Matches(msg, k.Quit):
		if m.actionRunning() {
			m.status = "an action is running: esc or ctrl+c cancels it first"
			return nil
		}
		return tea.Quit
	case key.Matches(msg, k.Help):
		return m.push(helpview.New(m.ctx, m.listHelp()))
	case key.Matches(msg, k.NextPane):
		return m.showPane((m.active + 1) % paneKind(len(m.panes)))
	case key.Matches(msg, k.PrevPane):
		return m.showPane((m.active + paneKind(len(m.panes)) - 1) % paneKind(len(m.panes)))
	case key.Matches(msg, k.Panes...):
		i, _ := k.PaneFor(msg)
		return m.showPane(paneKind(i))
	case m.moveCursor(msg):
	case key.Matches(msg, k.Filter):
		m.filtering = true
		m.filter.SetValue(p.query)
		m.filter.CursorEnd()
		return m.filter.Focus()
	case key.Matches(msg, k.ClearFilter):
		p.setQuery("")
	case key.Matches(msg, k.Open):
		return m.openDetail()
	case key.Matches(msg, k.Mark) && m.active == paneNodes:
		m.toggleMark()
	case key.Matches(msg, k.WindowsOnly) && (m.active == paneNodes || m.active == paneMachineSets):
		p.windowsOnly = !p.windowsOnly
		p.rebuild(m.snap, m.env(), m.ctx.Layout.Body.W)
	case key.Matches(msg, k.Expand, k.Collapse) && m.active == paneMachineSets:
		if p.toggleExpand(key.Matches(msg, k.Expand) && msg.String() == "right", key.Matches(msg, k.Collapse)) {
			p.rebuild(m.snap, m.env(), m.ctx.Layout.Body.W)
		}
	case key.Matches(msg, launcherKeys(m.ctx)...):
		cmd, _ := m.launch(msg)
		return cmd
	case key.Matches(msg, append(k.ActionBindings(), k.Upgrade)...):
		next, cmd := m.requestAction(msg)
		*m = next
		return cmd
	}
	return nil
}

// moveCursor handles the navigation keys of the list; it reports whether the key was one of them.
func (m *Model) moveCursor(msg tea.KeyPressMsg) bool {
	k, p := m.ctx.Keys, m.pane()
	page := max(1, m.tableHeight()-1)
	switch {
	case key.Matches(msg, k.Up):
		p.move(-1)
	case key.Matches(msg, k.Down):
		p.move(1)
	case key.Matches(msg, k.PageUp):
		p.move(-page)
	case key.Matches(msg, k.PageDown):
		p.move(page)
	case key.Matches(msg, k.Top):
		p.setCursor(0)
	case key.Matches(msg, k.Bottom):
		p.setCursor(len(p.rows) - 1)
	default:
		return false
	}
	return true
}

func (m *Model) handleFilterKey(msg tea.KeyPressMsg) tea.Cmd {
	k, p := m.ctx.Keys, m.pane()
	switch {
	case key.Matches(msg, k.ClearFilter):
		p.setQuery("")
		m.filter.SetValue("")
		m.filter.Blur()
		m.filtering = false
		return nil
	case key.Matches(msg, k.AcceptFilter):
		m.filter.Blur()
		m.filtering = false
		return nil
	case msg.String() == "up" || msg.String() == "down":
		// arrows move the selection while typing; j and k are letters of the filter
		p.move(map[string]int{"up": -1, "down": 1}[msg.String()])
		return nil
	}
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	if v := m.filter.Value(); v != p.query {
		p.setQuery(v)
	}
	return cmd
}

// openDetail opens the detail page of the selected object.
func (m *Model) openDetail() tea.Cmd {
	r, ok := m.pane().selected()
	if _, blocked := m.notice(); !ok || blocked {
		return nil
	}
	d := newDetailView(m.ctx, m.snap, detailTarget{pane: m.active, key: r.Key})
	d.metrics = m.metricsEnv()
	d.refresh()
	return m.push(d)
}

// openActionPanel shows the panel for a new action run; the layout makes room for it.
func (m *Model) openActionPanel(id ActionID, title string) {
	m.panel = &actionPanel{id: id, title: title}
	m.resize(m.ctx.Width, m.ctx.Height)
}

func (m *Model) closeActionPanel() {
	m.panel = nil
	m.resize(m.ctx.Width, m.ctx.Height)
}

// handleMouse gives a mouse event to the top view, or scrolls and selects in the list.
func (m *Model) handleMouse(msg tea.Msg) tea.Cmd {
	if m.top() != nil {
		return m.updateTop(msg)
	}
	switch msg := msg.(type) {
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.pane().move(-3)
		case tea.MouseWheelDown:
			m.pane().move(3)
		}
	case tea.MouseClickMsg:
		m.handleClick(msg)
	}
	return nil
}

// handleClick selects the row under the pointer.
func (m *Model) handleClick(msg tea.MouseClickMsg) {
	if msg.Button != tea.MouseLeft {
		return
	}
	top, height := m.tableTop(), m.tableHeight()
	row := msg.Y - top - 1 // the column header is the table's first line
	body := m.ctx.Layout.Body
	if row < 0 || row >= height-1 || msg.X < body.X || msg.X >= body.X+body.W {
		return
	}
	p := m.pane()
	if i := p.offset + row; i < len(p.rows) {
		p.setCursor(i)
	}
}

// tableTop and tableHeight locate the table inside the body: a pane notice that does not block the
// rows takes the first line.
func (m *Model) tableTop() int {
	if msg, blocking := m.notice(); msg != "" && !blocking {
		return m.ctx.Layout.Body.Y + 1
	}
	return m.ctx.Layout.Body.Y
}

func (m *Model) tableHeight() int {
	return m.ctx.Layout.Body.H - (m.tableTop() - m.ctx.Layout.Body.Y)
}

func (m *Model) keepCursorVisible() {
	m.pane().scroll(m.tableHeight() - 1)
}

// View renders the whole screen.
func (m Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "wmcon"
	if m.ctx.Mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

func (m Model) render() string {
	l := m.ctx.Layout
	if m.ctx.Width == 0 {
		return "" // no size yet: the first WindowSizeMsg follows immediately
	}
	if l.TooSmall {
		return tooSmall(m.ctx.Width, m.ctx.Height)
	}
	st := &m.ctx.Styles
	hdr := headerLines(st, m.snap, m.ctx.Now(), l.Header.W, m.ctx.ReadOnly, m.watchStopped)
	lines := []string{layout.FitLine(hdr[0], l.Header.W), layout.FitLine(hdr[1], l.Header.W), layout.FitLine(hdr[2], l.Header.W),
		layout.FitLine(m.tabsView(), l.Tabs.W)}
	body := m.bodyView()
	if m.panel != nil {
		panel := m.panel.view(st, l.Action.W, l.Action.H, m.commandKeys())
		if l.Action.X > 0 {
			body = lipgloss.JoinHorizontal(lipgloss.Top, body, panel)
		} else {
			body = body + "\n" + panel
		}
	}
	helpLine := m.help.View(m.listHelp())
	if top := m.top(); top != nil {
		helpLine = m.help.View(top)
	}
	lines = append(lines, body, layout.FitLine(m.statusView(), l.Status.W), layout.FitLine(helpLine, l.Help.W))
	return strings.Join(lines, "\n")
}

func (m Model) listHelp() listHelp {
	return listHelp{keys: m.ctx.Keys, filtering: m.filtering, pane: m.active, launchers: launcherKeys(m.ctx),
		shortLaunchers: availableLaunchers(m.ctx, false)}
}

// tabCount is the number a pane's tab shows: its own count, or its top-level rows.
func (m Model) tabCount(k paneKind) int {
	if count := k.spec().count; count != nil && m.snap != nil {
		return count(m.snap)
	}
	return m.panes[k].objectCount()
}

func (m Model) tabsView() string {
	st := &m.ctx.Styles
	tabs := make([]string, len(m.panes))
	for i := range m.panes {
		k := paneKind(i)
		label := fmt.Sprintf("%d %s", k+1, k.title())
		// No count while the pane cannot show the rows it would count (still loading, forbidden, ...).
		if _, blocked := paneNotice(m.snap, k); !blocked {
			if n := m.tabCount(k); n > 0 {
				label += fmt.Sprintf(" (%d)", n)
			}
		}
		if k == m.active {
			tabs[k] = st.TabActive.Render("[" + label + "]")
		} else {
			tabs[k] = st.TabIdle.Render(" " + label + " ")
		}
	}
	return strings.Join(tabs, " ")
}

// bodyView renders the body region, exactly Body.W × Body.H: the top view, or the list; a dialog is drawn
// centred over the view (or list) beneath it.
func (m Model) bodyView() string {
	return m.viewAt(len(m.stack))
}

// viewAt renders the stack as if its first n views were open (n = 0: the list).
func (m Model) viewAt(n int) string {
	b := m.ctx.Layout.Body
	if n == 0 {
		return m.pane().lineWidths.FitBox(m.paneView(), b.W, b.H)
	}
	top := m.stack[n-1]
	d, isDialog := top.(view.Dialog)
	if !isDialog {
		return layout.FitBox(top.View(), b.W, b.H)
	}
	return layout.Overlay(m.viewAt(n-1), d.Box(), b.W, b.H)
}

func (m Model) paneView() string {
	st, p, b := &m.ctx.Styles, &m.panes[m.active], m.ctx.Layout.Body
	notice, blocking := m.notice()
	if blocking {
		return "\n  " + st.Notice.Render(notice)
	}
	var out []string
	if notice != "" {
		out = append(out, st.Notice.Render(notice))
	}
	t := tableView{Columns: p.columns(), Widths: p.widths, Gap: p.gap, Rows: p.rows, Cursor: p.cursor,
		Offset: p.offset, Width: b.W, Height: m.tableHeight(), Cells: p.cells}
	table := renderTable(st, m.ctx.Marks, t)
	if len(p.rows) == 0 {
		table = layout.FitLine(st.ColumnHeader.Render(headerText(t.Columns, t.Widths, t.Gap)), b.W) + "\n  " + st.Muted.Render(m.emptyText())
	}
	return strings.Join(append(out, table), "\n")
}

func (m Model) emptyText() string {
	p := m.pane()
	switch {
	case p.query != "":
		return fmt.Sprintf("nothing matches %q — esc clears the filter", p.query)
	case m.active == paneNodes && p.windowsOnly:
		return "no Windows nodes — w shows all nodes"
	case m.active == paneMachineSets && p.windowsOnly:
		return "no Windows MachineSets or BYOH hosts — w shows all"
	}
	return orText(m.active.spec().empty, "no "+strings.ToLower(m.active.title()))
}

func (m Model) statusView() string {
	st, p := &m.ctx.Styles, &m.panes[m.active]
	count := filterCount(p)
	switch {
	case m.filtering:
		return m.filter.View() + "  " + st.Muted.Render(count)
	case m.status != "":
		return st.Warn.Render(m.status)
	case p.query != "":
		return st.Muted.Render("filter: ") + p.query + st.Muted.Render("  "+count+"  (/ edit, esc clear)")
	case m.active == paneNodes && p.windowsOnly:
		return st.Muted.Render("Windows nodes only (w shows all)")
	case m.active == paneMachineSets && p.windowsOnly:
		return st.Muted.Render("Windows MachineSets only (w shows all)")
	case m.setupOffer != "" && m.top() == nil:
		return st.Notice.Render(m.setupOffer)
	}
	return ""
}

// tooSmall says the terminal is below the minimum size, wrapped to it so the sizes and how to quit show
// whole; a terminal too small for the sentence gets the short form.
func tooSmall(w, h int) string {
	wrap := func(s string) []string { return strings.Split(ansi.Wrap(s, w, ""), "\n") }
	full := fmt.Sprintf("wmcon needs a terminal of at least %d×%d; this one is %d×%d — enlarge the window. q quits.",
		layout.MinWidth, layout.MinHeight, w, h)
	lines := wrap(full)
	if len(lines) > h {
		lines = wrap(fmt.Sprintf("needs %d×%d, has %d×%d; q quits", layout.MinWidth, layout.MinHeight, w, h))
	}
	if len(lines) > h { // nothing fits: the terminal shows what it can of one line
		return full
	}
	return strings.Join(lines, "\n")
}
