package model

import "time"

// Resources are CPU and memory amounts: what a container requests or is limited to, summed for a pod. A
// zero is "not set".
type Resources struct {
	CPUCores    float64 `json:"cpuCores,omitempty"`
	MemoryBytes float64 `json:"memoryBytes,omitempty"`
}

// WorkloadPod is a pod on a Windows node as the pod metrics need it: where it runs, its containers' IDs
// (the exporter's container series are keyed by them) and what its spec requests and limits. It comes from
// the cluster's pods (cluster.WorkloadPodOf) and is what a pod metrics source is asked about.
type WorkloadPod struct {
	Namespace  string              `json:"namespace"`
	Name       string              `json:"name"`
	UID        string              `json:"uid,omitempty"`
	Node       string              `json:"node"`
	Containers []WorkloadContainer `json:"containers,omitempty"`
}

// WorkloadContainer is one container of a WorkloadPod.
type WorkloadContainer struct {
	Name string `json:"name"`
	// ID is status.containerStatuses[].containerID ("containerd://<64 hex>"); "" before the container
	// started.
	ID       string    `json:"id,omitempty"`
	Requests Resources `json:"requests,omitempty"`
	Limits   Resources `json:"limits,omitempty"`
}

// Requests is the pod's requests: the sum of its containers'.
func (p WorkloadPod) Requests() Resources {
	var r Resources
	for _, c := range p.Containers {
		r.CPUCores += c.Requests.CPUCores
		r.MemoryBytes += c.Requests.MemoryBytes
	}
	return r
}

// Limits is the pod's limits: the sum of its containers', for each resource only when every container
// has one (a container without a limit leaves the pod unlimited).
func (p WorkloadPod) Limits() Resources {
	var r Resources
	cpuAll, memAll := len(p.Containers) > 0, len(p.Containers) > 0
	for _, c := range p.Containers {
		r.CPUCores += c.Limits.CPUCores
		r.MemoryBytes += c.Limits.MemoryBytes
		cpuAll = cpuAll && c.Limits.CPUCores > 0
		memAll = memAll && c.Limits.MemoryBytes > 0
	}
	if !cpuAll {
		r.CPUCores = 0
	}
	if !memAll {
		r.MemoryBytes = 0
	}
	return r
}

// PodMetrics is one pod's resource use at one moment, as `wmcon top pods` prints it and the node details'
// pods list draws it. A nil figure is one the source could not give (a first read of a counter has no
// rate yet).
type PodMetrics struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Node      string    `json:"node"`
	Taken     time.Time `json:"taken"`

	CPUCores    *float64 `json:"cpuCores,omitempty"`    // cores in use (oc adm top's CPU(cores) is this ×1000, in m)
	MemoryBytes *float64 `json:"memoryBytes,omitempty"` // working set (private working set on Windows)
	// Network throughput of the pod's endpoint; nil when the source has no network figures.
	NetRxBytesPerSec *float64 `json:"netRxBytesPerSec,omitempty"`
	NetTxBytesPerSec *float64 `json:"netTxBytesPerSec,omitempty"`

	// Requests and Limits are the pod spec's (WorkloadPod.Requests and Limits).
	Requests Resources `json:"requests"`
	Limits   Resources `json:"limits"`

	Containers []ContainerMetrics `json:"containers,omitempty"` // by name

	// The recent figures, oldest first, one point per HistoryStep, for sparklines: CPU in cores, memory in
	// bytes. A point the source could not give is left out.
	CPUHistory    []float64     `json:"cpuHistory,omitempty"`
	MemoryHistory []float64     `json:"memoryHistory,omitempty"`
	HistoryStep   time.Duration `json:"historyStepNanoseconds,omitempty"`
}

// ContainerMetrics is one container's share of a PodMetrics.
type ContainerMetrics struct {
	Name          string    `json:"name"`
	CPUCores      *float64  `json:"cpuCores,omitempty"`
	MemoryBytes   *float64  `json:"memoryBytes,omitempty"`
	Requests      Resources `json:"requests"`
	Limits        Resources `json:"limits"`
	CPUHistory    []float64 `json:"cpuHistory,omitempty"`
	MemoryHistory []float64 `json:"memoryHistory,omitempty"`
}

// PodNearMemoryLimitPercent is the share of its memory limit past which a container (and its pod) is
// marked: Windows enforces the limit on the container's job object, so allocations fail there.
const PodNearMemoryLimitPercent = 90.0

// MemoryLimitPercent is the container's working set as a share of its memory limit; false without a
// limit or a figure.
func (c ContainerMetrics) MemoryLimitPercent() (float64, bool) {
	if c.MemoryBytes == nil || c.Limits.MemoryBytes <= 0 {
		return 0, false
	}
	return 100 * *c.MemoryBytes / c.Limits.MemoryBytes, true
}

// NearMemoryLimit is the first container at or past PodNearMemoryLimitPercent of its memory limit, and
// that share; false when none is.
func (p PodMetrics) NearMemoryLimit() (ContainerMetrics, float64, bool) {
	for _, c := range p.Containers {
		if pct, ok := c.MemoryLimitPercent(); ok && pct >= PodNearMemoryLimitPercent {
			return c, pct, true
		}
	}
	return ContainerMetrics{}, 0, false
}

// PodMetricsReport is what one refresh of the pods' metrics found, and from where.
type PodMetricsReport struct {
	Source string       `json:"source"`        // e.g. "the kubelets' summary API through the API server's node proxy"
	Why    string       `json:"why,omitempty"` // why this source, and why not the ones before it
	Pods   []PodMetrics `json:"pods"`          // by namespace, then name
	Errors []NodeError  `json:"errors,omitempty"`
	// Asked is how many running pods the source was asked about: a pod it has no figures for (started a
	// moment ago, or its node unread) is not in Pods.
	Asked int `json:"podsAsked"`
}
