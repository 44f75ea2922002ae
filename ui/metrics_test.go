package ui

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/theme"
)

const (
	nodeBusy    = "ip-127-0-17-41.us-east-2.compute.internal"  // CPU pinned for 10 minutes
	nodeDown    = "ip-127-0-23-188.us-east-2.compute.internal" // its exporter cannot be read
	nodeFull    = "ip-127-0-45-7.us-east-2.compute.internal"   // C: nearly full, memory past 90 %
	nodeBYOHWin = "win-byoh-01.corp.example.com"               // quiet
)

func f(v float64) *float64 { return &v }

func flat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// fixtureMetrics answers like a MetricsFeed: figures for three Windows nodes, an error for the fourth,
// and the Linux nodes refused with the feed's reason.
func fixtureMetrics(_ context.Context, targets []model.MetricsTarget) model.MetricsReport {
	r := model.MetricsReport{Source: "windows_exporter via the API server's node proxy", Why: "no --prometheus URL was given"}
	for _, t := range targets {
		switch t.Name {
		case nodeBusy:
			r.Nodes = append(r.Nodes, model.NodeMetrics{Node: t.Name, CPUPercent: f(97), MemoryUsedPercent: f(62),
				Volume: "C:", VolumeFreePercent: f(58), VolumeFreeBytes: f(74e9), NetRxBytesPerSec: f(4.2e6), NetTxBytesPerSec: f(1.1e6),
				CPUHistory: append([]float64{20, 35, 60}, flat(97, 21)...), MemoryHistory: flat(62, 24),
				NetRxHistory: flat(4.2e6, 24), NetTxHistory: flat(1.1e6, 24), HistoryStep: 30 * time.Second})
		case nodeFull:
			r.Nodes = append(r.Nodes, model.NodeMetrics{Node: t.Name, CPUPercent: f(35), MemoryUsedPercent: f(93),
				Volume: "C:", VolumeFreePercent: f(4), VolumeFreeBytes: f(5.1e9), NetRxBytesPerSec: f(9e5), NetTxBytesPerSec: f(3e5),
				CPUHistory: []float64{30, 40, 35}, HistoryStep: 30 * time.Second})
		case nodeBYOHWin:
			r.Nodes = append(r.Nodes, model.NodeMetrics{Node: t.Name, CPUPercent: f(12), MemoryUsedPercent: f(45),
				Volume: "C:", VolumeFreePercent: f(60), NetRxBytesPerSec: f(180e3), NetTxBytesPerSec: f(950),
				CPUHistory: []float64{10, 12, 14, 12}, HistoryStep: 30 * time.Second})
		case nodeDown:
			r.Errors = append(r.Errors, model.NodeError{Node: t.Name, Error: "the windows_exporter service is not running"})
		default:
			r.Errors = append(r.Errors, model.NodeError{Node: t.Name, Error: "a Linux node: wmcon reads windows_exporter only"})
		}
	}
	return r
}

func metricsOptions() Options {
	opts := testOptions()
	opts.Metrics, opts.MetricsInterval = fixtureMetrics, time.Hour
	return opts
}

// metricsModel is the console at w×h with the fixture's snapshot and one metrics read answered.
func metricsModel(t *testing.T, w, h int) Model {
	t.Helper()
	m := New(NewProgramContext(metricsOptions()), nil)
	m = update(m, tea.WindowSizeMsg{Width: w, Height: h}, snapshotMsg{fixtureSnapshot()})
	require.True(t, m.metrics.busy, "the first snapshot starts a read")
	var targets []model.MetricsTarget
	for _, n := range fixtureSnapshot().Nodes {
		targets = append(targets, model.MetricsTarget{Name: n.Name, IP: n.InternalIP, Windows: n.Windows})
	}
	return update(m, metricsLoadedMsg{seq: m.metrics.seq, rep: fixtureMetrics(context.Background(), targets)})
}

func lineOf(t *testing.T, s, node string) string {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, node[:20]) {
			return l
		}
	}
	t.Fatalf("no line for %s in\n%s", node, s)
	return ""
}

func TestNodesPaneShowsMetricsWithThresholdMarks(t *testing.T) {
	m := metricsModel(t, 200, 30)
	s := screen(m)
	assert.Contains(t, s, "CPU HISTORY")
	busy := lineOf(t, s, nodeBusy)
	assert.Contains(t, busy, "⚠ 97%", "busy for 10 minutes: marked")
	assert.Contains(t, busy, "4.2M/1.1M")
	assert.Contains(t, busy, "▃███████████", "24 points in 12 cells, each its bucket's peak; the busy stretch at the right")
	full := lineOf(t, s, nodeFull)
	assert.Contains(t, full, "⚠ 93%")
	assert.Contains(t, full, "⚠ C: 4%")
	assert.NotContains(t, full, "⚠ 35%")
	assert.Contains(t, lineOf(t, s, nodeDown), "—", "no figures: the None mark")
	assert.Contains(t, lineOf(t, s, nodeBYOHWin), "180K/950")
}

// TestBusyMomentIsOnlyAWarning: above 90 % now but not for 5 minutes is not yet the threshold.
func TestBusyMomentIsOnlyAWarning(t *testing.T) {
	m := &model.NodeMetrics{CPUPercent: f(95), CPUHistory: []float64{20, 20, 95, 95}, HistoryStep: 30 * time.Second}
	text, tone := cpuCell(m, theme.MarksFor(false))
	assert.Equal(t, "95%", text)
	assert.Equal(t, toneWarn, tone)
	m.CPUHistory = append(flat(20, 3), flat(95, 11)...) // 10 steps of 30 s: 5 minutes
	text, tone = cpuCell(m, theme.MarksFor(false))
	assert.Equal(t, "⚠ 95%", text)
	assert.Equal(t, toneBad, tone)
}

func TestDetailsSayWhyANodeHasNoMetrics(t *testing.T) {
	m := metricsModel(t, 160, 80)
	m = update(m, press("j", "enter")...) // the node whose exporter is down
	s := screen(m)
	assert.Contains(t, s, "Source:")
	assert.Contains(t, s, "windows_exporter via the API server's node proxy")
	assert.Contains(t, s, "not available: the windows_exporter service is not running")
}

func TestDetailsDrawLargerSparklines(t *testing.T) {
	m := metricsModel(t, 160, 80)
	m = update(m, press("enter")...) // the busy node
	s := screen(m)
	assert.Contains(t, s, "⚠ 97%")
	assert.Contains(t, s, "▂▃▅"+strings.Repeat("█", 21), "one cell per point, up to 40")
	assert.Contains(t, s, "min 20%  max 97%")
	assert.Contains(t, s, "sparklines over 11m, one point per 30s") // 24 points, 23 steps of 30 s
	assert.Contains(t, s, "4.2MB/s")
	assert.Contains(t, s, "past a threshold")
}

func TestStaleMetricsReadIsDropped(t *testing.T) {
	m := metricsModel(t, 200, 30)
	before := screen(m)
	m = update(m, metricsLoadedMsg{seq: m.metrics.seq - 1, rep: model.MetricsReport{}})
	assert.Equal(t, before, screen(m))
}

func TestNoMetricsFuncNoColumns(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	assert.NotContains(t, screen(m), "CPU")
	assert.Nil(t, m.readMetrics())
}

// TestMetricsRefreshLoop runs the console as a program: it reads the metrics again and again on its
// own, without a key, and a change reaches the screen.
func TestMetricsRefreshLoop(t *testing.T) {
	var mu sync.Mutex
	reads := 0
	opts := testOptions()
	opts.MetricsInterval = 20 * time.Millisecond
	opts.Metrics = func(ctx context.Context, targets []model.MetricsTarget) model.MetricsReport {
		mu.Lock()
		defer mu.Unlock()
		reads++
		r := fixtureMetrics(ctx, targets)
		if reads >= 3 {
			r.Nodes[0].CPUPercent = f(55) // nodeBusy calms down
		}
		return r
	}
	snapshots := make(chan *model.Snapshot, 1)
	snapshots <- fixtureSnapshot()
	tm := teatest.NewTestModel(t, New(NewProgramContext(opts), snapshots), teatest.WithInitialTermSize(200, 30))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("55%")) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	require.NoError(t, tm.Quit())
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	mu.Lock()
	defer mu.Unlock()
	assert.GreaterOrEqual(t, reads, 3)
}

func TestSparkline(t *testing.T) {
	levels := "abcd"
	assert.Equal(t, "  ad", sparkline([]float64{0, 100}, 4, 0, 100, levels), "fewer values: blank on the left")
	assert.Equal(t, "ad", sparkline([]float64{0, 10, 100, 5}, 2, 0, 100, levels), "buckets keep their peak")
	assert.Equal(t, "ad", sparkline([]float64{0, 4}, 2, 0, 0, levels), "no scale: the values' own maximum")
	assert.Equal(t, "bd", sparkline([]float64{1, 4}, 2, 0, 0, levels))
	assert.Equal(t, "aa", sparkline([]float64{0, 0}, 2, 0, 0, levels))
	assert.Equal(t, "dd", sparkline([]float64{150, 100}, 2, 0, 100, levels), "clamped")
	assert.Equal(t, "", sparkline(nil, 0, 0, 100, levels))
}

func TestCompactBytes(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 950: "950", 999.6: "1.0K", 180e3: "180K", 4.2e6: "4.2M", 12.3e9: "12G"} {
		assert.Equal(t, want, compactBytes(v), "%v", v)
	}
}

func TestGoldenNodesMetrics(t *testing.T) {
	goldenScreenWaiting(t, metricsOptions(), 120, 20, fixtureSnapshot(), "⚠ C: 4%")
}

// TestGoldenNodesMetrics100x24: the node columns that may give way go first, then the network, the
// sparkline and memory; CPU and the disk stay. (At 80 columns they give way too: the details show them.)
func TestGoldenNodesMetrics100x24(t *testing.T) {
	goldenScreenWaiting(t, metricsOptions(), 100, 24, fixtureSnapshot(), "⚠ C: 4%")
}

// A read marks the rows on screen and the selected node, and only those: the per-node paths (node proxy,
// SSH) read nothing else, so a fleet of thousands costs what a screenful does.
func TestMetricsReadMarksTheRowsOnScreen(t *testing.T) {
	var got []model.MetricsTarget
	opts := metricsOptions()
	opts.Metrics = func(_ context.Context, targets []model.MetricsTarget) model.MetricsReport {
		got = targets
		return model.MetricsReport{}
	}
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 160, Height: 30}, snapshotMsg{bigSnapshot(400)})
	m = update(m, press("pgdown", "j")...)
	read := func() []string {
		m.metrics.busy = false
		m.readMetrics()()
		var on []string
		for _, tg := range got {
			if tg.OnScreen {
				on = append(on, tg.Name)
			}
		}
		return on
	}
	on := read()
	require.Len(t, got, 400, "every node is a target: Prometheus answers for the whole fleet")
	assert.Less(t, len(on), 30, "no more than a screenful is marked")
	require.NotEmpty(t, on)
	s := screen(m)
	// NAME may be cut at this width ("ip-127-0-0-24.us-east-2…"): a row is known by its name up to the
	// first dot, dot included, which is unique and always fits.
	shown := func(name string) string { return name[:strings.Index(name, ".")+1] }
	for _, name := range on {
		assert.Contains(t, s, shown(name), "a marked node is on screen")
	}
	assert.Contains(t, on, m.pane().selectedKey, "the selected node is marked")
	for _, tg := range got {
		if !tg.OnScreen {
			assert.NotContains(t, s, shown(tg.Name), "a node on screen is marked")
		}
	}
	m = update(m, press("pgdown", "pgdown")...)
	assert.NotEqual(t, on, read(), "scrolling moves the marks with the screen")
}

// A metrics read renews the metric cells of the rows whose figures changed, in place, and leaves every
// other row as it was: rebuilding all rows for each read was most of a large fleet's idle work. What the
// pane shows must still be what a full rebuild would show, column widths included.
func TestMetricsReadRenewsOnlyTheRowsWhoseFiguresChanged(t *testing.T) {
	m := metricsModel(t, 200, 30)
	p := &m.panes[paneNodes]
	type kept struct {
		first *string // the row's cells' backing array: the same one when the row was not rebuilt
		cells []string
	}
	before := map[string]kept{}
	for _, r := range p.all {
		before[r.Key] = kept{&r.Cells[0], slices.Clone(r.Cells)}
	}
	var targets []model.MetricsTarget
	for _, n := range m.snap.Nodes {
		targets = append(targets, model.MetricsTarget{Name: n.Name, IP: n.InternalIP, Windows: n.Windows})
	}
	rep := fixtureMetrics(context.Background(), targets)
	changed := map[string]bool{nodeBusy: true, nodeDown: true, nodeBYOHWin: true}
	var next model.MetricsReport
	for _, n := range rep.Nodes {
		switch n.Node {
		case nodeBusy: // calmer now
			n.CPUPercent, n.CPUHistory = f(41), []float64{97, 60, 41}
		case nodeBYOHWin: // its exporter stopped answering
			next.Errors = append(next.Errors, model.NodeError{Node: n.Node, Error: "connection refused"})
			continue
		}
		next.Nodes = append(next.Nodes, n)
	}
	next.Nodes = append(next.Nodes, model.NodeMetrics{Node: nodeDown, CPUPercent: f(100), MemoryUsedPercent: f(50),
		Volume: "C:", VolumeFreePercent: f(30), NetRxBytesPerSec: f(2.5e6), NetTxBytesPerSec: f(12e6)}) // back
	m.metrics.busy = true
	m = update(m, metricsLoadedMsg{seq: m.metrics.seq, rep: next})
	p = &m.panes[paneNodes]

	for _, r := range p.all {
		was := before[r.Key]
		require.NotNil(t, was.first, "a row for %s appeared", r.Key)
		assert.Same(t, was.first, &r.Cells[0], "%s: its row was rebuilt", r.Key)
		if !changed[r.Key] {
			assert.Equal(t, was.cells, r.Cells, "%s: its figures did not change, nor may its row", r.Key)
		}
	}
	s := screen(m)
	assert.Contains(t, lineOf(t, s, nodeBusy), "41%")
	assert.NotContains(t, lineOf(t, s, nodeBusy), "97%")
	assert.Contains(t, lineOf(t, s, nodeDown), "100%")
	assert.Contains(t, lineOf(t, s, nodeDown), "2.5M/12M")
	assert.NotContains(t, lineOf(t, s, nodeBYOHWin), "12%", "no figures now: the None mark")
	assert.Contains(t, lineOf(t, s, nodeFull), "⚠ 93%", "unchanged figures still shown")

	likeFullRebuild(t, m, "CPU narrower (the widest cell went)")

	// nodeDown's CPU has been pinned: its cell, "⚠ 100%", is now the CPU column's widest.
	down := &next.Nodes[len(next.Nodes)-1]
	down.CPUHistory, down.HistoryStep = flat(100, 24), 30*time.Second
	m.metrics.busy = true
	m = update(m, metricsLoadedMsg{seq: m.metrics.seq, rep: next})
	assert.Contains(t, lineOf(t, screen(m), nodeDown), "⚠ 100%")
	likeFullRebuild(t, m, "CPU wider")

	next.Nodes = next.Nodes[:len(next.Nodes)-1] // and gone again
	m.metrics.busy = true
	m = update(m, metricsLoadedMsg{seq: m.metrics.seq, rep: next})
	assert.NotContains(t, lineOf(t, screen(m), nodeDown), "100%")
	likeFullRebuild(t, m, "CPU narrower again")
}

// likeFullRebuild checks that the Nodes pane's rows and column widths are what rebuilding it would give.
func likeFullRebuild(t *testing.T, m Model, when string) {
	t.Helper()
	p := &m.panes[paneNodes]
	full := p.kind.spec().rows(p, m.snap, m.env())
	require.Len(t, p.all, len(full))
	for i := range full {
		assert.Equal(t, full[i].Cells, p.all[i].Cells, "%s: row %d differs from a full rebuild", when, i)
		assert.Equal(t, full[i].Tones, p.all[i].Tones, "%s: row %d's tones differ from a full rebuild", when, i)
	}
	widths, gap := columnWidths(p.columns(), full, m.ctx.Layout.Body.W)
	assert.Equal(t, widths, p.widths, "%s: the columns fit the new figures", when)
	assert.Equal(t, gap, p.gap, when)
}
