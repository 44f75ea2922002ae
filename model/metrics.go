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

	// CPUHistory is the recent CPU percentages, oldest first, for a sparkline.
	CPUHistory []float64 `json:"cpuHistory,omitempty"`
}

// MetricsReport is what one refresh of the metrics of several nodes found, and from where.
type MetricsReport struct {
	Source string        `json:"source"`           // e.g. "windows_exporter via the API server's node proxy"
	Why    string        `json:"why,omitempty"`    // why this source (and not the other), or why none
	Nodes  []NodeMetrics `json:"nodes"`            // in the order asked for
	Errors []NodeError   `json:"errors,omitempty"` // nodes whose metrics could not be read
}

// NodeError says why one node's metrics are missing.
type NodeError struct {
	Node  string `json:"node"`
	Error string `json:"error"`
}
