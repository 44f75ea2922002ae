package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/health"
	"github.com/wmcon/wmcon/ui/logview"
)

// mode is what the keyboard drives right now.
type mode int

const (
	modeList   mode = iota // a pane's list
	modeFilter             // typing a filter
	modeDetail             // the detail view of one object
	modeHelp               // full help
	modeHealth             // the health view of one node
	modeLogs               // the log view of a node's service
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

// Model is the root of the console.
type Model struct {
	ctx          ProgramContext
	snapshots    <-chan *model.Snapshot
	snap         *model.Snapshot
	watchStopped bool

	panes  [paneCount]listPane
	active paneKind
	mode   mode
	back   mode // where esc leaves the full help to

	filter   textinput.Model
	detail   detailTarget
	viewport viewport.Model
	help     help.Model
	status   string // a one-line message for the user, cleared by the next key

	panel    *actionPanel    // the running or last action, nil when closed
	dialog   *dialog         // a modal question, nil when none
	form     *drainForm      // the reboot/drain confirmation, nil when none
	question *questionDialog // a running action's question, nil when none
	running  *runningAction  // the action in progress or last run, nil before the first
	health   *health.Model   // the health view, nil when closed
	logs     *logview.Model  // the log view, nil when closed
	logsBack mode            // where closing the log view returns
	nextID   uint64          // numbers action runs and dialogs
}

// New builds the console around a stream of snapshots.
func New(ctx ProgramContext, snapshots <-chan *model.Snapshot) Model {
	m := Model{ctx: ctx, snapshots: snapshots, help: help.New(), viewport: viewport.New()}
	for k := range m.panes {
		m.panes[k] = newListPane(paneKind(k))
	}
	m.filter = newFilterInput(&ctx.Styles)
	m.help.Styles = helpStyles(&ctx.Styles)
	return m
}

func newFilterInput(st *Styles) textinput.Model {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "type to filter"
	styles := textinput.DefaultDarkStyles()
	styles.Cursor.Blink = false // a blinking cursor would redraw on a timer
	if st.NoColor {
		plain := textinput.StyleState{Text: lipgloss.NewStyle(), Prompt: lipgloss.NewStyle(),
			Placeholder: lipgloss.NewStyle(), Suggestion: lipgloss.NewStyle()}
		styles.Focused, styles.Blurred = plain, plain
	}
	ti.SetStyles(styles)
	return ti
}

func helpStyles(st *Styles) help.Styles {
	return help.Styles{
		ShortKey: st.HelpKey, ShortDesc: st.HelpDesc, ShortSeparator: st.Muted, Ellipsis: st.Muted,
		FullKey: st.HelpKey, FullDesc: st.HelpDesc, FullSeparator: st.Muted,
	}
}

// Init starts waiting for snapshots.
func (m Model) Init() tea.Cmd {
	if m.snapshots == nil {
		return nil
	}
	return waitForSnapshot(m.snapshots)
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if cmd, ok := m.handleHealthMsg(msg); ok {
		return m, cmd
	}
	if cmd, ok := m.handleLogsMsg(msg); ok {
		return m, cmd
	}
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case snapshotMsg:
		m.applySnapshot(msg.snap)
		cmd = waitForSnapshot(m.snapshots)
	case snapshotsClosedMsg:
		m.watchStopped = true
	case actionMsg:
		if m.panel != nil && m.panel.id == msg.ID {
			m.panel.apply(msg.Update)
		}
	case dialogResultMsg:
		m.dialog = nil
	case formResultMsg:
		m.form = nil
		if msg.Confirmed {
			cmd = m.startBatch(msg.Request)
		}
	case actionEventMsg, actionQuestionMsg, actionEndedMsg:
		cmd = m.handleActionMsg(msg)
	case tea.KeyPressMsg:
		m.status = ""
		m, cmd = m.handleKey(msg)
	case tea.MouseWheelMsg:
		m.handleWheel(msg)
	case tea.MouseClickMsg:
		m.handleClick(msg)
	}
	m.keepCursorVisible()
	return m, cmd
}

func (m *Model) resize(w, h int) {
	m.ctx.resize(w, h, m.panel != nil)
	body := m.ctx.Layout.Body
	for k := range m.panes {
		m.panes[k].resize(body.W)
	}
	m.help.SetWidth(w)
	m.filter.SetWidth(max(10, w/2))
	m.viewport.SetWidth(body.W)
	m.viewport.SetHeight(max(0, body.H-1))
	if m.health != nil {
		m.health.SetSize(body.W, body.H)
	}
	if m.logs != nil {
		m.logs.SetSize(body.W, body.H)
	}
}

func (m *Model) env() rowEnv { return rowEnv{Now: m.ctx.Now(), Marks: m.ctx.Marks} }

func (m *Model) applySnapshot(snap *model.Snapshot) {
	if snap == nil {
		return
	}
	m.snap = snap
	env := m.env()
	for k := range m.panes {
		m.panes[k].rebuild(snap, env, m.ctx.Layout.Body.W)
	}
	if m.mode == modeDetail || (m.mode == modeHelp && m.back == modeDetail) {
		m.refreshDetail()
	}
}

func (m *Model) pane() *listPane { return &m.panes[m.active] }

func (m Model) handleKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	if msg.String() == "ctrl+c" && m.question == nil && m.form == nil {
		if m.actionRunning() {
			m.cancelAction()
			return m, nil
		}
		return m, tea.Quit
	}
	if m.question != nil {
		if m.question.update(msg) {
			m.question = nil
		}
		return m, nil
	}
	if m.form != nil {
		done, cmd := m.form.update(msg)
		if done {
			m.form = nil
		}
		return m, cmd
	}
	if m.dialog != nil {
		done, cmd := m.dialog.update(msg, m.ctx.Keys)
		if done {
			m.dialog = nil
		}
		return m, cmd
	}
	switch m.mode {
	case modeFilter:
		return m.handleFilterKey(msg)
	case modeDetail:
		return m.handleDetailKey(msg)
	case modeHelp:
		if key.Matches(msg, m.ctx.Keys.Back, m.ctx.Keys.Help) {
			m.mode = m.back
		}
		return m, nil
	case modeLogs:
		return m, m.handleLogsKey(msg)
	case modeHealth:
		if msg.String() == "esc" && m.actionRunning() {
			m.cancelAction()
			return m, nil
		}
		h, cmd := m.health.Update(msg)
		m.health = &h
		return m, cmd
	}
	return m.handleListKey(msg)
}

func (m Model) handleListKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k, p := m.ctx.Keys, m.pane()
	switch {
	case msg.String() == "esc" && m.panel != nil && p.query == "":
		m.escapeAction()
	case key.Matches(msg, k.Quit):
		if m.actionRunning() {
			m.status = "an action is running: esc or ctrl+c cancels it first"
			return m, nil
		}
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.mode, m.back = modeHelp, modeList
	case key.Matches(msg, k.NextPane):
		m.active = (m.active + 1) % paneCount
	case key.Matches(msg, k.PrevPane):
		m.active = (m.active + paneCount - 1) % paneCount
	case key.Matches(msg, k.Pane1, k.Pane2, k.Pane3, k.Pane4):
		m.active = paneKind(msg.String()[0] - '1')
	case m.moveCursor(msg):
	case key.Matches(msg, k.Filter):
		m.mode = modeFilter
		m.filter.SetValue(p.query)
		m.filter.CursorEnd()
		return m, m.filter.Focus()
	case key.Matches(msg, k.ClearFilter):
		p.setQuery("")
	case key.Matches(msg, k.Open):
		m.openDetail()
	case key.Matches(msg, k.Mark) && m.active == paneNodes:
		m.toggleMark()
	case key.Matches(msg, k.WindowsOnly) && m.active == paneNodes:
		p.windowsOnly = !p.windowsOnly
		p.rebuild(m.snap, m.env(), m.ctx.Layout.Body.W)
	case key.Matches(msg, k.Expand, k.Collapse) && m.active == paneMachineSets:
		if p.toggleExpand(key.Matches(msg, k.Expand) && msg.String() == "right", key.Matches(msg, k.Collapse)) {
			p.rebuild(m.snap, m.env(), m.ctx.Layout.Body.W)
		}
	case key.Matches(msg, k.actionBindings()...):
		return m.requestAction(msg)
	}
	return m, nil
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

func (m Model) handleFilterKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k, p := m.ctx.Keys, m.pane()
	switch {
	case key.Matches(msg, k.ClearFilter):
		p.setQuery("")
		m.filter.SetValue("")
		m.filter.Blur()
		m.mode = modeList
		return m, nil
	case key.Matches(msg, k.AcceptFilter):
		m.filter.Blur()
		m.mode = modeList
		return m, nil
	case msg.String() == "up" || msg.String() == "down":
		// arrows move the selection while typing; j and k are letters of the filter
		p.move(map[string]int{"up": -1, "down": 1}[msg.String()])
		return m, nil
	}
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	if v := m.filter.Value(); v != p.query {
		p.setQuery(v)
	}
	return m, cmd
}

func (m Model) handleDetailKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k := m.ctx.Keys
	switch {
	case key.Matches(msg, k.Back):
		m.mode = modeList
		return m, nil
	case key.Matches(msg, k.Help):
		m.mode, m.back = modeHelp, modeDetail
		return m, nil
	case key.Matches(msg, k.Health) && m.detail.pane == paneNodes:
		return m, m.openHealth(m.detail.key)
	case key.Matches(msg, k.Logs) && m.detail.pane == paneNodes:
		return m, m.openLogs("kubelet", m.detail.key)
	case key.Matches(msg, k.Top):
		m.viewport.GotoTop()
		return m, nil
	case key.Matches(msg, k.Bottom):
		m.viewport.GotoBottom()
		return m, nil
	}
	var cmd tea.Cmd
	m.viewport, cmd = m.viewport.Update(msg)
	return m, cmd
}

func (m *Model) openDetail() {
	r, ok := m.pane().selected()
	if _, blocked := paneNotice(m.snap, m.active); !ok || blocked {
		return
	}
	m.detail = detailTarget{pane: m.active, key: r.Key}
	m.mode = modeDetail
	m.refreshDetail()
	m.viewport.GotoTop()
}

// refreshDetail re-renders the open detail view from the current snapshot, keeping the scroll position.
func (m *Model) refreshDetail() {
	_, body := detailContent(&m.ctx.Styles, m.snap, m.detail, m.env())
	offset := m.viewport.YOffset()
	m.viewport.SetContent(body)
	m.viewport.SetYOffset(offset)
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

func (m *Model) handleWheel(msg tea.MouseWheelMsg) {
	delta := 3
	if msg.Button == tea.MouseWheelUp {
		delta = -3
	} else if msg.Button != tea.MouseWheelDown {
		return
	}
	switch m.mode {
	case modeDetail:
		if delta < 0 {
			m.viewport.ScrollUp(-delta)
		} else {
			m.viewport.ScrollDown(delta)
		}
	case modeList, modeFilter:
		m.pane().move(delta)
	}
}

// handleClick selects the row under the pointer.
func (m *Model) handleClick(msg tea.MouseClickMsg) {
	if (m.mode != modeList && m.mode != modeFilter) || msg.Button != tea.MouseLeft || m.dialog != nil {
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
	if msg, blocking := paneNotice(m.snap, m.active); msg != "" && !blocking {
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
		return fmt.Sprintf("wmcon needs a terminal of at least %d×%d; this one is %d×%d — enlarge the window",
			MinWidth, MinHeight, m.ctx.Width, m.ctx.Height)
	}
	st := &m.ctx.Styles
	hdr := headerLines(st, m.snap, m.ctx.Now(), l.Header.W, m.ctx.ReadOnly, m.watchStopped)
	lines := []string{fitLine(hdr[0], l.Header.W), fitLine(hdr[1], l.Header.W), fitLine(hdr[2], l.Header.W),
		fitLine(m.tabsView(), l.Tabs.W)}
	body := m.bodyView()
	if m.panel != nil {
		panel := m.panel.view(st, l.Action.W, l.Action.H)
		if l.Action.X > 0 {
			body = lipgloss.JoinHorizontal(lipgloss.Top, body, panel)
		} else {
			body = body + "\n" + panel
		}
	}
	var helpLine string
	switch m.mode {
	case modeHealth:
		helpLine = m.help.View(m.health)
	case modeLogs:
		helpLine = m.help.View(m.logs.KeyMap())
	default:
		helpLine = m.help.View(m.helpKeys())
	}
	lines = append(lines, body, fitLine(m.statusView(), l.Status.W), fitLine(helpLine, l.Help.W))
	return strings.Join(lines, "\n")
}

func (m Model) helpKeys() helpKeyMap {
	return helpKeyMap{keys: m.ctx.Keys, mode: m.mode, pane: m.active}
}

func (m Model) tabsView() string {
	st := &m.ctx.Styles
	tabs := make([]string, paneCount)
	for k := range paneCount {
		label := fmt.Sprintf("%d %s", k+1, k.title())
		if n := m.panes[k].objectCount(); n > 0 && k != paneSecrets {
			label += fmt.Sprintf(" (%d)", n)
		}
		if k == m.active {
			tabs[k] = st.TabActive.Render("[" + label + "]")
		} else {
			tabs[k] = st.TabIdle.Render(" " + label + " ")
		}
	}
	return strings.Join(tabs, " ")
}

// bodyView renders the body region, exactly Body.W × Body.H.
func (m Model) bodyView() string {
	b := m.ctx.Layout.Body
	var s string
	switch {
	case m.question != nil:
		s = placeInBox(m.question.view(&m.ctx.Styles, b.W), b.W, b.H)
	case m.form != nil:
		s = placeInBox(m.form.view(&m.ctx.Styles, b.W), b.W, b.H)
	case m.dialog != nil:
		s = placeInBox(m.dialog.view(&m.ctx.Styles, b.W), b.W, b.H)
	case m.mode == modeHelp:
		s = lipgloss.NewStyle().Padding(1, 2).Render(m.help.FullHelpView(m.helpKeysFor(m.back).FullHelp()))
	case m.mode == modeHealth:
		s = m.health.View()
	case m.mode == modeLogs:
		s = m.logs.View()
	case m.mode == modeDetail:
		title, _ := detailContent(&m.ctx.Styles, m.snap, m.detail, m.env())
		s = m.ctx.Styles.DetailTitle.Render(title) + "\n" + m.viewport.View()
	default:
		s = m.paneView()
	}
	return fitBox(s, b.W, b.H)
}

func (m Model) helpKeysFor(md mode) helpKeyMap {
	return helpKeyMap{keys: m.ctx.Keys, mode: md, pane: m.active}
}

func (m Model) paneView() string {
	st, p, b := &m.ctx.Styles, &m.panes[m.active], m.ctx.Layout.Body
	notice, blocking := paneNotice(m.snap, m.active)
	if blocking {
		return "\n  " + st.Notice.Render(notice)
	}
	var out []string
	if notice != "" {
		out = append(out, st.Notice.Render(notice))
	}
	t := tableView{Columns: m.active.columns(), Widths: p.widths, Gap: p.gap, Rows: p.rows, Cursor: p.cursor,
		Offset: p.offset, Width: b.W, Height: m.tableHeight()}
	table := renderTable(st, m.ctx.Marks, t)
	if len(p.rows) == 0 {
		table = fitLine(st.ColumnHeader.Render(headerText(t.Columns, t.Widths, t.Gap)), b.W) + "\n  " + st.Muted.Render(m.emptyText())
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
	case m.active == paneMirrors:
		return "no ImageDigestMirrorSets or ImageTagMirrorSets"
	}
	return "no " + strings.ToLower(m.active.title())
}

func (m Model) statusView() string {
	st, p := &m.ctx.Styles, &m.panes[m.active]
	count := fmt.Sprintf("%d of %d", len(p.rows), len(p.all))
	switch {
	case m.mode == modeFilter:
		return m.filter.View() + "  " + st.Muted.Render(count)
	case m.status != "":
		return st.Warn.Render(m.status)
	case p.query != "":
		return st.Muted.Render("filter: ") + p.query + st.Muted.Render("  "+count+"  (/ edit, esc clear)")
	case m.active == paneNodes && p.windowsOnly:
		return st.Muted.Render("Windows nodes only (w shows all)")
	}
	return ""
}

// fitBox pads or cuts s to exactly w×h cells so regions never push each other around.
func fitBox(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i := range lines {
		lines[i] = fitLine(lines[i], w)
	}
	return strings.Join(lines, "\n")
}
