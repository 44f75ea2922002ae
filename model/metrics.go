package model

import "time"

// NodeMetrics is one node's resource use at one moment, as `wmcon top` prints it and the Nodes pane
// draws it. A nil value is one the source could not give (a first scrape has no CPU rate yet; a node
// without the memory collector has no memory figure).
type NodeMetrics struct {
	Node  string    `json:"node"`
	Taken time.Time `json:"taken"`

	CPUPercent        *float64 `json:"cpuPercent,omitempty"`        // all cores, 0..100
	MemoryUsedPercent *float64 `json:"memoryUsedPercent,omitempty"` // physical memory not available, 0..100
	MemoryTotalBytes  *float64 `json:"memoryTotalBytes,omitempty"`

	// The fullest volume with a drive letter (the one that runs out first).
	Volume            string   `json:"volume,omitempty"`
	VolumeFreeBytes   *float64 `json:"volumeFreeBytes,omitempty"`
	VolumeFreePercent *float64 `json:"volumeFreePercent,omitempty"`

	NetRxBytesPerSec *float64 `json:"netRxBytesPerSec,omitempty"`
	NetTxBytesPerSec *float64 `json:"netTxBytesPerSec,omitempty"`

	// PodsRunning is how many pods run on the node: from kube-state-metrics through Prometheus, or counted
	// from the cluster's running pods when the figures come from the exporters (which do not count pods).
	PodsRunning *float64 `json:"podsRunning,omitempty"`

	// The recent figures, oldest first, one point per HistoryStep, for sparklines. A point the source
	// could not give is left out, so a series may be shorter than another.
	CPUHistory    []float64 `json:"cpuHistory,omitempty"`
	MemoryHistory []float64 `json:"memoryHistory,omitempty"`
	// VolumeFreeHistory is the free share (%) of the fullest lettered volume at each point.
	VolumeFreeHistory []float64     `json:"volumeFreeHistory,omitempty"`
	PodsHistory       []float64     `json:"podsHistory,omitempty"`
	NetRxHistory      []float64     `json:"netRxHistory,omitempty"`
	NetTxHistory      []float64     `json:"netTxHistory,omitempty"`
	HistoryStep       time.Duration `json:"historyStepNanoseconds,omitempty"`
}

// The thresholds past which a node is marked in the Nodes pane and triage reports a problem.
const (
	CPUBusyPercent       = 90.0            // CPU above this …
	CPUBusyFor           = 5 * time.Minute // … for this long starves the kubelet and the pods
	MemoryFullPercent    = 90.0            // memory used above this: evictions and OOM kills come next
	VolumeLowFreePercent = 10.0            // free space below this: the kubelet's image GC fails
)

// CPUBusyDuration is how long the CPU has stayed above CPUBusyPercent up to the latest figure, as far
// as the history tells (0 when it is not above it now).
func (m *NodeMetrics) CPUBusyDuration() time.Duration {
	if m.CPUPercent == nil || *m.CPUPercent <= CPUBusyPercent {
		return 0
	}
	n := 0
	for i := len(m.CPUHistory) - 1; i >= 0 && m.CPUHistory[i] > CPUBusyPercent; i-- {
		n++
	}
	if n < 2 {
		return 0
	}
	return time.Duration(n-1) * m.HistoryStep
}

// CPUBusy says the CPU has been above CPUBusyPercent for CPUBusyFor or longer.
func (m *NodeMetrics) CPUBusy() bool { return m.HistoryStep > 0 && m.CPUBusyDuration() >= CPUBusyFor }

// MemoryFull says memory use is above MemoryFullPercent.
func (m *NodeMetrics) MemoryFull() bool {
	return m.MemoryUsedPercent != nil && *m.MemoryUsedPercent > MemoryFullPercent
}

// VolumeLow says the fullest volume has less than VolumeLowFreePercent free.
func (m *NodeMetrics) VolumeLow() bool {
	return m.VolumeFreePercent != nil && *m.VolumeFreePercent < VolumeLowFreePercent
}

// MetricsReport is what one refresh of the metrics of several nodes found, and from where.
type MetricsReport struct {
	Source string        `json:"source"`           // e.g. "windows_exporter via the API server's node proxy"
	Why    string        `json:"why,omitempty"`    // why this source (and not the other), or why none
	Nodes  []NodeMetrics `json:"nodes"`            // in the order asked for
	Errors []NodeError   `json:"errors,omitempty"` // nodes whose metrics could not be read
}

// MetricsTarget is a node to read metrics for: its name, first IPv4 InternalIP (how a Prometheus target
// may name it) and whether it runs Windows. OnScreen marks the rows the console shows and its selected
// node: the per-node paths (node proxy, SSH) read only those; Prometheus answers for the whole fleet.
type MetricsTarget struct {
	Name     string
	IP       string
	Windows  bool
	OnScreen bool
}

// NodeError says why one node's metrics are missing.
type NodeError struct {
	Node  string `json:"node"`
	Error string `json:"error"`
}
