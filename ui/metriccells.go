package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/page"
	"github.com/wmcon/wmcon/ui/spark"
)

// sparkCells is the width of the Nodes pane's CPU sparkline (the details view draws wider ones).
const sparkCells = 12

// nodeMetricColumns are the Nodes pane's columns when the console reads metrics. The network gives way
// first (so a 120-column terminal keeps the sparkline), then the sparkline, memory, the disk (a full
// one stops the node) and CPU, but only after the node columns that may; the details view shows every
// figure.
var nodeMetricColumns = append(slices.Clone(nodeColumns),
	Column{Title: "CPU", Max: 6, Drop: 1},
	Column{Title: "MEM", Max: 6, Drop: 3},
	Column{Title: "DISK FREE", Max: 12, Drop: 2},
	Column{Title: "NET IN/OUT", Max: 13, Drop: 5},
	Column{Title: "CPU HISTORY", Max: sparkCells, Drop: 4},
)

// addMetricCells appends the metric cells of the named node to its row: a node without figures shows the
// None mark in each (its details say why).
func addMetricCells(r *Row, name string, env rowEnv) {
	m, _ := env.Metrics.node(name)
	if m == nil {
		for range 5 {
			r.Cells = append(r.Cells, env.Marks.None)
			r.Tones = append(r.Tones, toneMuted)
		}
		return
	}
	cpu, cpuTone := cpuCell(m, env.Marks)
	mem, memTone := memoryCell(m, env.Marks)
	disk, diskTone := volumeCell(m, env.Marks)
	sparkTone := toneMuted
	if cpuTone != toneNormal {
		sparkTone = cpuTone
	}
	r.Cells = append(r.Cells, cpu, mem, disk, networkCell(m, env.Marks),
		sparkline(recent(m.CPUHistory, m.HistoryStep), sparkCells, 0, 100, env.Marks.Spark))
	r.Tones = append(r.Tones, cpuTone, memTone, diskTone, toneNormal, sparkTone)
}

// paneHistory is the span of the Nodes pane's CPU sparkline; the console keeps more for the health view.
const paneHistory = 15 * time.Minute

// recent is the points of hist (one per step) within the last paneHistory.
func recent(hist []float64, step time.Duration) []float64 {
	if step <= 0 {
		return hist
	}
	n := int(paneHistory/step) + 1
	if len(hist) <= n {
		return hist
	}
	return hist[len(hist)-n:]
}

// cpuCell is past the threshold (a mark, bad) only once the CPU has been busy for CPUBusyFor; a
// busy moment is a warning.
func cpuCell(m *model.NodeMetrics, marks Marks) (string, Tone) {
	switch {
	case m.CPUPercent == nil:
		return marks.None, toneMuted
	case m.CPUBusy():
		return marks.Warn + " " + percentText(*m.CPUPercent), toneBad
	case *m.CPUPercent > model.CPUBusyPercent:
		return percentText(*m.CPUPercent), toneWarn
	}
	return percentText(*m.CPUPercent), toneNormal
}

func memoryCell(m *model.NodeMetrics, marks Marks) (string, Tone) {
	switch {
	case m.MemoryUsedPercent == nil:
		return marks.None, toneMuted
	case m.MemoryFull():
		return marks.Warn + " " + percentText(*m.MemoryUsedPercent), toneBad
	}
	return percentText(*m.MemoryUsedPercent), toneNormal
}

// volumeCell is the fullest volume's free share, "C: 40%".
func volumeCell(m *model.NodeMetrics, marks Marks) (string, Tone) {
	if m.VolumeFreePercent == nil {
		return marks.None, toneMuted
	}
	text := strings.TrimSpace(m.Volume + " " + percentText(*m.VolumeFreePercent))
	if m.VolumeLow() {
		return marks.Warn + " " + text, toneBad
	}
	return text, toneNormal
}

// networkCell is the bytes per second in and out, "4.2M/1.1M".
func networkCell(m *model.NodeMetrics, marks Marks) string {
	if m.NetRxBytesPerSec == nil || m.NetTxBytesPerSec == nil {
		return marks.None
	}
	return compactBytes(*m.NetRxBytesPerSec) + "/" + compactBytes(*m.NetTxBytesPerSec)
}

func percentText(v float64) string { return fmt.Sprintf("%.0f%%", v) }

// compactBytes writes a byte count in at most four characters with a decimal unit: 950, 180K, 4.2M, 12G.
func compactBytes(v float64) string { return spark.Bytes(v) }

// detailSparkCells is the width of the details view's sparklines.
const detailSparkCells = 40

// nodeMetrics is the details view's Metrics section: the current figures with larger sparklines and
// their range, or why there are none.
func nodeMetrics(d *page.Writer, n *model.NodeInfo, env rowEnv) {
	d.Section("Metrics")
	m, why := env.Metrics.node(n.Name)
	if env.Metrics.loaded {
		d.Field("Source", env.Metrics.source)
	}
	if m == nil {
		d.Line(d.Styles.Muted.Render("not available: " + why))
		return
	}
	span := ""
	if m.HistoryStep > 0 && len(m.CPUHistory) > 1 {
		span = " over " + humanDuration(m.HistoryStep*time.Duration(len(m.CPUHistory)-1))
	}
	cpu, cpuTone := cpuCell(m, env.Marks)
	mem, memTone := memoryCell(m, env.Marks)
	disk, diskTone := volumeCell(m, env.Marks)
	d.Field("CPU", trendLine(d, cpu, cpuTone, m.CPUHistory, 0, 100, percentText, env.Marks))
	d.Field("Memory", trendLine(d, mem, memTone, m.MemoryHistory, 0, 100, percentText, env.Marks))
	if m.VolumeFreeBytes != nil {
		disk += " free (" + compactBytes(*m.VolumeFreeBytes) + "B)"
	}
	d.Field("Fullest volume", toneStyle(d.Styles, diskTone).Render(disk))
	rate := func(v float64) string { return compactBytes(v) + "B/s" }
	d.Field("Network in", trendLine(d, rateText(m.NetRxBytesPerSec, env.Marks), toneNormal, m.NetRxHistory, 0, 0, rate, env.Marks))
	d.Field("Network out", trendLine(d, rateText(m.NetTxBytesPerSec, env.Marks), toneNormal, m.NetTxHistory, 0, 0, rate, env.Marks))
	if span != "" {
		d.Line(d.Styles.Muted.Render("sparklines" + span + ", one point per " + humanDuration(m.HistoryStep)))
	}
	if m.CPUBusy() || m.MemoryFull() || m.VolumeLow() {
		d.Line(d.Styles.Bad.Render(env.Marks.Warn + " past a threshold (CPU > 90% for 5m, memory > 90%, a volume under 10% free): " + cmdline.Wmcon("triage", n.Name) + " says what to do"))
	}
}

func rateText(v *float64, marks Marks) string {
	if v == nil {
		return marks.None
	}
	return compactBytes(*v) + "B/s"
}

// trendLine is "now  sparkline  min … max …", the current value in its tone.
func trendLine(d *page.Writer, now string, tone Tone, hist []float64, lo, hi float64, format func(float64) string, marks Marks) string {
	line := toneStyle(d.Styles, tone).Render(layout.PadRight(now, 10))
	if len(hist) == 0 {
		return line
	}
	low, high := hist[0], hist[0]
	for _, v := range hist {
		low, high = min(low, v), max(high, v)
	}
	return line + "  " + sparkline(hist, detailSparkCells, lo, hi, marks.Spark) +
		"  " + d.Styles.Muted.Render("min "+format(low)+"  max "+format(high))
}
