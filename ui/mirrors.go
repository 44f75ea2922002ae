package ui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/mirrors"
	"github.com/wmcon/wmcon/ui/view"
)

// The Mirrors pane, once the console has a view.MirrorsFunc: one row per source registry with the hosts.toml
// rendered from the cluster's mirror sets (enter shows it), a notice saying which Windows nodes hold
// exactly those files, `a` to apply them everywhere (after a confirmation) and `r` to read the nodes again.
// Nodes out of step are marked in the Nodes pane. Without a view.MirrorsFunc the pane lists the mirror-set
// entries of the snapshot.

// mirrorsState is what the console knows about the nodes' registries directories.
type mirrorsState struct {
	startDecided bool // whether to read them once the Nodes are listed was decided (mirrorsAtStart)
	loading      bool
	seq          int // numbers loads, so a stale answer is dropped
	rep          *model.MirrorsReport
	err          string
}

// mirrorsLoadedMsg is the answer of one load.
type mirrorsLoadedMsg struct {
	seq int
	rep model.MirrorsReport
	err error
}

// mirrorsReadAtStart is the largest fleet whose registries are read as soon as the Nodes are listed, so the
// Nodes pane marks the nodes out of step from the start. A larger fleet's are read when the Mirrors pane is
// first shown (or r): reading them means an SSH session to every Windows node, which a console that was
// only opened to look at a 2,500-node fleet should not start (16 at a time, that is minutes of logins).
const mirrorsReadAtStart = 50

// mirrorsAtStart starts the first read of the nodes' registries once the Nodes are listed, when the fleet
// is small enough (mirrorsReadAtStart); nil otherwise, or when a read was already started.
func (m *Model) mirrorsAtStart() tea.Cmd {
	if m.mirrors.startDecided || m.snap == nil || m.snap.Resources[model.ResNodes].Availability != model.Available {
		return nil
	}
	m.mirrors.startDecided = true
	if m.mirrors.seq > 0 || len(m.snap.WindowsNodes()) > mirrorsReadAtStart {
		return nil
	}
	return m.loadMirrors()
}

// mirrorsWhenShown starts the first read when the Mirrors pane is shown before one was started.
func (m *Model) mirrorsWhenShown() tea.Cmd {
	if m.mirrors.seq > 0 {
		return nil
	}
	return m.loadMirrors()
}

// loadMirrors starts reading the nodes' registries; nil when the console has no view.MirrorsFunc.
func (m *Model) loadMirrors() tea.Cmd {
	if m.ctx.Mirrors == nil {
		return nil
	}
	m.mirrors.seq++
	m.mirrors.loading = true
	return fetchMirrors(m.ctx.Mirrors, m.mirrors.seq)
}

func fetchMirrors(f view.MirrorsFunc, seq int) tea.Cmd {
	return func() tea.Msg {
		rep, err := f(context.Background())
		return mirrorsLoadedMsg{seq: seq, rep: rep, err: err}
	}
}

// applyMirrors takes a load's answer: the Mirrors pane lists the rendered files, the Nodes pane marks the
// nodes out of step.
func (m *Model) applyMirrors(msg mirrorsLoadedMsg) {
	if msg.seq != m.mirrors.seq {
		return
	}
	m.mirrors.loading = false
	if msg.err != nil {
		m.mirrors.err, m.mirrors.rep = msg.err.Error(), nil
	} else {
		rep := msg.rep
		m.mirrors.err, m.mirrors.rep = "", &rep
	}
	drift := map[string]bool{}
	if m.mirrors.rep != nil {
		for _, n := range m.mirrors.rep.Nodes {
			if n.State == model.MirrorsOutOfStep {
				drift[n.Node] = true
			}
		}
	}
	m.panes[paneNodes].mirrorDrift = drift
	m.panes[paneMirrors].mirrors = m.mirrors.rep
	env := m.env()
	for _, k := range []paneKind{paneNodes, paneMirrors} {
		m.panes[k].rebuild(m.snap, env, m.ctx.Layout.Body.W)
	}
}

// mirrorsSummary is the Mirrors pane's notice line: how many nodes are in step and what to do.
func (m *Model) mirrorsSummary() string {
	s := m.mirrors
	switch {
	case m.ctx.Mirrors == nil:
		return ""
	case s.loading && s.rep == nil:
		return "reading the registries directory of every Windows node…"
	case s.err != "":
		return "registry mirrors: " + s.err + " — r reads again"
	case s.rep == nil:
		return ""
	}
	var in, out, unknown []string
	for _, n := range s.rep.Nodes {
		switch n.State {
		case model.MirrorsInStep:
			in = append(in, n.Node)
		case model.MirrorsOutOfStep:
			out = append(out, n.Node)
		default:
			unknown = append(unknown, n.Node)
		}
	}
	text := fmt.Sprintf("%d of %d Windows nodes in step", len(in), len(s.rep.Nodes))
	if len(out) > 0 {
		text += "; out of step: " + strings.Join(out, ", ")
	}
	if len(unknown) > 0 {
		text += "; unreadable: " + strings.Join(unknown, ", ")
	}
	if n := len(s.rep.Warnings); n > 0 {
		text += fmt.Sprintf("; %d %s (wmcon mirrors render)", n, map[bool]string{true: "warning", false: "warnings"}[n == 1])
	}
	if s.loading {
		text += " (reading again…)"
	}
	return text
}

// notice is the active pane's notice, with the mirrors' summary in the Mirrors pane.
func (m *Model) notice() (string, bool) {
	msg, blocking := paneNotice(m.snap, m.active)
	if m.active != paneMirrors || blocking {
		return msg, blocking
	}
	return joinNotices(msg, m.mirrorsSummary()), false
}

var mirrorFileColumns = []Column{
	{Title: "REGISTRY -> MIRRORS", Max: 100, Min: 40, Flex: true},
	{Title: "FALLBACK", Max: 36},
	{Title: "NODES", Max: 16},
	{Title: "FILE", Max: 60, Min: 16, Flex: true},
}

// mirrorFileRows lists the rendered files, one per source registry, with how many nodes hold it as rendered.
func mirrorFileRows(rep *model.MirrorsReport, env rowEnv) []Row {
	rows := make([]Row, 0, len(rep.Files))
	for _, f := range rep.Files {
		fallback, fallbackTone := f.Server, toneMuted
		if f.NeverContactSource {
			fallback, fallbackTone = "none (NeverContactSource)", toneNormal
		}
		in := 0
		for _, n := range rep.Nodes {
			if n.FileState(f.Path) == model.MirrorsInStep {
				in++
			}
		}
		nodes, nodesTone := fmt.Sprintf("%d/%d in step", in, len(rep.Nodes)), toneGood
		if in < len(rep.Nodes) {
			nodesTone = toneWarn
		}
		rows = append(rows, Row{
			Key:   "file/" + f.Path,
			Cells: []string{f.Source + " " + env.Marks.Arrow + " " + strings.Join(f.Mirrors, ", "), fallback, nodes, f.Path},
			Tones: []Tone{toneNormal, fallbackTone, nodesTone, toneMuted},
		})
	}
	return rows
}

// columns are the pane's columns: the Mirrors pane's change once the rendered files are known.
func (p *listPane) columns() []Column {
	if p.kind == paneMirrors && p.mirrors != nil {
		return mirrorFileColumns
	}
	if p.kind == paneNodes && p.metricsOn {
		return nodeMetricColumns
	}
	return p.kind.columns()
}

// mirrorPaneRows are the Mirrors pane's rows: the rendered files when known, else the snapshot's entries.
func mirrorPaneRows(p *listPane, snap *model.Snapshot, env rowEnv) []Row {
	if p.mirrors != nil {
		return mirrorFileRows(p.mirrors, env)
	}
	return mirrorRows(snap, env)
}

// markMirrorDrift shows in the Nodes pane which nodes' registries differ from the rendered files.
func (p *listPane) markMirrorDrift(rows []Row, env rowEnv) []Row {
	for i := range rows {
		if p.mirrorDrift[rows[i].Key] {
			rows[i].Cells[1] = strings.TrimSpace(rows[i].Cells[1] + " " + env.Marks.Warn + " mirrors")
			if rows[i].tone(1) < toneWarn {
				for len(rows[i].Tones) < 2 {
					rows[i].Tones = append(rows[i].Tones, toneNormal)
				}
				rows[i].Tones[1] = toneWarn
			}
		}
	}
	return rows
}

// openMirrorFile shows the selected registry's hosts.toml and every node's state for it.
func (m *Model) openMirrorFile() (tea.Cmd, bool) {
	rep := m.mirrors.rep
	r, ok := m.pane().selected()
	if rep == nil || !ok {
		return nil, false
	}
	for _, f := range rep.Files {
		if "file/"+f.Path == r.Key {
			return m.push(mirrors.NewFileView(m.ctx, f, rep.Nodes)), true
		}
	}
	return nil, false
}

// windowsNodes are the Windows nodes the cluster has now, in the Nodes pane's order.
func (m *Model) windowsNodes() []string {
	var out []string
	if m.snap != nil {
		for _, n := range m.snap.Nodes {
			if n.Windows {
				out = append(out, n.Name)
			}
		}
	}
	return out
}

// atConfirmation gives a fleet-wide request the nodes there are when it is confirmed, not when its
// confirmation opened: a node that joined meanwhile gets the change too.
func (m *Model) atConfirmation(req request.Request) request.Request {
	if r, ok := req.(request.MirrorsApply); ok {
		r.Nodes = m.windowsNodes()
		return r
	}
	return req
}

// requestMirrorsApply asks to apply the rendered files to every Windows node.
func (m *Model) requestMirrorsApply() tea.Cmd {
	switch {
	case m.ctx.ReadOnly:
		m.status = "wmcon runs read-only: restart it without --read-only to change the hosts"
		return nil
	case m.ctx.Runner == nil || m.ctx.Mirrors == nil:
		m.status = "applying mirrors is not available here"
		return nil
	case m.actionRunning():
		m.status = "an action is running: wait for it, or esc to cancel it"
		return nil
	case m.mirrors.rep == nil:
		m.status = "the nodes' registries are not read yet: wait, or r reads again"
		return nil
	}
	nodes := m.windowsNodes()
	read := map[string]bool{}
	var out []string
	for _, n := range m.mirrors.rep.Nodes {
		read[n.Node] = true
		if n.State != model.MirrorsInStep {
			out = append(out, n.Node)
		}
	}
	for _, n := range nodes {
		if !read[n] {
			out = append(out, n+" (joined since the last read)")
		}
	}
	if len(nodes) == 0 {
		m.status = "there are no Windows nodes to apply mirrors to"
		return nil
	}
	body := fmt.Sprintf("Replace %s on %d Windows nodes with the %d files rendered from the cluster's mirror sets, "+
		"several nodes at once: each gets the new tree written beside the directory and swapped in, then read back. "+
		"containerd reads hosts.toml on every pull: nothing restarts.", config.RegistriesDir, len(nodes), len(m.mirrors.rep.Files))
	if len(out) > 0 {
		body += "\n\nNot in step now: " + strings.Join(out, ", ")
	} else {
		body += "\n\nEvery node is in step already; applying rewrites the same files."
	}
	return m.push(dialog.NewConfirm(m.ctx, request.MirrorsApply{Nodes: nodes}, "Apply registry mirrors?", body))
}

// handleMirrorsKey handles the Mirrors pane's own keys; it reports whether msg was one.
func (m *Model) handleMirrorsKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if m.active != paneMirrors {
		return nil, false
	}
	k := m.ctx.Keys
	switch {
	case key.Matches(msg, k.MirrorsApply):
		return m.requestMirrorsApply(), true
	case key.Matches(msg, k.MirrorsReload):
		return m.loadMirrors(), true
	case key.Matches(msg, k.Open):
		return m.openMirrorFile()
	}
	return nil, false
}
