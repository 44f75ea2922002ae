// Package proxy is the console's Proxy view (P): the cluster-wide proxy next to each Windows node's copy,
// and the sync of the nodes out of step.
package proxy

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/helpview"
	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/theme"
	"github.com/wmcon/wmcon/ui/view"
)

// Launcher opens the view with P when the backend reads the proxy.
var Launcher = view.Launcher{
	Key:       binding.New("P", "proxy", "P"),
	Available: func(ctx *view.ProgramContext) bool { return ctx.Proxy != nil },
	Open:      func(ctx *view.ProgramContext, _ view.Selection) view.Component { return New(ctx) },
}

// View shows the cluster-wide proxy next to each Windows node's HTTP_PROXY, HTTPS_PROXY, NO_PROXY and
// trusted CA bundle, marking drift; s syncs the nodes out of step (after a confirmation; the action then
// offers the graceful reboot their services need), r reads the nodes again.
type View struct {
	ctx      *view.ProgramContext
	viewport viewport.Model
	seq      int // numbers reads, so a stale answer is dropped
	loading  bool
	rep      *model.ProxyReport
	err      string
	status   string
	keys     proxyKeys
}

type proxyKeys struct{ Sync, Reload key.Binding }

// proxyLoadedMsg is the answer of one read.
type proxyLoadedMsg struct {
	seq int
	rep model.ProxyReport
	err error
}

// New is the view; its Init reads the proxy.
func New(ctx *view.ProgramContext) *View {
	v := &View{ctx: ctx, viewport: viewport.New(),
		keys: proxyKeys{Sync: binding.New("s", "sync out-of-step nodes", "s"), Reload: binding.New("r", "read again", "r")}}
	v.keys.Sync.SetEnabled(ctx.CanChange())
	return v
}

func (v *View) Init() tea.Cmd { return v.load() }

// Loaded says the first read has answered with a report.
func (v *View) Loaded() bool { return v.rep != nil }

// Refresh reads again once an action ended (a sync changes what the nodes have).
func (v *View) Refresh() tea.Cmd { return v.load() }

func (v *View) load() tea.Cmd {
	v.seq++
	v.loading = true
	v.render()
	seq, read := v.seq, v.ctx.Proxy
	return func() tea.Msg {
		rep, err := read(context.Background())
		return proxyLoadedMsg{seq: seq, rep: rep, err: err}
	}
}

func (v *View) SetSize(w, h int) {
	v.viewport.SetWidth(w)
	v.viewport.SetHeight(max(0, h))
	v.render()
}

func (v *View) ShortHelp() []key.Binding {
	return append(binding.Enabled(v.keys.Sync, v.keys.Reload), v.ctx.Keys.Back)
}

func (v *View) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.ShortHelp(), {v.ctx.Keys.Up, v.ctx.Keys.Down, v.ctx.Keys.Help}}
}

func (v *View) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case proxyLoadedMsg:
		if msg.seq == v.seq {
			v.loading = false
			v.err, v.rep = "", &msg.rep
			if msg.err != nil {
				v.err, v.rep = msg.err.Error(), nil
			}
			v.render()
		}
	case tea.KeyPressMsg:
		return v.handleKey(msg)
	}
	return v, nil
}

func (v *View) handleKey(msg tea.KeyPressMsg) (view.Component, tea.Cmd) {
	k := v.ctx.Keys
	switch {
	case key.Matches(msg, k.Back):
		return nil, nil
	case key.Matches(msg, k.Help):
		return v, view.Open(helpview.New(v.ctx, v))
	case key.Matches(msg, v.keys.Reload):
		return v, v.load()
	case key.Matches(msg, v.keys.Sync):
		return v, v.sync()
	case key.Matches(msg, k.Down):
		v.viewport.ScrollDown(1)
	case key.Matches(msg, k.Up):
		v.viewport.ScrollUp(1)
	}
	return v, nil
}

// sync asks before writing the cluster's proxy to the nodes out of step.
func (v *View) sync() tea.Cmd {
	if v.rep == nil {
		v.status = "the nodes have not been read yet"
		v.render()
		return nil
	}
	nodes := outOfStep(v.rep.Nodes)
	if len(nodes) == 0 {
		v.status = "every Windows node already has the cluster's proxy: nothing to sync"
		v.render()
		return nil
	}
	body := fmt.Sprintf("Write HTTP_PROXY, HTTPS_PROXY, NO_PROXY (machine variables; removed ones deleted) and the trusted CA bundle to:\n  %s\n\nServices see the change after a reboot: you are asked next whether to reboot the changed nodes gracefully, one at a time.",
		strings.Join(nodes, "\n  "))
	return view.Open(dialog.NewConfirm(v.ctx, request.ProxySync{Nodes: nodes, Drain: request.DefaultDrainOptions()},
		fmt.Sprintf("Sync the cluster proxy to %d node(s)?", len(nodes)), body))
}

// outOfStep names the nodes whose proxy differs (and those that could not be read, which a sync retries).
func outOfStep(nodes []model.ProxyNodeStatus) []string {
	var out []string
	for _, n := range nodes {
		if n.Drift || n.Error != "" {
			out = append(out, n.Node)
		}
	}
	return out
}

func (v *View) View() string { return v.viewport.View() }

func (v *View) render() {
	offset := v.viewport.YOffset()
	v.viewport.SetContent(proxyContent(v.ctx, v.rep, v.loading, v.err, v.status))
	v.viewport.SetYOffset(offset)
}

// proxyContent is the page: the cluster's proxy, then one block per node with what differs.
func proxyContent(ctx *view.ProgramContext, rep *model.ProxyReport, loading bool, errText, status string) string {
	st, mk := &ctx.Styles, ctx.Marks
	var b strings.Builder
	b.WriteString(st.DetailTitle.Render("Cluster proxy → Windows nodes") + "\n\n")
	switch {
	case errText != "":
		b.WriteString(st.Bad.Render("cannot read the proxy: "+errText) + "\n")
		return b.String()
	case rep == nil:
		b.WriteString(st.Muted.Render("reading the cluster's proxy and every Windows node's copy…") + "\n")
		return b.String()
	}
	c := rep.Cluster
	for _, kv := range [][2]string{{"HTTP_PROXY", c.HTTP}, {"HTTPS_PROXY", c.HTTPS}, {"NO_PROXY", c.NoProxy}} {
		b.WriteString(fmt.Sprintf("  %-12s %s\n", kv[0], orNone(model.RedactURL(kv[1]))))
	}
	ca := "none"
	if len(c.TrustedCA) > 0 {
		ca = fmt.Sprintf("%s (%d bytes)", c.TrustedCAName, len(c.TrustedCA))
	}
	b.WriteString(fmt.Sprintf("  %-12s %s\n\n", "CA bundle", ca))
	drift := outOfStep(rep.Nodes)
	summary := fmt.Sprintf("%d Windows nodes, all in step", len(rep.Nodes))
	if len(drift) > 0 {
		summary = fmt.Sprintf("%d of %d Windows nodes out of step", len(drift), len(rep.Nodes))
	}
	if loading {
		summary += " (reading again…)"
	}
	b.WriteString(summary + "\n")
	for _, n := range rep.Nodes {
		b.WriteString(proxyNodeLines(st, mk, n))
	}
	if status != "" {
		b.WriteString("\n" + st.Warn.Render(status) + "\n")
	}
	return b.String()
}

func proxyNodeLines(st *styles.Styles, mk theme.Marks, n model.ProxyNodeStatus) string {
	switch {
	case n.Error != "":
		return fmt.Sprintf("  %s %s  %s\n", st.Bad.Render(mk.Fail), n.Node, st.Bad.Render("cannot read: "+n.Error))
	case !n.Drift:
		return fmt.Sprintf("  %s %s  in step\n", st.Good.Render(mk.OK), n.Node)
	}
	var b strings.Builder
	b.WriteString(fmt.Sprintf("  %s %s  out of step\n", st.Warn.Render(mk.Warn), n.Node))
	for _, pv := range n.Vars {
		if pv.Drift {
			b.WriteString(fmt.Sprintf("      %-12s has %s, wants %s\n", pv.Name, orNone(pv.Have), orNone(pv.Want)))
		}
	}
	if n.CABundle != model.CAInStep && n.CABundle != model.CANone && n.CABundle != "" {
		b.WriteString(fmt.Sprintf("      %-12s %s\n", "CA bundle", n.CABundle))
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(not set)"
	}
	return fmt.Sprintf("%q", s)
}
