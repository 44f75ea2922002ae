package ui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/helpview"
	"github.com/wmcon/wmcon/ui/page"
	"github.com/wmcon/wmcon/ui/pods"
	"github.com/wmcon/wmcon/ui/view"
)

// detailView is the detail page of one object. It is rebuilt from every snapshot, so it stays live; a
// node's page also shows its pods, events and YAML, read when the page opens and again on r, and the
// pods' figures, which the root reads while the page is open.
type detailView struct {
	ctx      *view.ProgramContext
	snap     *model.Snapshot
	target   detailTarget
	viewport viewport.Model
	extras   nodeExtras
	yaml     bool // the node's YAML instead of its details
	keys     detailKeys
	metrics  *metricsView // the nodes' latest figures; nil when the console reads none
	podLine  int          // the page line of the selected pod (extras.pods.cursor), -1 none
	title    string       // the page's title, as refresh last built it with the page
}

// detailKeys are the keys only a node's details have: p selects a pod of the list, enter opens it.
type detailKeys struct{ YAML, Reload, Pods, OpenPod, DonePods key.Binding }

// nodeDetailMsg delivers what a node's details view read.
type nodeDetailMsg struct {
	node   string
	detail model.NodeDetail
	err    error
}

func newDetailView(ctx *view.ProgramContext, snap *model.Snapshot, target detailTarget) *detailView {
	d := &detailView{ctx: ctx, snap: snap, target: target, viewport: viewport.New()}
	d.extras.on = target.pane == paneNodes && ctx.NodeDetail != nil
	d.extras.pods = podsList{cursor: -1, selectedLine: &d.podLine}
	if n, ok := snap.Node(target.key); ok && d.extras.on {
		d.extras.pods.metricsOn = n.Windows && ctx.PodMetrics != nil // the sources read Windows nodes
	}
	d.keys = detailKeys{YAML: binding.New("y", "yaml", "y"), Reload: binding.New("r", "read again", "r"),
		Pods: binding.New("p", "select a pod", "p"), OpenPod: binding.New("enter", "pod details", "enter"),
		DonePods: binding.New("esc", "done with pods", "esc")}
	d.keys.YAML.SetEnabled(d.extras.on)
	d.keys.Reload.SetEnabled(d.extras.on)
	d.keys.Pods.SetEnabled(d.extras.on)
	d.refresh()
	return d
}

// PodsNode is the node whose pods' figures the page shows (the root reads them while it is open).
func (d *detailView) PodsNode() string {
	if !d.extras.pods.metricsOn {
		return ""
	}
	return d.target.key
}

// PodFigures is the read the page shows; nil before the first.
func (d *detailView) PodFigures() *pods.Figures { return d.extras.pods.figures }

// SetPodFigures shows a new read of the node's pods.
func (d *detailView) SetPodFigures(f *pods.Figures) tea.Cmd {
	d.extras.pods.figures = f
	d.refresh()
	return nil
}

// selectingPods says p was pressed: the keys move a cursor over the pods list.
func (d *detailView) selectingPods() bool { return d.extras.pods.cursor >= 0 && !d.yaml }

func (d *detailView) podCount() int {
	if d.extras.detail == nil {
		return 0
	}
	return len(d.extras.detail.Pods)
}

// Init reads a node's pods, events and YAML.
func (d *detailView) Init() tea.Cmd { return d.load() }

func (d *detailView) load() tea.Cmd {
	if !d.extras.on {
		return nil
	}
	d.extras.loading, d.extras.err = true, nil
	read, node := d.ctx.NodeDetail, d.target.key
	return func() tea.Msg {
		det, err := read(context.Background(), node)
		return nodeDetailMsg{node: node, detail: det, err: err}
	}
}

func (d *detailView) SetSize(w, h int) {
	d.viewport.SetWidth(w)
	d.viewport.SetHeight(max(0, h-1)) // the title takes a line
	d.extras.pods.width = w
	d.refresh()
}

func (d *detailView) env() rowEnv {
	return rowEnv{Now: d.ctx.Now(), Marks: d.ctx.Marks, Metrics: d.metrics}
}

// content is the page's title and body: the details, or the node's YAML.
func (d *detailView) content() (title, body string) {
	title, body = detailContent(&d.ctx.Styles, d.snap, d.target, d.env(), d.extras)
	if !d.yaml {
		return title, body
	}
	switch {
	case d.extras.detail != nil && d.extras.detail.YAMLErr != "":
		body = d.ctx.Styles.Bad.Render("cannot show the YAML: " + d.extras.detail.YAMLErr)
	case d.extras.detail != nil:
		body = d.extras.detail.YAML
	default:
		body = d.ctx.Styles.Muted.Render(extrasState(d.extras))
	}
	return title + " (YAML, read-only)", body
}

// refresh re-renders the page from the current snapshot, keeping the scroll position.
func (d *detailView) refresh() {
	title, body := d.content()
	d.title = title
	offset := d.viewport.YOffset()
	d.viewport.SetContent(body)
	d.viewport.SetYOffset(offset)
}

func (d *detailView) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case snapshotMsg:
		if msg.snap != nil {
			d.snap = msg.snap
			d.refresh()
		}
	case metricsMsg:
		d.metrics = msg.view
		d.refresh()
	case nodeDetailMsg:
		if d.extras.on && msg.node == d.target.key {
			d.extras.loading, d.extras.err = false, msg.err
			if msg.err == nil {
				d.extras.detail = &msg.detail
			}
			d.extras.pods.cursor = min(d.extras.pods.cursor, d.podCount()-1)
			d.refresh()
		}
	case tea.KeyPressMsg:
		return d.handleKey(msg)
	case tea.MouseWheelMsg:
		page.Scroll(&d.viewport, d.ctx.Keys, msg)
	}
	return d, nil
}

func (d *detailView) handleKey(msg tea.KeyPressMsg) (view.Component, tea.Cmd) {
	k := d.ctx.Keys
	node := d.target.pane == paneNodes
	if d.selectingPods() {
		if v, cmd, done := d.handlePodKey(msg); done {
			return v, cmd
		}
	}
	switch {
	case key.Matches(msg, d.keys.Pods) && !d.yaml:
		d.selectPod(0)
		return d, nil
	case key.Matches(msg, k.Back):
		if d.yaml { // back from the YAML to the details first
			d.yaml = false
			d.viewport.SetYOffset(0)
			d.refresh()
			return d, nil
		}
		return nil, nil
	case key.Matches(msg, k.Help):
		return d, view.Open(helpview.New(d.ctx, d))
	case key.Matches(msg, d.keys.YAML):
		d.yaml = !d.yaml
		d.viewport.SetYOffset(0)
		d.refresh()
		return d, nil
	case key.Matches(msg, d.keys.Reload):
		cmd := d.load()
		d.refresh()
		return d, cmd
	case key.Matches(msg, k.Health) && node:
		return d, view.Send(openHealthMsg{node: d.target.key})
	case key.Matches(msg, k.Logs) && node:
		return d, view.Send(openLogsMsg{service: "kubelet", nodes: []string{d.target.key}})
	}
	if page.Scroll(&d.viewport, k, msg) {
		return d, nil
	}
	var cmd tea.Cmd
	d.viewport, cmd = d.viewport.Update(msg)
	return d, cmd
}

// handlePodKey moves the cursor over the pods list, opens the selected pod's details or leaves the
// list; done is false for the keys the page handles as usual (y, r, h, l, the scroll keys).
func (d *detailView) handlePodKey(msg tea.KeyPressMsg) (view.Component, tea.Cmd, bool) {
	k := d.ctx.Keys
	switch {
	case key.Matches(msg, k.Up):
		d.selectPod(d.extras.pods.cursor - 1)
	case key.Matches(msg, k.Down):
		d.selectPod(d.extras.pods.cursor + 1)
	case key.Matches(msg, d.keys.OpenPod):
		return d, view.Open(d.podView()), true
	case key.Matches(msg, d.keys.DonePods), key.Matches(msg, d.keys.Pods):
		d.extras.pods.cursor = -1
		d.refresh()
	default:
		return d, nil, false
	}
	return d, nil, true
}

// selectPod puts the cursor on pod i of the list (kept within it) and scrolls the page to show it: on
// the first selection, from the list's title. Nothing when the list is empty or not read yet.
func (d *detailView) selectPod(i int) {
	n := d.podCount()
	if n == 0 {
		return
	}
	first := d.extras.pods.cursor < 0
	d.extras.pods.cursor = min(max(0, i), n-1)
	d.refresh()
	line, top, h := d.podLine, d.viewport.YOffset(), d.viewport.Height()
	switch {
	case line < 0:
	case first:
		d.viewport.SetYOffset(max(0, line-2)) // the section's title and the list's header above the pod
	case line < top:
		d.viewport.SetYOffset(line)
	case line >= top+h:
		d.viewport.SetYOffset(line - h + 1)
	}
}

// podView is the details of the selected pod.
func (d *detailView) podView() *pods.View {
	p := d.extras.detail.Pods[d.extras.pods.cursor]
	return pods.New(d.ctx, pods.Target{Node: d.target.key, Info: p, Age: formatAge(d.ctx.Now(), p.Created)})
}

func (d *detailView) View() string {
	st := &d.ctx.Styles
	title := d.title // building the page again for it would cost every frame what a change costs
	if d.extras.loading && d.extras.detail != nil {
		title += "  " + st.Muted.Render("reading again…")
	}
	line := st.DetailTitle.Render(title)
	if long, short := d.scrollPosition(); long != "" {
		w := d.viewport.Width()
		pos := long
		if lipgloss.Width(title)+2+lipgloss.Width(pos) > w {
			pos = short
		}
		room := max(1, w-2-lipgloss.Width(pos))
		line = st.DetailTitle.Render(ansi.Truncate(title, room, "…"))
		line += strings.Repeat(" ", max(2, w-lipgloss.Width(line)-lipgloss.Width(pos))) + st.Muted.Render(pos)
	}
	return line + "\n" + d.viewport.View()
}

// scrollPosition says which lines are shown when the page is longer than the screen ("" when it fits),
// so the user knows there is more below (or above); short is the same for a narrow screen.
func (d *detailView) scrollPosition() (long, short string) {
	total, h := d.viewport.TotalLineCount(), d.viewport.Height()
	if h <= 0 || total <= h {
		return "", ""
	}
	top := d.viewport.YOffset()
	bottom := min(total, top+h)
	more, arrow := "more below", "v"
	switch {
	case top > 0 && bottom < total:
		more, arrow = "more above and below", "^v"
	case top > 0:
		more, arrow = "more above", "^"
	}
	return fmt.Sprintf("lines %d-%d of %d, %s", top+1, bottom, total, more), fmt.Sprintf("%d-%d/%d %s", top+1, bottom, total, arrow)
}

func (d *detailView) ShortHelp() []key.Binding {
	k := d.ctx.Keys
	short := []key.Binding{k.Up, k.Down, k.Back}
	if d.selectingPods() {
		return []key.Binding{k.Up, k.Down, d.keys.OpenPod, d.keys.DonePods, k.Help}
	}
	if d.target.pane == paneNodes {
		short = append(short, binding.Enabled(d.keys.YAML, d.keys.Reload)...)
		if !d.yaml && d.podCount() > 0 {
			short = append(short, d.keys.Pods)
		}
		short = append(short, binding.Enabled(k.Health, k.Logs)...)
	}
	return append(short, k.Help)
}

func (d *detailView) FullHelp() [][]key.Binding {
	full := fullHelp(d.ctx.Keys, d.target.pane)
	if keys := binding.Enabled(d.keys.YAML, d.keys.Reload, d.keys.Pods, d.keys.OpenPod); len(keys) > 0 {
		full = append(full, keys)
	}
	return full
}
