package metrics

import "github.com/wmcon/wmcon/model"

// Compute turns a node's latest sample, and the one before it (nil for the first), into the figures
// wmcon shows. Rates need the earlier sample; a counter that went backwards (the exporter or the host
// restarted) gives no rate rather than a wrong one.
func Compute(node string, prev *Sample, cur Sample) model.NodeMetrics {
	m := model.NodeMetrics{Node: node, Taken: cur.Taken, PodsRunning: cur.Pods}
	if cur.HasMemory {
		m.MemoryUsedPercent = ptr(clampPercent(100 * (1 - cur.MemAvailable/cur.MemTotal)))
		m.MemoryTotalBytes = ptr(cur.MemTotal)
	}
	if v, ok := cur.Fullest(); ok {
		m.Volume = v.Name
		m.VolumeFreeBytes = ptr(v.FreeBytes)
		m.VolumeFreePercent = ptr(clampPercent(100 * v.FreeBytes / v.SizeBytes))
	}
	if prev == nil {
		return m
	}
	if cur.HasCPU && prev.HasCPU {
		dTotal, dIdle := cur.CPUTotal-prev.CPUTotal, cur.CPUIdle-prev.CPUIdle
		if dTotal > 0 && dIdle >= 0 {
			m.CPUPercent = ptr(clampPercent(100 * (1 - dIdle/dTotal)))
		}
	}
	dt := cur.Taken.Sub(prev.Taken).Seconds()
	if cur.HostClock != nil && prev.HostClock != nil {
		dt = *cur.HostClock - *prev.HostClock
	}
	if cur.HasNet && prev.HasNet && dt > 0 {
		dRx, dTx := cur.RxBytes-prev.RxBytes, cur.TxBytes-prev.TxBytes
		if dRx >= 0 && dTx >= 0 {
			m.NetRxBytesPerSec, m.NetTxBytesPerSec = ptr(dRx/dt), ptr(dTx/dt)
		}
	}
	return m
}

func ptr(v float64) *float64 { return &v }

func clampPercent(v float64) float64 { return min(max(v, 0), 100) }
