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
	"github.com/wmcon/wmcon/ui/view"
)

// detailView is the detail page of one object. It is rebuilt from every snapshot, so it stays live; a
// node's page also shows its pods, events and YAML, read when the page opens and again on r.
type detailView struct {
	ctx      *view.ProgramContext
	snap     *model.Snapshot
	target   detailTarget
	viewport viewport.Model
	extras   nodeExtras
	yaml     bool // the node's YAML instead of its details
	keys     detailKeys
	metrics  *metricsView // the nodes' latest figures; nil when the console reads none
}

// detailKeys are the keys only a node's details have.
type detailKeys struct{ YAML, Reload key.Binding }

// nodeDetailMsg delivers what a node's details view read.
type nodeDetailMsg struct {
	node   string
	detail model.NodeDetail
	err    error
}

func newDetailView(ctx *view.ProgramContext, snap *model.Snapshot, target detailTarget) *detailView {
	d := &detailView{ctx: ctx, snap: snap, target: target, viewport: viewport.New()}
	d.extras.on = target.pane == paneNodes && ctx.NodeDetail != nil
	d.keys = detailKeys{YAML: binding.New("y", "yaml", "y"), Reload: binding.New("r", "read again", "r")}
	d.keys.YAML.SetEnabled(d.extras.on)
	d.keys.Reload.SetEnabled(d.extras.on)
	d.refresh()
	return d
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
	_, body := d.content()
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
			d.refresh()
		}
	case tea.KeyPressMsg:
		return d.handleKey(msg)
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			d.viewport.ScrollUp(3)
		case tea.MouseWheelDown:
			d.viewport.ScrollDown(3)
		}
	}
	return d, nil
}

func (d *detailView) handleKey(msg tea.KeyPressMsg) (view.Component, tea.Cmd) {
	k := d.ctx.Keys
	node := d.target.pane == paneNodes
	switch {
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
	case key.Matches(msg, k.Top):
		d.viewport.GotoTop()
		return d, nil
	case key.Matches(msg, k.Bottom):
		d.viewport.GotoBottom()
		return d, nil
	}
	var cmd tea.Cmd
	d.viewport, cmd = d.viewport.Update(msg)
	return d, cmd
}

func (d *detailView) View() string {
	st := &d.ctx.Styles
	title, _ := d.content()
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
	if d.target.pane == paneNodes {
		short = append(short, binding.Enabled(d.keys.YAML, d.keys.Reload, k.Health, k.Logs)...)
	}
	return append(short, k.Help)
}

func (d *detailView) FullHelp() [][]key.Binding {
	full := fullHelp(d.ctx.Keys, d.target.pane)
	if keys := binding.Enabled(d.keys.YAML, d.keys.Reload); len(keys) > 0 {
		full = append(full, keys)
	}
	return full
}
