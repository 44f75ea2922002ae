package ui

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/binding"
)

// detailView is the detail page of one object. It is rebuilt from every snapshot, so it stays live.
type detailView struct {
	ctx      *ProgramContext
	snap     *model.Snapshot
	target   detailTarget
	viewport viewport.Model
}

func newDetailView(ctx *ProgramContext, snap *model.Snapshot, target detailTarget) *detailView {
	d := &detailView{ctx: ctx, snap: snap, target: target, viewport: viewport.New()}
	d.refresh()
	return d
}

func (d *detailView) Init() tea.Cmd { return nil }

func (d *detailView) SetSize(w, h int) {
	d.viewport.SetWidth(w)
	d.viewport.SetHeight(max(0, h-1)) // the title takes a line
}

func (d *detailView) env() rowEnv { return rowEnv{Now: d.ctx.Now(), Marks: d.ctx.Marks} }

// refresh re-renders the page from the current snapshot, keeping the scroll position.
func (d *detailView) refresh() {
	_, body := detailContent(&d.ctx.Styles, d.snap, d.target, d.env())
	offset := d.viewport.YOffset()
	d.viewport.SetContent(body)
	d.viewport.SetYOffset(offset)
}

func (d *detailView) Update(msg tea.Msg) (Component, tea.Cmd) {
	switch msg := msg.(type) {
	case snapshotMsg:
		if msg.snap != nil {
			d.snap = msg.snap
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

func (d *detailView) handleKey(msg tea.KeyPressMsg) (Component, tea.Cmd) {
	k := d.ctx.Keys
	node := d.target.pane == paneNodes
	switch {
	case key.Matches(msg, k.Back):
		return nil, nil
	case key.Matches(msg, k.Help):
		return d, OpenView(newHelpView(d.ctx, d))
	case key.Matches(msg, k.Health) && node:
		return d, send(openHealthMsg{node: d.target.key})
	case key.Matches(msg, k.Logs) && node:
		return d, send(openLogsMsg{service: "kubelet", nodes: []string{d.target.key}})
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
	title, _ := detailContent(&d.ctx.Styles, d.snap, d.target, d.env())
	return d.ctx.Styles.DetailTitle.Render(title) + "\n" + d.viewport.View()
}

func (d *detailView) ShortHelp() []key.Binding {
	k := d.ctx.Keys
	short := []key.Binding{k.Up, k.Down, k.Back}
	if d.target.pane == paneNodes {
		short = append(short, binding.Enabled(k.Health, k.Logs)...)
	}
	return append(short, k.Help)
}

func (d *detailView) FullHelp() [][]key.Binding { return fullHelp(d.ctx.Keys, d.target.pane) }

// send is a command that delivers msg, for the requests views send the root.
func send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }
