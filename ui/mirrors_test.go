package ui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/mirrors"
)

const quayFile = `quay.io\hosts.toml`

// fleetHosts stands in for the session: the rendered files and what each node holds, which a
// MirrorsApply run brings in step (so the reload after it shows the result).
type fleetHosts struct {
	mu       sync.Mutex
	stale    map[string]bool // nodes lacking quay.io's file
	requests []request.Request
	loads    int
}

func newFleetHosts(stale ...string) *fleetHosts {
	f := &fleetHosts{stale: map[string]bool{}}
	for _, n := range stale {
		f.stale[n] = true
	}
	return f
}

func (f *fleetHosts) Mirrors(context.Context) (model.MirrorsReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads++
	rep := model.MirrorsReport{Files: []model.MirrorFile{{
		Source: "quay.io", Path: quayFile, Server: "https://quay.io/v2",
		Mirrors: []string{"mirror.corp.example.com:5000"},
		Content: "server = \"https://quay.io/v2\"\n\n[host.\"https://mirror.corp.example.com:5000/v2\"]\n  capabilities = [\"pull\"]\n" +
			"  [host.\"https://mirror.corp.example.com:5000/v2\".header]\n    authorization = \"Basic ••••••\"\n"}}}
	for _, n := range windowsNodes() {
		st := model.MirrorNodeState{Node: n.Name, State: model.MirrorsInStep, Summary: "in step"}
		if f.stale[n.Name] {
			st.State, st.Missing, st.Summary = model.MirrorsOutOfStep, []string{quayFile}, "out of step: missing "+quayFile
		}
		rep.Nodes = append(rep.Nodes, st)
	}
	return rep, nil
}

func (f *fleetHosts) Run(_ context.Context, req request.Request, sink event.Sink) error {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	for _, n := range req.Targets() {
		r := event.Reporter{Sink: sink, Action: req.Action(), Target: n, Now: func() time.Time { return fixedNow }}
		r.Started("write", "writing 1 hosts.toml files")
		r.Done("write", "new directory swapped in")
		r.Finish(event.Succeeded, "registries in step", "")
		f.mu.Lock()
		delete(f.stale, n)
		f.mu.Unlock()
	}
	return nil
}

func fleetModel(t *testing.T, f *fleetHosts, readOnly bool) Model {
	t.Helper()
	opts := testOptions()
	opts.Runner, opts.Mirrors, opts.ReadOnly = f, f.Mirrors, readOnly
	m := update(New(NewProgramContext(opts), nil), tea.WindowSizeMsg{Width: 160, Height: 40})
	next, cmd := m.Update(snapshotMsg{fixtureSnapshot()}) // the Nodes are listed: a small fleet's are read
	m = next.(Model)
	assert.Contains(t, screen(update(m, press("4")...)), "reading the registries directory of every Windows node")
	return runCmds(t, m, cmd, func(m Model) bool { return m.mirrors.rep != nil || m.mirrors.err != "" })
}

func nodeLine(t *testing.T, m Model, node string) string {
	t.Helper()
	for _, l := range strings.Split(screen(m), "\n") {
		if strings.Contains(l, node) {
			return l
		}
	}
	t.Fatalf("%s is not on the screen:\n%s", node, screen(m))
	return ""
}

func TestMirrorsPaneShowsFilesNodesAndApplies(t *testing.T) {
	nodes := windowsNodes()
	stale := nodes[2].Name
	f := newFleetHosts(stale)
	m := fleetModel(t, f, false)

	assert.Contains(t, nodeLine(t, m, stale), "⚠ mirrors", "the Nodes pane marks the node out of step")
	assert.NotContains(t, nodeLine(t, m, nodes[0].Name), "mirrors")

	m = update(m, press("4")...)
	out := screen(m)
	assert.Contains(t, out, "3 of 4 Windows nodes in step; out of step: "+stale)
	assert.Contains(t, out, "quay.io → mirror.corp.example.com:5000")
	assert.Contains(t, out, "3/4 in step")
	assert.Contains(t, out, "a apply mirrors")

	m = update(m, press("enter")...)
	require.True(t, isTop[*mirrors.FileView](m), "enter opens the registry's file")
	out = screen(m)
	assert.Contains(t, out, `C:\k\containerd\registries\quay.io\hosts.toml`)
	assert.Contains(t, out, `authorization = "Basic ••••••"`, "credentials stay masked")
	assert.Contains(t, nodeLine(t, m, stale), "missing")
	assert.Contains(t, nodeLine(t, m, nodes[0].Name), "in step")

	m = update(m, press("esc", "a")...)
	require.True(t, isTop[*dialog.Confirm](m), "a asks first")
	out = screen(m)
	assert.Contains(t, out, "Apply registry mirrors?")
	assert.Contains(t, out, "Not in step now: "+stale)
	m, cmd := keyCmd(m, "y")
	require.NotNil(t, cmd)
	m = update(m, cmd())
	require.NotNil(t, m.running, "the confirmed apply runs")
	m = pump(t, m, waitForAction(m.running.msgs), func(m Model) bool { return m.running.done && !m.mirrors.loading })

	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	require.Len(t, f.requests, 1)
	assert.Equal(t, request.MirrorsApply{Nodes: names}, f.requests[0], "every Windows node, in the report's order")
	out = screen(m)
	assert.Contains(t, out, "│ "+stale+":", "per-node progress in the action panel")
	assert.Contains(t, out, "✓ write")
	assert.Contains(t, out, "4 of 4 Windows nodes in step", "the pane reads the nodes again once the apply ends")
	assert.Equal(t, 2, f.loads)
	assert.NotContains(t, nodeLine(t, update(m, press("esc", "1")...), stale), "mirrors", "the mark goes once in step")
}

func TestMirrorsApplyIsRefusedReadOnly(t *testing.T) {
	f := newFleetHosts(windowsNodes()[0].Name)
	m := update(fleetModel(t, f, true), press("4")...)
	assert.NotContains(t, screen(m), "a apply mirrors", "the key is not offered")
	m = update(m, press("a")...)
	assert.False(t, isTop[*dialog.Confirm](m))
	assert.Nil(t, m.running)
	assert.Contains(t, screen(m), "read-only")
	assert.Empty(t, f.requests)

	m, cmd := keyCmd(m, "r") // reading again is allowed
	require.NotNil(t, cmd)
	m = update(m, cmd())
	assert.Equal(t, 2, f.loads)
	assert.Contains(t, screen(m), "3 of 4 Windows nodes in step")
}

// TestMirrorsApplyTakesTheNodesAtConfirmation: a apply counts the Windows nodes the cluster has, not those
// of the last read of the registries, and a node that joins while the confirmation is open is applied to too.
func TestMirrorsApplyTakesTheNodesAtConfirmation(t *testing.T) {
	f := newFleetHosts()
	m := fleetModel(t, f, false)
	joined := fixtureSnapshot()
	joined.Nodes = append(joined.Nodes, windowsNode("ip-127-0-0-90.us-east-2.compute.internal", "", "127.0.0.90", time.Minute))
	m = update(m, snapshotMsg{joined})
	m = update(m, press("4", "a")...)
	require.True(t, isTop[*dialog.Confirm](m))
	assert.Contains(t, screen(m), "on 5 Windows nodes", "the node that joined after the read counts")
	assert.Contains(t, strings.Join(strings.Fields(screen(m)), " "), "ip-127-0-0-90.us-east-2.compute.internal (joined since the")

	later := fixtureSnapshot()
	later.Nodes = append(later.Nodes, joined.Nodes[len(joined.Nodes)-1],
		windowsNode("ip-127-0-0-91.us-east-2.compute.internal", "", "127.0.0.91", 0))
	m = update(m, snapshotMsg{later}) // joins while the confirmation is open
	m, cmd := keyCmd(m, "y")
	require.NotNil(t, cmd)
	m = update(m, cmd())
	require.NotNil(t, m.running)
	pump(t, m, waitForAction(m.running.msgs), func(m Model) bool { return m.running.done })
	require.Len(t, f.requests, 1)
	assert.Len(t, f.requests[0].Targets(), 6, "every Windows node there is when confirmed")
	assert.Contains(t, f.requests[0].Targets(), "ip-127-0-0-91.us-east-2.compute.internal")
}

// TestMirrorsAreReadOnceTheNodesAreListed: the nodes' registries are read (an SSH session to every Windows
// node) when the Nodes are listed, not before, and only for a small fleet; a larger fleet's when the
// Mirrors pane is first shown, once.
func TestMirrorsAreReadOnceTheNodesAreListed(t *testing.T) {
	console := func(f *fleetHosts) Model {
		opts := testOptions()
		opts.Mirrors = f.Mirrors
		return update(New(NewProgramContext(opts), nil), tea.WindowSizeMsg{Width: 160, Height: 40})
	}
	listing := func(s *model.Snapshot) *model.Snapshot {
		c := *s
		c.Resources = map[model.Resource]model.ResourceState{model.ResNodes: {Availability: model.Syncing, Partial: true}}
		return &c
	}

	small := newFleetHosts()
	m := update(console(small), snapshotMsg{listing(fixtureSnapshot())})
	assert.Zero(t, m.mirrors.seq, "no read while the Nodes are still being listed")
	next, cmd := m.Update(snapshotMsg{fixtureSnapshot()})
	m = runCmds(t, next.(Model), cmd, func(m Model) bool { return m.mirrors.rep != nil })
	assert.Equal(t, 1, small.loads, "a small fleet's registries are read once the Nodes are listed")

	large := newFleetHosts()
	m = update(console(large), snapshotMsg{bigSnapshot(2 * (mirrorsReadAtStart + 1))}) // half of them Windows
	require.Equal(t, model.Available, m.snap.Resources[model.ResNodes].Availability)
	m = update(m, snapshotMsg{bigSnapshot(2 * (mirrorsReadAtStart + 1))})
	assert.Zero(t, m.mirrors.seq, "a fleet of more than %d Windows nodes is not read when the console opens", mirrorsReadAtStart)

	next, cmd = m.Update(keyPress("4"))
	m = next.(Model)
	assert.Contains(t, screen(m), "reading the registries directory of every Windows node")
	m = runCmds(t, m, cmd, func(m Model) bool { return m.mirrors.rep != nil })
	m = update(m, press("1", "4")...)
	assert.Equal(t, 1, large.loads, "showing the Mirrors pane reads them, once")
	assert.Contains(t, screen(m), "Windows nodes in step")
}
