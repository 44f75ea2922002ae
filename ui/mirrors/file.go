// Package mirrors holds the console's view of one registry's hosts.toml, as rendered from the cluster's
// mirror sets, with each Windows node's state for it; the Mirrors pane (ui/mirrors.go) opens it.
package mirrors

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/helpview"
	"github.com/wmcon/wmcon/ui/page"
	"github.com/wmcon/wmcon/ui/view"
)

// FileView shows one rendered hosts.toml (credentials masked) and each node's state for it.
type FileView struct {
	ctx      *view.ProgramContext
	file     model.MirrorFile
	viewport viewport.Model
}

// NewFileView is the view of file f, with the state of each node for it.
func NewFileView(ctx *view.ProgramContext, f model.MirrorFile, nodes []model.MirrorNodeState) *FileView {
	v := &FileView{ctx: ctx, file: f, viewport: viewport.New()}
	d := page.Writer{Styles: &ctx.Styles}
	d.Section("File")
	d.Field("Path", config.RegistriesDir+`\`+f.Path)
	d.Field("Source registry", f.Source)
	for i, mirror := range f.Mirrors {
		d.Field(fmt.Sprintf("Mirror %d", i+1), mirror)
	}
	d.Section("Nodes")
	if len(nodes) == 0 {
		d.Line(ctx.Styles.Muted.Render("(no Windows nodes)"))
	}
	for _, n := range nodes {
		state := n.FileState(f.Path)
		style := ctx.Styles.Good
		switch state {
		case model.MirrorsInStep:
			state = "in step"
		case model.MirrorsUnknown:
			state, style = "unknown: "+n.Summary, ctx.Styles.Warn
		default:
			style = ctx.Styles.Warn
		}
		d.Field(n.Node, style.Render(state))
	}
	d.Section("hosts.toml")
	for _, l := range strings.Split(strings.TrimRight(f.Content, "\n"), "\n") {
		d.Line(l)
	}
	v.viewport.SetContent(d.String() + "\n") // String drops the end of the last line, which the viewport keeps
	return v
}

func (v *FileView) Init() tea.Cmd { return nil }

func (v *FileView) SetSize(w, h int) {
	v.viewport.SetWidth(w)
	v.viewport.SetHeight(max(0, h-1))
}

func (v *FileView) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return v, nil
	}
	switch {
	case key.Matches(k, v.ctx.Keys.Back):
		return nil, nil
	case key.Matches(k, v.ctx.Keys.Help):
		return v, view.Open(helpview.New(v.ctx, v))
	}
	var cmd tea.Cmd
	v.viewport, cmd = v.viewport.Update(msg)
	return v, cmd
}

func (v *FileView) View() string {
	return v.ctx.Styles.DetailTitle.Render("hosts.toml of "+v.file.Source) + "\n" + v.viewport.View()
}

func (v *FileView) ShortHelp() []key.Binding {
	k := v.ctx.Keys
	return []key.Binding{k.Up, k.Down, k.Back, k.Help}
}

func (v *FileView) FullHelp() [][]key.Binding { return [][]key.Binding{v.ShortHelp()} }
