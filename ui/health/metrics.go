package health

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/spark"
)

// Metrics is what the health view shows above the checks: the node's figures and their history (the
// console keeps an hour of it), or why there are none.
type Metrics struct {
	Source  string             // where the numbers come from, and why that source
	Figures *model.NodeMetrics // nil: none, see Why
	Why     string
}

// SetMetrics shows the node's latest figures; the console calls it at every metrics refresh.
func (m *Model) SetMetrics(x Metrics) { m.metrics = &x }

// metricsLines are the health view's resource lines: each figure's current value, a sparkline of its
// history and the history's min and max; nothing when the console reads no metrics.
func (m Model) metricsLines() []string {
	x := m.metrics
	if x == nil || m.opts.Cluster {
		return nil
	}
	st := &m.styles
	if x.Figures == nil {
		why := x.Why
		if why == "" {
			why = "reading…"
		}
		return []string{ansi.Truncate(st.Muted.Render("Metrics: not available: "+why), m.width, "…")}
	}
	f := x.Figures
	width := max(10, min(60, m.width-44))
	pct := func(v float64) string { return fmt.Sprintf("%.0f%%", v) }
	rate := func(v float64) string { return compactRate(v) }
	none := m.marks.None
	disk := none
	if f.VolumeFreePercent != nil {
		disk = strings.TrimSpace(f.Volume + " " + pct(*f.VolumeFreePercent))
	}
	rows := []metricRow{
		{"CPU", orDash(f.CPUPercent, none, pct), f.CPUBusy(), f.CPUHistory, 0, 100, pct},
		{"Memory", orDash(f.MemoryUsedPercent, none, pct), f.MemoryFull(), f.MemoryHistory, 0, 100, pct},
		{"Disk free", disk, f.VolumeLow(), f.VolumeFreeHistory, 0, 100, pct},
		{"Network in", orDash(f.NetRxBytesPerSec, none, rate), false, f.NetRxHistory, 0, 0, rate},
		{"Network out", orDash(f.NetTxBytesPerSec, none, rate), false, f.NetTxHistory, 0, 0, rate},
	}
	if f.PodsRunning != nil { // from kube-state-metrics through Prometheus; the exporters do not count pods
		count := func(v float64) string { return fmt.Sprintf("%.0f", v) }
		rows = append(rows, metricRow{"Pods running", count(*f.PodsRunning), false, f.PodsHistory, 0, 0, count})
	}
	out := make([]string, 0, len(rows)+1)
	for _, r := range rows {
		now := fmt.Sprintf("  %-13s%-10s", r.name, r.now)
		if r.bad {
			now = st.Fail.Render(now)
		}
		line := now + "  " + spark.Line(r.hist, width, r.lo, r.hi, m.marks.Spark)
		if len(r.hist) > 0 {
			lo, hi := bounds(r.hist)
			line += "  " + st.Muted.Render("min "+r.format(lo)+"  max "+r.format(hi))
		}
		out = append(out, ansi.Truncate(line, m.width, "…"))
	}
	return append(out, ansi.Truncate(st.Muted.Render("  "+historySpan(f)+" · "+x.Source), m.width, "…"))
}

// metricRow is one figure of the health view: its current value (bad: past its threshold) and history
// on the scale lo..hi (hi <= lo: the values' own).
type metricRow struct {
	name, now string
	bad       bool
	hist      []float64
	lo, hi    float64
	format    func(float64) string
}

// historySpan says what the sparklines cover: "last 1h, one point per 30s".
func historySpan(f *model.NodeMetrics) string {
	if f.HistoryStep <= 0 || len(f.CPUHistory) < 2 {
		return "no history yet"
	}
	span := f.HistoryStep * time.Duration(len(f.CPUHistory)-1)
	return "last " + shortDuration(span) + ", one point per " + shortDuration(f.HistoryStep)
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

func orDash(v *float64, none string, format func(float64) string) string {
	if v == nil {
		return none
	}
	return format(*v)
}

func bounds(vs []float64) (lo, hi float64) {
	lo, hi = vs[0], vs[0]
	for _, v := range vs[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// compactRate is bytes per second with a decimal unit, as the Nodes pane writes them: 950B/s, 4.2MB/s.
func compactRate(v float64) string { return spark.Bytes(v) + "B/s" }
