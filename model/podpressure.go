package model

import (
	"fmt"
	"sort"
)

// PodMostOfNodePercent is the share of a node's memory or CPU past which one pod "uses most of the node".
const PodMostOfNodePercent = 50.0

// PodPressureKind says what a PodPressure is about.
type PodPressureKind string

const (
	// PodUsesMostMemory: the pod's working set is most of the node's memory.
	PodUsesMostMemory PodPressureKind = "most-memory"
	// PodUsesMostCPU: the pod uses most of the node's cores.
	PodUsesMostCPU PodPressureKind = "most-cpu"
	// PodLargestMemory / PodLargestCPU: the node is short of memory (or CPU) and no pod uses most of it;
	// this pod uses the largest share.
	PodLargestMemory PodPressureKind = "largest-memory"
	PodLargestCPU    PodPressureKind = "largest-cpu"
	// PodNearMemoryLimit: a container of the pod is at PodNearMemoryLimitPercent of its memory limit or past it.
	PodNearMemoryLimit PodPressureKind = "near-memory-limit"
)

// PodPressure is one finding of PodPressures: a pod named as a cause of its node's trouble, or at risk of
// its own.
type PodPressure struct {
	Kind      PodPressureKind `json:"kind"`
	Namespace string          `json:"namespace"`
	Pod       string          `json:"pod"`
	Container string          `json:"container,omitempty"` // PodNearMemoryLimit's container
	// Percent is the pod's share of the node's capacity (memory or cores), or the container's share of its
	// memory limit.
	Percent float64 `json:"percent"`
	// Severe says the node itself is short of the resource (memory above MemoryFullPercent, CPU above
	// CPUBusyPercent), so the pod is a cause of a present problem, not only a risk.
	Severe bool   `json:"severe"`
	Text   string `json:"text"` // one sentence naming the pod and the figures
}

// NodeCapacity is what a node has: its cores and bytes of memory (the Node's status.capacity; 0 unknown).
type NodeCapacity struct {
	CPUCores    float64
	MemoryBytes float64
}

// PodPressures finds the pods behind a node's resource trouble: every pod using at least
// PodMostOfNodePercent of the node's memory or cores; when the node is short of one (its figures say so)
// and no pod uses most of it, the pod using the largest share; and every pod with a container near its
// memory limit. Most severe first, then by share. node may be nil (no node figures: nothing is severe);
// a capacity of 0 falls back to the node figures' memory total, or leaves that resource out.
func PodPressures(capacity NodeCapacity, node *NodeMetrics, pods []PodMetrics) []PodPressure {
	memCap := capacity.MemoryBytes
	if memCap <= 0 && node != nil && node.MemoryTotalBytes != nil {
		memCap = *node.MemoryTotalBytes
	}
	memShort := node != nil && node.MemoryFull()
	cpuShort := node != nil && node.CPUPercent != nil && *node.CPUPercent > CPUBusyPercent
	var out []PodPressure
	out = append(out, shares(pods, memCap, memShort, memoryOf, PodUsesMostMemory, PodLargestMemory)...)
	out = append(out, shares(pods, capacity.CPUCores, cpuShort, cpuOf, PodUsesMostCPU, PodLargestCPU)...)
	for _, p := range pods {
		if c, pct, ok := p.NearMemoryLimit(); ok {
			out = append(out, PodPressure{Kind: PodNearMemoryLimit, Namespace: p.Namespace, Pod: p.Name, Container: c.Name,
				Percent: pct, Severe: pct >= 100 || memShort,
				Text: fmt.Sprintf("container %s of pod %s/%s uses %.0f %% of its memory limit (%s of %s): it fails to allocate "+
					"at the limit", c.Name, p.Namespace, p.Name, pct, ByteSize(*c.MemoryBytes), ByteSize(c.Limits.MemoryBytes))})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Severe != out[j].Severe {
			return out[i].Severe
		}
		return out[i].Percent > out[j].Percent
	})
	return out
}

// PressureOf is the pressures of one pod (by namespace and name) among all.
func PressureOf(all []PodPressure, namespace, name string) []PodPressure {
	var out []PodPressure
	for _, p := range all {
		if p.Namespace == namespace && p.Pod == name {
			out = append(out, p)
		}
	}
	return out
}

type resourceOf struct {
	word string
	get  func(PodMetrics) *float64
	text func(float64) string
}

var (
	memoryOf = resourceOf{"memory", func(p PodMetrics) *float64 { return p.MemoryBytes }, ByteSize}
	cpuOf    = resourceOf{"CPU", func(p PodMetrics) *float64 { return p.CPUCores },
		func(v float64) string { return fmt.Sprintf("%.2f cores", v) }}
)

// shares names the pods using most of one resource of the node; when the node is short of it and none
// does, the largest user.
func shares(pods []PodMetrics, capacity float64, short bool, r resourceOf, most, largest PodPressureKind) []PodPressure {
	if capacity <= 0 {
		return nil
	}
	var out []PodPressure
	top, topPct := -1, 0.0
	for i, p := range pods {
		v := r.get(p)
		if v == nil {
			continue
		}
		pct := 100 * *v / capacity
		if pct > topPct {
			top, topPct = i, pct
		}
		if pct >= PodMostOfNodePercent {
			out = append(out, pressure(most, p, pct, short, fmt.Sprintf("pod %s/%s uses %.0f %% of the node's %s (%s of %s)",
				p.Namespace, p.Name, pct, r.word, r.text(*v), r.text(capacity))))
		}
	}
	if len(out) == 0 && short && top >= 0 {
		p := pods[top]
		out = append(out, pressure(largest, p, topPct, true, fmt.Sprintf("pod %s/%s uses the largest share of the node's %s: %.0f %% (%s of %s)",
			p.Namespace, p.Name, r.word, topPct, r.text(*r.get(p)), r.text(capacity))))
	}
	return out
}

func pressure(kind PodPressureKind, p PodMetrics, pct float64, severe bool, text string) PodPressure {
	return PodPressure{Kind: kind, Namespace: p.Namespace, Pod: p.Name, Percent: pct, Severe: severe, Text: text}
}

// ByteSize is a binary-prefixed size (1.5 GiB), as the console and triage write memory and disk.
func ByteSize(b float64) string {
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
