package ui

import (
	"fmt"
	"strings"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/page"
	"github.com/wmcon/wmcon/ui/pods"
)

// podsList is the node details' pods list beyond what was read of the pods: their figures, when the
// console reads them, and the pod selected (p).
type podsList struct {
	metricsOn bool          // the console reads the pods' figures: the list has their columns
	figures   *pods.Figures // the node's latest read; nil before the first
	cursor    int           // the selected pod, -1 none
	width     int           // the page's width (0: wide enough for every column)
	// selectedLine is where nodePods drew the selected pod: the page's line index, -1 none.
	selectedLine *int
}

// podSparkCells is the width of the pods list's sparklines (a pod's details draw wider ones).
const podSparkCells = 8

// podColumns give way (Drop) before the figures do: which pod uses the node matters most on a narrow
// terminal (a pod's details show every value).
var podColumns = []Column{
	{Title: "NAMESPACE/NAME", Max: 60, Min: 24, Flex: true},
	{Title: "READY", Max: 5, Drop: 6},
	{Title: "STATUS", Max: 18},
	{Title: "RESTARTS", Max: 8, Drop: 7},
	{Title: "AGE", Max: 6, Drop: 8},
}

var podMetricColumns = []Column{
	{Title: "CPU", Max: 8},
	{Title: "CPU HIST", Max: podSparkCells, Drop: 3},
	{Title: "MEM", Max: 9},
	{Title: "MEM HIST", Max: podSparkCells, Drop: 2},
	{Title: "CPU REQ/LIM", Max: 12, Drop: 5},
	{Title: "MEM REQ/LIM", Max: 14, Drop: 4},
}

var podOwnerColumn = Column{Title: "OWNER", Max: 16, Drop: 9}

// nodePods lists the pods on the node, a pod that is not running and ready in the warning tone; with
// the pods' figures, their CPU and memory with a sparkline each, requests and limits, marked as the
// Nodes pane marks a node past a threshold.
func nodePods(d *page.Writer, x nodeExtras, env rowEnv) {
	if x.detail == nil {
		d.Section("Pods")
		d.Line(d.Styles.Muted.Render(extrasState(x)))
		return
	}
	list := x.detail.Pods
	d.Section(fmt.Sprintf("Pods (%d)", len(list)))
	switch {
	case x.detail.PodsErr != "":
		d.Line(d.Styles.Bad.Render("cannot list them: " + x.detail.PodsErr))
		return
	case len(list) == 0:
		d.Line(d.Styles.Muted.Render("(none)"))
		return
	}
	cols, rows := podTable(list, x.pods, env)
	width := x.pods.width - 2 // the page indents its lines
	if x.pods.width <= 0 {
		width = 200
	}
	widths, gap := columnWidths(cols, rows, width)
	cursor := x.pods.cursor
	if cursor >= len(rows) {
		cursor = len(rows) - 1
	}
	if x.pods.selectedLine != nil {
		*x.pods.selectedLine = -1
		if cursor >= 0 {
			*x.pods.selectedLine = d.Lines() + 1 + cursor // after the header
		}
	}
	table := renderTable(d.Styles, env.Marks, tableView{Columns: cols, Widths: widths, Gap: gap, Rows: rows,
		Cursor: cursor, Width: width, Height: len(rows) + 1})
	for _, line := range strings.Split(table, "\n") {
		d.Line(line)
	}
	if x.pods.metricsOn { // wrapped: why one source and not another is the end of a long line
		for _, line := range layout.Wrap([]string{podFiguresNote(x.pods.figures)}, width) {
			d.Line(d.Styles.Muted.Render(line))
		}
	}
}

// podFiguresNote says where the pods' figures come from, or why there are none.
func podFiguresNote(f *pods.Figures) string {
	if f == nil || f.Failed() {
		return "CPU and memory: " + f.Why()
	}
	return "CPU in millicores, memory as working set; from " + f.Source
}

// podTable is the pods list's columns and rows.
func podTable(list []model.PodInfo, pl podsList, env rowEnv) ([]Column, []Row) {
	cols := append([]Column(nil), podColumns...)
	if pl.metricsOn {
		cols = append(cols, podMetricColumns...)
	} else {
		cols[0].Min = 44 // a whole name before the owner and the age: nothing else competes for the room
	}
	cols = append(cols, podOwnerColumn)
	rows := make([]Row, 0, len(list))
	for _, p := range list {
		rows = append(rows, podRow(p, pl, env))
	}
	return cols, rows
}

func podRow(p model.PodInfo, pl podsList, env rowEnv) Row {
	status := p.Phase
	if p.Reason != "" {
		status = p.Reason
	}
	tone := toneNormal
	if !healthyPod(p) {
		tone = toneWarn
	}
	r := Row{Key: p.Namespace + "/" + p.Name,
		Cells: []string{p.Namespace + "/" + p.Name, fmt.Sprintf("%d/%d", p.Ready, p.Total), status, fmt.Sprint(p.Restarts), formatAge(env.Now, p.Created)},
		Tones: []Tone{tone, tone, tone, tone, tone}}
	if pl.metricsOn {
		addPodFigureCells(&r, p, pl.figures, env.Marks)
	}
	r.Cells = append(r.Cells, orDash(p.Owner))
	r.Tones = append(r.Tones, tone)
	return r
}

// addPodFigureCells appends a pod's CPU and memory, each with its sparkline (the last 15 minutes, up to
// the limit or the node's capacity, see pods.MemoryRange), and its requests and limits; a pod without
// figures shows the None mark in each.
func addPodFigureCells(r *Row, p model.PodInfo, f *pods.Figures, marks Marks) {
	m := f.Pod(p.Namespace, p.Name)
	if m == nil {
		for range len(podMetricColumns) {
			r.Cells = append(r.Cells, marks.None)
			r.Tones = append(r.Tones, toneMuted)
		}
		return
	}
	cpu, cpuTone := markedCell(pods.CPUText(m.CPUCores, marks.None), f.CPUMark(p.Namespace, p.Name), marks)
	mem, memTone := markedCell(pods.MemoryText(m.MemoryBytes, marks.None), f.MemoryMark(p.Namespace, p.Name), marks)
	memHist := recent(m.MemoryHistory, m.HistoryStep)
	memLo, memHi := f.MemoryRange(memHist, m.Limits.MemoryBytes)
	r.Cells = append(r.Cells,
		cpu, sparkline(recent(m.CPUHistory, m.HistoryStep), podSparkCells, 0, f.CPUScale(m.Limits.CPUCores), marks.Spark),
		mem, sparkline(memHist, podSparkCells, memLo, memHi, marks.Spark),
		pods.RequestLimitText(m.Requests.CPUCores, m.Limits.CPUCores, pods.CPUQuantity, marks.None),
		pods.RequestLimitText(m.Requests.MemoryBytes, m.Limits.MemoryBytes, pods.MemoryQuantity, marks.None))
	r.Tones = append(r.Tones, cpuTone, sparkTone(cpuTone), memTone, sparkTone(memTone), toneNormal, toneNormal)
}

// markedCell draws a figure as the Nodes pane does: past a threshold with the warning mark in the bad
// tone, a risk in the warning tone.
func markedCell(text string, m pods.Mark, marks Marks) (string, Tone) {
	switch m {
	case pods.MarkBad:
		return marks.Warn + " " + text, toneBad
	case pods.MarkWarn:
		return text, toneWarn
	}
	return text, toneNormal
}

func sparkTone(t Tone) Tone {
	if t == toneNormal {
		return toneMuted
	}
	return t
}
