package ui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/pods"
)

const mi = 1 << 20

// podsNodeDetail is what cluster.NodeDetail reads of a node with a busy workload: the exporter's
// DaemonSet pod, an IIS pod leaking towards its memory limit, an API pod holding most of the node's
// memory, a SQL pod with two containers and a pending job (no figures).
func podsNodeDetail(_ context.Context, node string) (model.NodeDetail, error) {
	running := func(ns, name, owner string, total int, age time.Duration) model.PodInfo {
		return model.PodInfo{Namespace: ns, Name: name, Phase: "Running", Ready: total, Total: total, Owner: owner, Created: ago(age)}
	}
	return model.NodeDetail{Node: node, Read: fixedNow, Pods: []model.PodInfo{
		running("openshift-monitoring", "windows-exporter-x7k2m", "DaemonSet", 1, 2*day),
		running("windows-apps", "iis-frontend-2", "ReplicaSet", 1, 3*day),
		running("windows-apps", "dotnet-api-5", "ReplicaSet", 1, 3*day),
		running("windows-apps", "sql-0", "StatefulSet", 2, 9*day),
		{Namespace: "windows-apps", Name: "report-job-8x2kq", Phase: "Pending", Reason: "ContainerCreating", Total: 1, Owner: "Job", Created: ago(40 * time.Second)},
	}}, nil
}

// ramp is n points from a to b.
func ramp(a, b float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = a + (b-a)*float64(i)/float64(n-1)
	}
	return out
}

// fixturePods answers like PodMetricsFeed.Node for podsNodeDetail's pods: 20 points of history 30 s
// apart, the pressures as model.PodPressures finds them on a node with 93 % of its memory used.
func fixturePods(node string) model.NodePods {
	capacity := model.NodeCapacity{CPUCores: 4, MemoryBytes: 16 << 30}
	container := func(name string, cpu, mem float64, req, lim model.Resources, cpuHist, memHist []float64) model.ContainerMetrics {
		return model.ContainerMetrics{Name: name, CPUCores: f(cpu), MemoryBytes: f(mem), Requests: req, Limits: lim,
			CPUHistory: cpuHist, MemoryHistory: memHist}
	}
	pod := func(ns, name string, cs ...model.ContainerMetrics) model.PodMetrics {
		p := model.PodMetrics{Namespace: ns, Name: name, Node: node, Taken: fixedNow, Containers: cs, HistoryStep: 30 * time.Second,
			NetRxBytesPerSec: f(3.1e5), NetTxBytesPerSec: f(9e5)}
		cpu, mem := 0.0, 0.0
		limCPU, limMem := 0.0, 0.0
		for i, c := range cs {
			cpu, mem = cpu+*c.CPUCores, mem+*c.MemoryBytes
			p.Requests.CPUCores += c.Requests.CPUCores
			p.Requests.MemoryBytes += c.Requests.MemoryBytes
			limCPU, limMem = limCPU+c.Limits.CPUCores, limMem+c.Limits.MemoryBytes
			if i == 0 {
				p.CPUHistory, p.MemoryHistory = append([]float64(nil), c.CPUHistory...), append([]float64(nil), c.MemoryHistory...)
				continue
			}
			for j := range p.CPUHistory {
				p.CPUHistory[j] += c.CPUHistory[j]
				p.MemoryHistory[j] += c.MemoryHistory[j]
			}
		}
		p.CPUCores, p.MemoryBytes = f(cpu), f(mem)
		p.Limits = model.Resources{CPUCores: limCPU, MemoryBytes: limMem}
		return p
	}
	none := model.Resources{}
	report := model.PodMetricsReport{Source: "the kubelets' summary API through the API server's node proxy",
		Why: "no --prometheus URL was given", Asked: 4, Pods: []model.PodMetrics{
			pod("openshift-monitoring", "windows-exporter-x7k2m",
				container("windows-exporter", 0.02, 60*mi, none, none, flat(0.02, 20), flat(60*mi, 20))),
			pod("windows-apps", "dotnet-api-5",
				container("dotnet-api", 0.31, 9216*mi, model.Resources{CPUCores: 0.25, MemoryBytes: 512 * mi}, none,
					ramp(0.25, 0.31, 20), flat(9216*mi, 20))),
			pod("windows-apps", "iis-frontend-2",
				container("iis-frontend", 0.14, 950*mi, model.Resources{CPUCores: 0.1, MemoryBytes: 256 * mi},
					model.Resources{CPUCores: 1, MemoryBytes: 1 << 30}, ramp(0.12, 0.14, 20), ramp(880*mi, 950*mi, 20))),
			pod("windows-apps", "sql-0",
				container("sql", 0.55, 4800*mi, model.Resources{CPUCores: 1, MemoryBytes: 4 << 30},
					model.Resources{CPUCores: 2, MemoryBytes: 6 << 30}, ramp(0.4, 0.55, 20), flat(4800*mi, 20)),
				container("log-shipper", 0.05, 100*mi, model.Resources{CPUCores: 0.05, MemoryBytes: 64 * mi},
					model.Resources{CPUCores: 0.1, MemoryBytes: 128 * mi}, flat(0.05, 20), flat(100*mi, 20))),
		}}
	figures := &model.NodeMetrics{Node: node, MemoryUsedPercent: f(93), MemoryTotalBytes: f(16 << 30), CPUPercent: f(35)}
	return model.NodePods{Report: report, Capacity: capacity, Pressures: model.PodPressures(capacity, figures, report.Pods)}
}

// podReads is a view.PodMetricsFunc that answers with answer and counts the reads of each node.
type podReads struct {
	mu     sync.Mutex
	calls  map[string]int
	answer func(node string, call int) model.NodePods
}

func newPodReads(answer func(node string, call int) model.NodePods) *podReads {
	if answer == nil {
		answer = func(node string, _ int) model.NodePods { return fixturePods(node) }
	}
	return &podReads{calls: map[string]int{}, answer: answer}
}

func (r *podReads) read(_ context.Context, node string) (model.NodePods, error) {
	r.mu.Lock()
	r.calls[node]++
	call := r.calls[node]
	r.mu.Unlock()
	return r.answer(node, call), nil
}

func (r *podReads) count(node string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[node]
}

// podOptions read the pods' figures through reads, with an interval no test waits for: a test sends
// the tick itself.
func podOptions(reads *podReads) Options {
	opts := testOptions()
	opts.NodeDetail = podsNodeDetail
	opts.PodMetrics, opts.PodMetricsInterval = reads.read, time.Hour
	return opts
}

// runCmds runs cmd and what its messages lead to, batches included, giving every message to m, until
// until(m) holds (at most 10 s). Commands still running then (the hour-long ticks) are left behind, and
// so are their messages: wait here for what the test needs, never in a later call with a nil cmd.
func runCmds(t *testing.T, m Model, cmd tea.Cmd, until func(Model) bool) Model {
	t.Helper()
	msgs := make(chan tea.Msg, 64)
	start := func(c tea.Cmd) {
		if c != nil {
			go func() { msgs <- c() }()
		}
	}
	start(cmd)
	deadline := time.After(10 * time.Second)
	for !until(m) {
		select {
		case msg := <-msgs:
			switch msg := msg.(type) {
			case nil:
			case tea.BatchMsg:
				for _, c := range msg {
					start(c)
				}
			default:
				next, c := m.Update(msg)
				m = next.(Model)
				start(c)
			}
		case <-deadline:
			t.Fatalf("the console did not get there; screen:\n%s", screen(m))
		}
	}
	return m
}

// podFiguresShown says the view on top shows a read of the node's pods.
func podFiguresShown(m Model) bool {
	w, ok := m.top().(podWatcher)
	return ok && w.PodFigures() != nil
}

// openPods opens the details of the third node (Windows, 93 % of its memory used) at w × h and waits
// until its pods and their figures are shown.
func openPods(t *testing.T, reads *podReads, w, h int) Model {
	t.Helper()
	m := New(NewProgramContext(podOptions(reads)), nil)
	m = update(m, tea.WindowSizeMsg{Width: w, Height: h}, snapshotMsg{fixtureSnapshot()})
	m = update(m, press("j", "j")...)
	m, cmd := keyCmd(m, "enter")
	require.True(t, isTop[*detailView](m))
	return runCmds(t, m, cmd, func(m Model) bool {
		return podFiguresShown(m) && topOf[*detailView](m).extras.detail != nil
	})
}

// TestNodeDetailPodsListShowsFigures: the node details' pods list has each pod's CPU and memory with a
// sparkline, its requests and limits; the pod at 93 % of its memory limit and the one holding most of a
// node short of memory are marked as the Nodes pane marks a node past a threshold; the pending pod has
// no figures.
func TestNodeDetailPodsListShowsFigures(t *testing.T) {
	reads := newPodReads(nil)
	m := openPods(t, reads, 200, 80)
	s := screen(m)
	for _, want := range []string{"CPU", "CPU HIST", "MEM", "MEM HIST", "CPU REQ/LIM", "MEM REQ/LIM",
		"140m", "100m/1", "256Mi/1Gi", "250m/—", "512Mi/—", "1050m", "4900Mi", "1050m/2100m", "4160Mi/6272Mi",
		"⚠ 950Mi", "⚠ 9216Mi",
		"CPU in millicores, memory as working set; from the kubelets' summary API through the API server's node proxy",
	} {
		assert.Contains(t, s, want)
	}
	assert.Contains(t, lineWith(s, "iis-frontend-2"), "⚠ 950Mi   ▁▂▂▃▃▄▄▄", "the leak climbs from its lowest point towards its limit")
	assert.Contains(t, lineWith(s, "report-job-8x2kq"), "—  ", "a pod without figures shows the None mark")
	assert.NotContains(t, lineWith(s, "sql-0"), "⚠")
	assert.Equal(t, 1, reads.count(nodeFull), "one read of the node's pods")
}

func lineWith(s, text string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	return ""
}

// TestPodMetricsReadWhileAViewShowsTheNode: the pods of a node are read while a view shows it — once per
// interval however many views do — and no more once none does; a Linux node's are not read.
func TestPodMetricsReadWhileAViewShowsTheNode(t *testing.T) {
	reads := newPodReads(nil)
	m := New(NewProgramContext(podOptions(reads)), nil)
	m = update(m, tea.WindowSizeMsg{Width: 160, Height: 45}, snapshotMsg{fixtureSnapshot()})
	assert.Empty(t, m.podMetrics.nodes, "the list alone reads no pods")

	m = update(m, press("j", "j")...)
	m, cmd := keyCmd(m, "enter")
	m = runCmds(t, m, cmd, func(m Model) bool { return podFiguresShown(m) && topOf[*detailView](m).extras.detail != nil })
	assert.Equal(t, 1, reads.count(nodeFull))
	seq := m.podMetrics.seq

	m, cmd = keyCmd(m, "p")
	m = runCmds(t, m, cmd, func(Model) bool { return true })
	m, cmd = keyCmd(m, "enter")
	m = runCmds(t, m, cmd, func(m Model) bool { return isTop[*pods.View](m) && podFiguresShown(m) })
	assert.Equal(t, seq, m.podMetrics.seq, "a second view of the same node starts no read of its own")
	assert.Same(t, topOf[*pods.View](m).PodFigures(), m.stack[0].(podWatcher).PodFigures(), "both show the one read")

	next, cmd := m.Update(podMetricsTickMsg{node: nodeFull, seq: seq})
	// Until the console has the second read's answer, not merely until the read started: the answer
	// comes on this call's channel, which a later runCmds would not listen to.
	m = runCmds(t, next.(Model), cmd, func(m Model) bool { return m.podMetrics.nodes[nodeFull].reads == 2 })
	assert.Equal(t, 2, reads.count(nodeFull))
	next, _ = m.Update(podMetricsTickMsg{node: nodeFull, seq: seq})
	m = next.(Model)
	assert.Equal(t, 2, reads.count(nodeFull), "a stale tick reads nothing")

	m = update(m, press("esc", "esc", "esc")...) // the pod, the selection, the node's details
	require.True(t, onList(m))
	next, cmd = m.Update(podMetricsTickMsg{node: nodeFull, seq: m.podMetrics.nodes[nodeFull].seq})
	m = next.(Model)
	assert.Nil(t, cmd, "no view shows the node: its pods are not read again")
	assert.Empty(t, m.podMetrics.nodes)
	assert.Equal(t, 2, reads.count(nodeFull))

	for i := 0; i < 20; i++ { // a Linux node's details
		if n, ok := m.selectedNode(); ok && !n.Windows {
			break
		}
		m = update(m, press("j")...)
	}
	m = update(m, press("enter")...)
	require.True(t, isTop[*detailView](m))
	assert.Empty(t, m.podMetrics.nodes, "the sources read Windows nodes' pods only")
}

// TestPodSelectionAndDetails: p selects the first pod and scrolls the page to the list; j moves; enter
// shows the pod's containers, each with its history, and its share of its memory limit, marked.
func TestPodSelectionAndDetails(t *testing.T) {
	m := openPods(t, newPodReads(nil), 160, 30)
	assert.NotContains(t, screen(m), "NAMESPACE/NAME", "the pods are below the first screen")
	m = update(m, press("p")...)
	s := screen(m)
	assert.True(t, strings.HasPrefix(strings.Split(s, "\n")[5], "Pods (5)"), "the list's title heads the page:\n%s", s)
	assert.Contains(t, s, "▶ openshift-monitoring/windows-exporter-x7k2m")
	assert.Contains(t, s, "enter pod details")

	m = update(m, press("j", "j", "j", "j", "j")...)
	assert.Contains(t, screen(m), "▶ windows-apps/report-job-8x2kq", "the cursor stops at the last pod")
	m = update(m, press("k")...)
	m = update(m, tea.WindowSizeMsg{Width: 160, Height: 80}) // room for the whole pod
	m, cmd := keyCmd(m, "enter")
	m = runCmds(t, m, cmd, func(m Model) bool { return isTop[*pods.View](m) && podFiguresShown(m) })
	s = screen(m)
	for _, want := range []string{"Pod windows-apps/sql-0 on " + nodeFull, "Running, 2/2 ready, 0 restarts", "StatefulSet, age 9d",
		"Containers (2)", "sql", "log-shipper", "78 % of 128Mi", "cpu 2, memory 6Gi",
		"cpu 50m, memory 64Mi", "sparklines: the last 10m, one point per 30s",
	} {
		assert.Contains(t, s, want)
	}
	assert.NotContains(t, s, "Pressure")
	m = update(m, press("esc")...)
	require.True(t, isTop[*detailView](m), "esc goes back to the node's details")

	m = update(m, press("k", "k")...)
	m, cmd = keyCmd(m, "enter")
	m = runCmds(t, m, cmd, func(m Model) bool { return isTop[*pods.View](m) && podFiguresShown(m) })
	s = screen(m)
	assert.Contains(t, s, "Pod windows-apps/iis-frontend-2")
	assert.Contains(t, s, "⚠ 950Mi")
	assert.Contains(t, lineWith(s, "Memory limit:"), "93 % of 1Gi")
	assert.Contains(t, s, "⚠ container iis-frontend of pod windows-apps/iis-frontend-2 uses 93 % of its memory limit")
}

// TestHealthViewChecksAgainWhenPodPressuresChange: the health view's node has its pods read while it is
// open; when the pods the pressure analysis names change, the node is checked again (its triage names
// them), and a read that changes nothing it names does not.
func TestHealthViewChecksAgainWhenPodPressuresChange(t *testing.T) {
	calm := func(node string) model.NodePods {
		np := fixturePods(node)
		np.Pressures = nil
		return np
	}
	reads := newPodReads(func(node string, call int) model.NodePods {
		if call == 1 || call == 3 {
			return calm(node)
		}
		return fixturePods(node)
	})
	triaged := make(chan string, 8)
	opts := podOptions(reads)
	opts.Triage = func(_ context.Context, node string) (diagnosis.Report, error) {
		triaged <- node
		return diagnosis.Report{Node: node}, nil
	}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{fixtureSnapshot()})
	m = update(m, press("j", "j")...)
	m, cmd := keyCmd(m, "h")
	require.True(t, isTop[*healthView](m))
	m = runCmds(t, m, cmd, func(m Model) bool {
		_, ok := topOf[*healthView](m).health.Report()
		return ok && podFiguresShown(m)
	})
	assert.Equal(t, nodeFull, <-triaged)
	assert.Equal(t, 1, reads.count(nodeFull))

	// Each tick reads the pods again: named, gone, named again — each a change — then the same.
	for read := 2; read <= 4; read++ {
		next, cmd := m.Update(podMetricsTickMsg{node: nodeFull, seq: m.podMetrics.nodes[nodeFull].seq})
		// Until the check has ended: a read that starts one marks the view loading at once, and the
		// commands still running when runCmds returns are dropped, so it must not return before.
		m = runCmds(t, next.(Model), cmd, func(m Model) bool {
			return m.podMetrics.nodes[nodeFull].reads == read && len(triaged) == 1 && !topOf[*healthView](m).health.Loading()
		})
		assert.Equal(t, nodeFull, <-triaged, "read %d changed the pods named: the node is checked again", read)
	}
	next, cmd := m.Update(podMetricsTickMsg{node: nodeFull, seq: m.podMetrics.nodes[nodeFull].seq})
	m = runCmds(t, next.(Model), cmd, func(m Model) bool { return m.podMetrics.nodes[nodeFull].reads == 5 })
	assert.False(t, topOf[*healthView](m).health.Loading(), "the same pods named: no new check")
	assert.Empty(t, triaged)
}

// goldenPods drives the console to the node details' pods list (p) at w × h, presses keys (a view they
// open is opened), and compares the screen.
func goldenPods(t *testing.T, w, h int, keys ...string) Model {
	m := openPods(t, newPodReads(nil), w, h)
	for _, k := range append([]string{"p"}, keys...) {
		next, cmd := m.Update(keyPress(k))
		m = next.(Model)
		if cmd != nil {
			m = update(m, cmd())
		}
	}
	require.True(t, podFiguresShown(m))
	teatest.RequireEqualOutput(t, []byte(asciiScreen(t, m.View().Content)))
	return m
}

func TestGoldenNodePods80x24(t *testing.T)  { goldenPods(t, 80, 24) }
func TestGoldenNodePods160x45(t *testing.T) { goldenPods(t, 160, 45) }

// TestGoldenPodDetail*: the leaking IIS pod's details: its memory marked near the limit, the pressure
// finding, its container with its history.
func TestGoldenPodDetail80x24(t *testing.T) {
	require.True(t, isTop[*pods.View](goldenPods(t, 80, 24, "j", "enter")))
}
func TestGoldenPodDetail160x45(t *testing.T) {
	require.True(t, isTop[*pods.View](goldenPods(t, 160, 45, "j", "enter")))
}
