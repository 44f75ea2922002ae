package triage

import (
	"context"
	"fmt"
	"time"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/model"
)

// TriageMetrics reads one node's figures for triage's resource checks: a report with the node in Nodes,
// or in Errors with why it could not be read. An error means no source could be asked at all.
type TriageMetrics func(ctx context.Context, node string) (model.MetricsReport, error)

// metricsFacts is what the metrics source said of the node.
type metricsFacts struct {
	configured bool
	source     string
	figures    *model.NodeMetrics
	err        string // why there are no figures ("" with figures)
}

func readMetricsFacts(ctx context.Context, deps TriageDeps, node string) metricsFacts {
	f := metricsFacts{configured: deps.Metrics != nil}
	if deps.Metrics == nil {
		return f
	}
	ctx, cancel := context.WithTimeout(ctx, deps.ClusterTimeout)
	defer cancel()
	r, err := deps.Metrics(ctx, node)
	f.source = r.Source
	if r.Why != "" {
		f.source += " (" + r.Why + ")"
	}
	if err != nil {
		f.err = err.Error()
		return f
	}
	for i := range r.Nodes {
		if r.Nodes[i].Node == node {
			f.figures = &r.Nodes[i]
			return f
		}
	}
	f.err = "the source has no figures for this node"
	for _, e := range r.Errors {
		if e.Node == node {
			f.err = e.Error
		}
	}
	return f
}

// metricsChecks are the resource thresholds of the Nodes pane's marks (model.CPUBusyPercent and the
// others), as checks with evidence and what to do.
func (in triageInput) metricsChecks() []diagnosis.Check {
	return []diagnosis.Check{in.cpuBusy(), in.memoryFull(), in.diskFree()}
}

// metricsBase is a resource check with the source as evidence, or unknown (not a failure: the node may
// be fine) when there are no figures or the figure wanted is missing.
func (in triageInput) metricsBase(id, title string, rank int, known func(*model.NodeMetrics) bool) (diagnosis.Check, bool) {
	c := diagnosis.Check{ID: id, Title: title, Rank: rank}
	mf := in.metrics
	if mf.source != "" {
		c.Evidence = append(c.Evidence, "source: "+mf.source)
	}
	switch {
	case !mf.configured:
		c.Status, c.Detail = diagnosis.CheckUnknown, "not checked: no metrics source is configured"
		c.Fix = "run wmcon triage against the cluster (its metrics come from Prometheus or the node's windows_exporter)"
		return c, false
	case mf.figures == nil:
		c.Status, c.Detail = diagnosis.CheckUnknown, "unknown: no metrics could be read ("+mf.err+")"
		c.Fix = "check that the windows_exporter service runs on the host (its check above) and that this user may " +
			"get nodes/proxy, or give wmcon a Prometheus (--prometheus URL)"
		return c, false
	case !known(mf.figures):
		c.Status, c.Detail = diagnosis.CheckUnknown, "unknown: the source gave no such figure for this node"
		c.Fix = "check that windows_exporter runs with the cpu, memory and logical_disk collectors (WMCO enables them)"
		return c, false
	}
	return c, true
}

func (in triageInput) cpuBusy() diagnosis.Check {
	c, ok := in.metricsBase("cpu-busy", "CPU use", rankCPUBusy, func(m *model.NodeMetrics) bool { return m.CPUPercent != nil })
	if !ok {
		return c
	}
	m := in.metrics.figures
	cpu := *m.CPUPercent
	busyFor := m.CPUBusyDuration()
	c.Evidence = append(c.Evidence, fmt.Sprintf("CPU %.0f %% now", cpu), historyLine(m))
	fix := "find the busiest pods (oc adm top pods -A --sort-by=cpu, those on " + in.node.Name + "), give them CPU " +
		"limits, or move workloads off the node: " + event.Run("drain", in.node.Name)
	switch {
	case m.CPUBusy():
		c.Status = diagnosis.CheckFail
		c.Detail = fmt.Sprintf("CPU %.0f %%, above %.0f %% for %s: the kubelet and containerd are starved (late heartbeats, slow pod starts)",
			cpu, model.CPUBusyPercent, shortAge(busyFor))
		c.Fix = fix
	case cpu > model.CPUBusyPercent:
		c.Status = diagnosis.CheckWarn
		c.Detail = fmt.Sprintf("CPU %.0f %% now, above %.0f %% for %s so far (a problem once it lasts %s)",
			cpu, model.CPUBusyPercent, busyText(m, busyFor), shortAge(model.CPUBusyFor))
		c.Fix = "watch it (the Nodes pane's CPU HISTORY); if it stays up, " + fix
	default:
		c.Status, c.Detail = diagnosis.CheckOK, fmt.Sprintf("CPU %.0f %%", cpu)
	}
	return c
}

// busyText is how long the CPU has been busy as far as the history tells; without history, that it
// is not known.
func busyText(m *model.NodeMetrics, d time.Duration) string {
	if m.HistoryStep <= 0 || len(m.CPUHistory) < 2 {
		return "an unknown time (no history: one reading)"
	}
	if d == 0 {
		return "less than " + shortAge(m.HistoryStep)
	}
	return shortAge(d)
}

func historyLine(m *model.NodeMetrics) string {
	if m.HistoryStep <= 0 || len(m.CPUHistory) == 0 {
		return "history: none (the source read the node once)"
	}
	lo, hi := minMax(m.CPUHistory)
	return fmt.Sprintf("history: %d points %s apart, CPU %.0f–%.0f %%", len(m.CPUHistory), shortAge(m.HistoryStep), lo, hi)
}

func minMax(vs []float64) (float64, float64) {
	lo, hi := vs[0], vs[0]
	for _, v := range vs[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

func (in triageInput) memoryFull() diagnosis.Check {
	c, ok := in.metricsBase("memory-full", "Memory use", rankMemoryFull, func(m *model.NodeMetrics) bool { return m.MemoryUsedPercent != nil })
	if !ok {
		return c
	}
	m := in.metrics.figures
	used := *m.MemoryUsedPercent
	line := fmt.Sprintf("memory %.0f %% used", used)
	if m.MemoryTotalBytes != nil {
		line += " of " + byteSize(*m.MemoryTotalBytes)
	}
	c.Evidence = append(c.Evidence, line)
	if !m.MemoryFull() {
		c.Status, c.Detail = diagnosis.CheckOK, line
		return c
	}
	c.Status = diagnosis.CheckFail
	c.Detail = fmt.Sprintf("%s (above %.0f %%): Windows pages, containers fail to start, and the kubelet evicts pods next",
		line, model.MemoryFullPercent)
	c.Fix = "find the pods using it (oc adm top pods -A --sort-by=memory, those on " + in.node.Name + "), give them memory " +
		"limits, or move workloads off the node: " + event.Run("drain", in.node.Name)
	return c
}

func (in triageInput) diskFree() diagnosis.Check {
	c, ok := in.metricsBase("disk-free", "Disk space", rankDiskFree, func(m *model.NodeMetrics) bool { return m.VolumeFreePercent != nil })
	if !ok {
		return c
	}
	m := in.metrics.figures
	free := *m.VolumeFreePercent
	line := fmt.Sprintf("%s has %.0f %% free", m.Volume, free)
	if m.VolumeFreeBytes != nil {
		line += " (" + byteSize(*m.VolumeFreeBytes) + ")"
	}
	c.Evidence = append(c.Evidence, line+", the fullest volume with a drive letter")
	if !m.VolumeLow() {
		c.Status, c.Detail = diagnosis.CheckOK, line
		return c
	}
	c.Status = diagnosis.CheckFail
	c.Detail = fmt.Sprintf("%s has %.0f %% free: the kubelet's image garbage collection will fail, and under %.0f %% free it "+
		"evicts pods (DiskPressure) and image pulls fail", m.Volume, free, model.VolumeLowFreePercent)
	c.Fix = "clean images no pod uses with crictl rmi --prune on the host (over SSH), then old logs under C:\\var\\log; " +
		"if " + m.Volume + " fills again, grow the volume"
	return c
}

// byteSize is a binary-prefixed size (12.0 GiB).
func byteSize(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
