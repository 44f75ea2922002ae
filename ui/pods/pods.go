// Package pods is the console's view of one pod on a Windows node (enter on a pod of the node details'
// pods list, after p): its status, its CPU, memory and network with their history, what it requests and
// is limited to, the pressures that name it, and each container with its own history and limits. It also
// holds the pods' figures (Figures) that the node details' list, this view and the health view share;
// the root reads them, once per interval for each node a view shows, and hands every read to them.
package pods

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/helpview"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/page"
	"github.com/wmcon/wmcon/ui/spark"
	"github.com/wmcon/wmcon/ui/styles"
	"github.com/wmcon/wmcon/ui/theme"
	"github.com/wmcon/wmcon/ui/view"
)

// Target is the pod the view shows: where it runs, and what the node details read of it.
type Target struct {
	Node string
	Info model.PodInfo // namespace, name, status, readiness, restarts, owner
	Age  string        // its age, as the node details wrote it
}

// View is one pod's details. It shows the figures the root hands it (SetPodFigures) and reads nothing
// itself.
type View struct {
	ctx      *view.ProgramContext
	target   Target
	figures  *Figures
	viewport viewport.Model
}

// New is the view of the pod t; the root gives it the node's latest figures as soon as it is open.
func New(ctx *view.ProgramContext, t Target) *View {
	v := &View{ctx: ctx, target: t, viewport: viewport.New()}
	v.render()
	return v
}

func (v *View) Init() tea.Cmd { return nil }

// PodsNode is the node whose pods' figures the view shows (the root reads them while it is open).
func (v *View) PodsNode() string { return v.target.Node }

// PodFigures is the read the view shows; nil before the first.
func (v *View) PodFigures() *Figures { return v.figures }

// SetPodFigures shows a new read of the node's pods.
func (v *View) SetPodFigures(f *Figures) tea.Cmd {
	v.figures = f
	v.render()
	return nil
}

func (v *View) SetSize(w, h int) {
	v.viewport.SetWidth(w)
	v.viewport.SetHeight(max(0, h-1)) // the title takes a line
	v.render()
}

func (v *View) title() string {
	return "Pod " + v.target.Info.Namespace + "/" + v.target.Info.Name + " on " + v.target.Node
}

func (v *View) View() string {
	st := &v.ctx.Styles
	w, pos := v.viewport.Width(), v.scrollPosition()
	title := ansi.Truncate(v.title(), max(1, w-len(pos)-2), v.ctx.Marks.Ellipsis)
	line := st.DetailTitle.Render(title)
	if pos != "" {
		line += strings.Repeat(" ", max(2, w-lipgloss.Width(line)-len(pos))) + st.Muted.Render(pos)
	}
	return line + "\n" + v.viewport.View()
}

// scrollPosition says that the page goes on below (or above) the screen; "" when it fits.
func (v *View) scrollPosition() string {
	total, h, top := v.viewport.TotalLineCount(), v.viewport.Height(), v.viewport.YOffset()
	switch {
	case h <= 0 || total <= h:
		return ""
	case top > 0 && top+h < total:
		return "more above and below"
	case top > 0:
		return "more above"
	}
	return "more below"
}

func (v *View) render() {
	offset := v.viewport.YOffset()
	v.viewport.SetContent(Content(&v.ctx.Styles, v.ctx.Marks, v.target, v.figures, v.viewport.Width()))
	v.viewport.SetYOffset(offset)
}

func (v *View) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := v.ctx.Keys
		switch {
		case key.Matches(msg, k.Back):
			return nil, nil
		case key.Matches(msg, k.Help):
			return v, view.Open(helpview.New(v.ctx, v))
		}
		if page.Scroll(&v.viewport, k, msg) {
			return v, nil
		}
		var cmd tea.Cmd
		v.viewport, cmd = v.viewport.Update(msg)
		return v, cmd
	case tea.MouseWheelMsg:
		page.Scroll(&v.viewport, v.ctx.Keys, msg)
	}
	return v, nil
}

func (v *View) ShortHelp() []key.Binding {
	k := v.ctx.Keys
	return []key.Binding{k.Up, k.Down, k.Back, k.Help}
}

func (v *View) FullHelp() [][]key.Binding {
	k := v.ctx.Keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Back, k.Help}}
}

// Content is the page of pod t: its overview, its resources with their history, the pressures naming
// it and its containers, the sparklines as wide as width allows.
func Content(st *styles.Styles, marks theme.Marks, t Target, f *Figures, width int) string {
	d := page.Writer{Styles: st}
	info := t.Info
	d.Section("Overview") // the namespace and the node are in the title
	status := info.Phase
	if info.Reason != "" {
		status = info.Reason
	}
	d.Field("Status", fmt.Sprintf("%s, %d/%d ready, %d restarts", orText(status, marks.None), info.Ready, info.Total, info.Restarts))
	d.Field("Owner", orText(info.Owner, "none (a bare pod)")+", age "+orText(t.Age, marks.None))

	d.Section("Resources")
	p := f.Pod(info.Namespace, info.Name)
	if f != nil && f.Source != "" {
		source(&d, f.Source, width)
	}
	if p == nil {
		d.Line(st.Muted.Render("not available: " + f.Why()))
		return d.String()
	}
	w := trendWidth(width)
	cpuMark, memMark := f.CPUMark(info.Namespace, info.Name), f.MemoryMark(info.Namespace, info.Name)
	memLo, memHi := f.MemoryRange(p.MemoryHistory, p.Limits.MemoryBytes)
	d.Field("CPU", trend(st, marks, CPUText(p.CPUCores, marks.None), cpuMark, p.CPUHistory, 0, f.CPUScale(p.Limits.CPUCores), w, cpuFigure))
	d.Field("Memory", trend(st, marks, MemoryText(p.MemoryBytes, marks.None), memMark, p.MemoryHistory, memLo, memHi, w, memoryFigure))
	d.Field("Requests", resources(p.Requests, marks.None))
	d.Field("Limits", resources(p.Limits, marks.None))
	d.Field("Network in", rate(p.NetRxBytesPerSec, marks.None))
	d.Field("Network out", rate(p.NetTxBytesPerSec, marks.None))
	if line := historyLine(p); line != "" {
		wrapped(&d, st.Muted, line, "", width)
	}
	pressures(&d, st, marks, f.PressuresOf(info.Namespace, info.Name), width)
	containers(&d, st, marks, f, p, w)
	return d.String()
}

// source writes where the figures come from, and why that source, wrapped under its value's column.
func source(d *page.Writer, text string, width int) {
	const column = 21 // the page's indent, the key's 18 cells and a space
	lines := []string{text}
	if width > column+20 {
		lines = layout.Wrap(lines, width-column)
	}
	d.Field("Source", lines[0])
	for _, l := range lines[1:] {
		d.Line(strings.Repeat(" ", column-2) + l)
	}
}

// pressures lists what the pressure analysis says of the pod: past a threshold in the bad tone with
// the warning mark, a risk in the warning tone.
func pressures(d *page.Writer, st *styles.Styles, marks theme.Marks, ps []model.PodPressure, width int) {
	if len(ps) == 0 {
		return
	}
	d.Section("Pressure")
	for _, p := range ps {
		if p.Severe || p.Kind == model.PodNearMemoryLimit {
			wrapped(d, st.Bad, p.Text, marks.Warn+" ", width)
			continue
		}
		wrapped(d, st.Warn, p.Text, "", width)
	}
}

// wrapped writes text after mark in style, wrapped at the page's width (0: not wrapped), the lines after
// the first under the text rather than under the mark.
func wrapped(d *page.Writer, style lipgloss.Style, text, mark string, width int) {
	hang := strings.Repeat(" ", lipgloss.Width(mark))
	lines := []string{text}
	if w := width - 2 - len(hang); w > 20 {
		lines = layout.Wrap(lines, w)
	}
	for i, l := range lines {
		if i == 0 {
			d.Line(style.Render(mark + l))
			continue
		}
		d.Line(style.Render(hang + l))
	}
}

// containers lists each container with its own history, requests and limits, and its share of its
// memory limit (marked at model.PodNearMemoryLimitPercent).
func containers(d *page.Writer, st *styles.Styles, marks theme.Marks, f *Figures, p *model.PodMetrics, w int) {
	d.Section(fmt.Sprintf("Containers (%d)", len(p.Containers)))
	for i, c := range p.Containers {
		if i > 0 {
			d.Line("")
		}
		d.Line(st.DetailKey.Render(c.Name))
		memMark := MarkNone
		pct, hasLimit := c.MemoryLimitPercent()
		if hasLimit && pct >= model.PodNearMemoryLimitPercent {
			memMark = MarkBad
		}
		memLo, memHi := f.MemoryRange(c.MemoryHistory, c.Limits.MemoryBytes)
		d.Field("  CPU", trend(st, marks, CPUText(c.CPUCores, marks.None), MarkNone, c.CPUHistory, 0, f.CPUScale(c.Limits.CPUCores), w, cpuFigure))
		d.Field("  Memory", trend(st, marks, MemoryText(c.MemoryBytes, marks.None), memMark, c.MemoryHistory, memLo, memHi, w, memoryFigure))
		if hasLimit {
			share := fmt.Sprintf("%.0f %% of %s", pct, MemoryQuantity(c.Limits.MemoryBytes))
			d.Field("  Memory limit", markStyle(st, memMark).Render(share))
		}
		d.Field("  Requests", resources(c.Requests, marks.None))
		d.Field("  Limits", resources(c.Limits, marks.None))
	}
}

func cpuFigure(v float64) string    { return CPUText(&v, "") }
func memoryFigure(v float64) string { return MemoryText(&v, "") }

// trendWidth is the sparklines' width: 40 cells when the page is wide enough, fewer on a narrow one
// (the key, the value and the range take the rest of the line), never under 8.
func trendWidth(width int) int {
	if width <= 0 {
		return 40
	}
	return min(40, max(8, width-60))
}

// trend is "now  sparkline  min … max …", the current value marked as its Mark says; the sparkline runs
// from bottom to top (CPUScale, MemoryRange; top <= bottom: the values' own maximum).
func trend(st *styles.Styles, marks theme.Marks, now string, m Mark, hist []float64, bottom, top float64, w int, format func(float64) string) string {
	if m == MarkBad {
		now = marks.Warn + " " + now
	}
	line := markStyle(st, m).Render(layout.PadRight(now, 10))
	if len(hist) == 0 {
		return line
	}
	lo, hi := hist[0], hist[0]
	for _, v := range hist {
		lo, hi = min(lo, v), max(hi, v)
	}
	return line + "  " + spark.Line(hist, w, bottom, top, marks.Spark) + "  " + st.Muted.Render("min "+format(lo)+"  max "+format(hi))
}

func markStyle(st *styles.Styles, m Mark) lipgloss.Style {
	switch m {
	case MarkBad:
		return st.Bad
	case MarkWarn:
		return st.Warn
	}
	return st.Cell
}

func resources(r model.Resources, none string) string {
	if r.CPUCores <= 0 && r.MemoryBytes <= 0 {
		return "(none)"
	}
	cpu, mem := none, none
	if r.CPUCores > 0 {
		cpu = CPUQuantity(r.CPUCores)
	}
	if r.MemoryBytes > 0 {
		mem = MemoryQuantity(r.MemoryBytes)
	}
	return "cpu " + cpu + ", memory " + mem
}

func rate(v *float64, none string) string {
	if v == nil {
		return none
	}
	return spark.Bytes(*v) + "B/s"
}

// historyLine says what the sparklines cover and what they are drawn against.
func historyLine(p *model.PodMetrics) string {
	if p.HistoryStep <= 0 || len(p.MemoryHistory) < 2 {
		return "no history yet: the sparklines fill as the figures are read again"
	}
	span := p.HistoryStep * time.Duration(len(p.MemoryHistory)-1)
	return "sparklines: the last " + shortDuration(span) + ", one point per " + shortDuration(p.HistoryStep) +
		"; up to the limit, or the node's capacity without one (memory from its lowest point)"
}

func shortDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d.Round(time.Minute)/time.Minute))
	}
	return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
}

func orText(s, none string) string {
	if strings.TrimSpace(s) == "" {
		return none
	}
	return s
}
