package pods

import (
	"fmt"
	"math"

	"github.com/wmcon/wmcon/model"
)

// Figures is what the console knows of one node's pods' resource use after a read: never changed once
// built, so the node details, a pod's details and the health view share it. A nil *Figures is a node
// whose pods have not been read yet.
type Figures struct {
	Node      string
	Source    string             // where the numbers come from, and why that source
	Capacity  model.NodeCapacity // what a pod without limits is drawn against
	Pressures []model.PodPressure
	err       string
	nodeErr   string // why the source has no figures for the node
	pods      map[string]*model.PodMetrics
}

// NewFigures keeps one read of a node's pods (the backend's PodMetricsFunc answer).
func NewFigures(node string, np model.NodePods, err error) *Figures {
	f := &Figures{Node: node, Capacity: np.Capacity, Pressures: np.Pressures, pods: map[string]*model.PodMetrics{}}
	if err != nil {
		f.err = err.Error()
		return f
	}
	r := np.Report
	f.Source = r.Source
	if r.Why != "" {
		f.Source += " (" + r.Why + ")"
	}
	for i := range r.Pods {
		p := &r.Pods[i]
		if p.Node == node || p.Node == "" {
			f.pods[p.Namespace+"/"+p.Name] = p
		}
	}
	for _, e := range r.Errors {
		if e.Node == node {
			f.nodeErr = e.Error
		}
	}
	return f
}

// Pod is one pod's figures; nil when the read has none for it (see Why).
func (f *Figures) Pod(namespace, name string) *model.PodMetrics {
	if f == nil {
		return nil
	}
	return f.pods[namespace+"/"+name]
}

// Why says why a pod has no figures: not read yet, the read failed, the node could not be read, or the
// source had nothing for the pod (not running, or started after the read).
func (f *Figures) Why() string {
	switch {
	case f == nil:
		return "reading…"
	case f.err != "":
		return "cannot read them: " + f.err
	case f.nodeErr != "":
		return "the node's figures cannot be read: " + f.nodeErr
	}
	return "no figures for this pod (it is not running, or started after the last read)"
}

// Failed says the whole read failed (every pod is without figures for the same reason, Why).
func (f *Figures) Failed() bool { return f != nil && (f.err != "" || f.nodeErr != "") }

// PressuresOf are the pressures naming one pod.
func (f *Figures) PressuresOf(namespace, name string) []model.PodPressure {
	if f == nil {
		return nil
	}
	return model.PressureOf(f.Pressures, namespace, name)
}

// Mark is how a pod's figure is drawn, as the Nodes pane draws a node's: plain, in the warning tone (a
// risk), or past a threshold (the warning mark, in the bad tone).
type Mark int

const (
	MarkNone Mark = iota
	MarkWarn
	MarkBad
)

// MemoryMark: a container at 90 % of its memory limit or past it is past a threshold (Windows fails its
// allocations at the limit); a pod using most of the node's memory is a risk, or past a threshold when
// the node is short of memory.
func (f *Figures) MemoryMark(namespace, name string) Mark {
	return f.mark(namespace, name, model.PodUsesMostMemory, model.PodLargestMemory, model.PodNearMemoryLimit)
}

// CPUMark: a pod using most of the node's cores is a risk, or past a threshold when the node is busy.
func (f *Figures) CPUMark(namespace, name string) Mark {
	return f.mark(namespace, name, model.PodUsesMostCPU, model.PodLargestCPU, "")
}

func (f *Figures) mark(namespace, name string, most, largest, always model.PodPressureKind) Mark {
	m := MarkNone
	for _, p := range f.PressuresOf(namespace, name) {
		switch {
		case p.Kind == always && always != "", (p.Kind == most || p.Kind == largest) && p.Severe:
			return MarkBad
		case p.Kind == most || p.Kind == largest:
			m = MarkWarn
		}
	}
	return m
}

// CPUScale is the top of a CPU sparkline: the limit when there is one, else the node's cores; 0 (the
// values' own maximum) when neither is known.
func (f *Figures) CPUScale(limit float64) float64 {
	if limit > 0 || f == nil {
		return limit
	}
	return f.Capacity.CPUCores
}

// MemoryRange is the scale of a memory sparkline: from the lowest point of hist to the limit, else to
// the node's memory. The floor is the pod's own lowest, not 0, so a leak climbs visibly towards the top
// (a pod at 88 % of its limit is near the top of a scale from 0 whatever it does next), while the top
// stays the limit, so a steady pod stays low however its working set jitters. hi <= lo (nothing known):
// the values' own maximum.
func (f *Figures) MemoryRange(hist []float64, limit float64) (lo, hi float64) {
	hi = limit
	if hi <= 0 && f != nil {
		hi = f.Capacity.MemoryBytes
	}
	if len(hist) == 0 || hi <= 0 {
		return 0, 0
	}
	lo = hist[0]
	for _, v := range hist[1:] {
		lo = min(lo, v)
	}
	return lo, hi
}

// CPUText is CPU in millicores, as oc adm top pods prints it ("250m"); none when unknown.
func CPUText(v *float64, none string) string {
	if v == nil {
		return none
	}
	return fmt.Sprintf("%dm", int64(math.Round(*v*1000)))
}

// MemoryText is memory in whole MiB, as oc adm top pods prints it ("380Mi"); none when unknown.
func MemoryText(v *float64, none string) string {
	if v == nil {
		return none
	}
	return fmt.Sprintf("%dMi", int64(*v)/(1<<20))
}

// RequestLimitText is a request and a limit as a pod spec writes them ("100m/1", "256Mi/1Gi"), none
// for one not set.
func RequestLimitText(req, limit float64, quantity func(float64) string, none string) string {
	text := func(v float64) string {
		if v <= 0 {
			return none
		}
		return quantity(v)
	}
	return text(req) + "/" + text(limit)
}

// CPUQuantity is cores as a spec writes them: whole cores bare ("2"), else millicores ("250m").
func CPUQuantity(cores float64) string {
	m := int64(math.Round(cores * 1000))
	if m%1000 == 0 {
		return fmt.Sprint(m / 1000)
	}
	return fmt.Sprintf("%dm", m)
}

// MemoryQuantity is bytes as a spec writes them: whole GiB as Gi, else whole MiB as Mi, else bytes.
func MemoryQuantity(b float64) string {
	n := int64(b)
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGi", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%dMi", n>>20)
	}
	return fmt.Sprint(n)
}
