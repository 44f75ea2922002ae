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

// metricsFacts is what the metrics sources said of the node and of its pods.
type metricsFacts struct {
	configured bool
	source     string
	figures    *model.NodeMetrics
	err        string // why there are no figures ("" with figures)
	pods       podFacts
}

// readMetricsFacts reads the node's figures and, at the same time, its pods'.
func readMetricsFacts(ctx context.Context, deps TriageDeps, node string) metricsFacts {
	var pods podFacts
	done := make(chan struct{})
	go func() { defer close(done); pods = readPodFacts(ctx, deps, node) }()
	f := readNodeFigures(ctx, deps, node)
	<-done
	f.pods = pods
	return f
}

func readNodeFigures(ctx context.Context, deps TriageDeps, node string) metricsFacts {
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
// With a pod metrics source, the pods behind the node's memory or CPU trouble are a check of their own,
// ranked before those two (a pod is their cause).
func (in triageInput) metricsChecks() []diagnosis.Check {
	out := []diagnosis.Check{in.cpuBusy(), in.memoryFull(), in.diskFree()}
	if in.metrics.pods.configured {
		out = append(out, in.podPressure())
	}
	return out
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
	fix := in.podsFirst(model.PodUsesMostCPU, model.PodLargestCPU) + "find the busiest pods (" +
		event.Run("top", "pods", "--node", in.node.Name, "--sort-by", "cpu") + "; oc adm top pods shows nothing for " +
		"Windows pods), give them CPU limits, or move workloads off the node: " + event.Run("drain", in.node.Name)
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
		line += " of " + model.ByteSize(*m.MemoryTotalBytes)
	}
	c.Evidence = append(c.Evidence, line)
	if !m.MemoryFull() {
		c.Status, c.Detail = diagnosis.CheckOK, line
		return c
	}
	c.Status = diagnosis.CheckFail
	c.Detail = fmt.Sprintf("%s (above %.0f %%): Windows pages, containers fail to start, and the kubelet evicts pods next",
		line, model.MemoryFullPercent)
	c.Fix = in.podsFirst(model.PodUsesMostMemory, model.PodLargestMemory) + "find the pods using it (" +
		event.Run("top", "pods", "--node", in.node.Name, "--sort-by", "memory") + "; oc adm top pods shows nothing for " +
		"Windows pods), give them memory limits, or move workloads off the node: " + event.Run("drain", in.node.Name)
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
		line += " (" + model.ByteSize(*m.VolumeFreeBytes) + ")"
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

// TriagePods reads the figures of a node's running pods and the node's capacity, for triage's check of
// the pods behind the node's memory or CPU trouble. An error means no source could be asked at all.
type TriagePods func(ctx context.Context, node string) (model.PodMetricsReport, model.NodeCapacity, error)

// podFacts is what the pod metrics source said of the node's pods.
type podFacts struct {
	configured bool
	source     string
	pods       []model.PodMetrics // the node's
	capacity   model.NodeCapacity
	err        string // why there are no figures
}

func readPodFacts(ctx context.Context, deps TriageDeps, node string) podFacts {
	f := podFacts{configured: deps.Pods != nil}
	if deps.Pods == nil {
		return f
	}
	ctx, cancel := context.WithTimeout(ctx, deps.ClusterTimeout)
	defer cancel()
	r, capacity, err := deps.Pods(ctx, node)
	f.source, f.capacity = r.Source, capacity
	if r.Why != "" {
		f.source += " (" + r.Why + ")"
	}
	if err != nil {
		f.err = err.Error()
		return f
	}
	for _, e := range r.Errors {
		if e.Node == node {
			f.err = e.Error
			return f
		}
	}
	for _, p := range r.Pods {
		if p.Node == node {
			f.pods = append(f.pods, p)
		}
	}
	return f
}

// pressures are the pods behind the node's trouble (model.PodPressures), judged with the node's figures
// (a pod using most of a node short of memory is a cause, of a node with room a risk).
func (in triageInput) pressures() []model.PodPressure {
	pf := in.metrics.pods
	if pf.err != "" {
		return nil
	}
	return model.PodPressures(pf.capacity, in.metrics.figures, pf.pods)
}

// podsFirst names the pod the pressure analysis holds most responsible for a resource, as the start of a
// fix ("" when none is named).
func (in triageInput) podsFirst(kinds ...model.PodPressureKind) string {
	for _, p := range in.pressures() {
		for _, k := range kinds {
			if p.Kind == k {
				return fmt.Sprintf("pod %s/%s uses %.0f %% of it (see the check %q); ", p.Namespace, p.Pod, p.Percent, podPressureTitle)
			}
		}
	}
	return ""
}

const podPressureTitle = "Pods' memory and CPU"

// podPressure names the pods using most of the node's memory or CPU, or close to their memory limit:
// a failure when the node is short of what the pod uses (it is the cause), a warning when it is a risk.
func (in triageInput) podPressure() diagnosis.Check {
	pf := in.metrics.pods
	c := diagnosis.Check{ID: "pod-pressure", Title: podPressureTitle, Rank: rankPodPressure}
	if pf.source != "" {
		c.Evidence = append(c.Evidence, "source: "+pf.source)
	}
	top := event.Run("top", "pods", "--node", in.node.Name, "--containers")
	if pf.err != "" {
		c.Status, c.Detail = diagnosis.CheckUnknown, "unknown: the pods' figures could not be read ("+pf.err+")"
		c.Fix = top + " says which sources it tried and why each failed; the summary API needs nodes/proxy get, " +
			"or give wmcon a Prometheus (--prometheus URL)"
		return c
	}
	ps := in.pressures()
	if len(ps) == 0 {
		c.Status = diagnosis.CheckOK
		c.Detail = fmt.Sprintf("no pod uses most of the node's memory or CPU, none is near its memory limit (pods read: %d)", len(pf.pods))
		return c
	}
	for _, p := range ps {
		c.Evidence = append(c.Evidence, p.Text)
	}
	first := ps[0]
	c.Status, c.Detail = diagnosis.CheckWarn, first.Text+": a risk while the node has room"
	if first.Severe {
		c.Status, c.Detail = diagnosis.CheckFail, first.Text+", and the node is short of it"
	}
	if first.Kind == model.PodNearMemoryLimit {
		c.Detail = first.Text
	}
	c.Fix = podPressureFix(first) + "; its figures over time: " + top + ", or the pod's details in the console"
	return c
}

// podPressureFix is what to do about the pod a pressure names.
func podPressureFix(p model.PodPressure) string {
	pod := p.Namespace + "/" + p.Pod
	switch p.Kind {
	case model.PodNearMemoryLimit:
		return "raise the memory limit of container " + p.Container + " of pod " + pod + " if it needs more, " +
			"or find what it leaks (its memory climbs in the pod's details)"
	case model.PodUsesMostCPU, model.PodLargestCPU:
		return "give pod " + pod + " a CPU limit (resources.limits.cpu) or move it to a node with cores to spare " +
			"(oc delete pod -n " + p.Namespace + " " + p.Pod + " lets its controller place it again)"
	}
	return "give pod " + pod + " a memory limit (resources.limits.memory) or move it to a node with memory to spare " +
		"(oc delete pod -n " + p.Namespace + " " + p.Pod + " lets its controller place it again)"
}
