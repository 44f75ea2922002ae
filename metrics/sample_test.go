package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oldExporter is what a windows_exporter of the os/cs era exposes: no memory collector totals, a
// lower-case drive letter and two NICs.
const oldExporter = `# TYPE windows_cpu_time_total counter
windows_cpu_time_total{core="0,0",mode="idle"} 100
windows_cpu_time_total{core="0,0",mode="user"} 50
windows_cpu_time_total{core="0,1",mode="idle"} 100
windows_cpu_time_total{core="0,1",mode="privileged"} 50
# TYPE windows_cs_physical_memory_bytes gauge
windows_cs_physical_memory_bytes 8e+09
# TYPE windows_os_physical_memory_free_bytes gauge
windows_os_physical_memory_free_bytes 2e+09
# TYPE windows_logical_disk_free_bytes gauge
windows_logical_disk_free_bytes{volume="c:"} 30
windows_logical_disk_free_bytes{volume="D:"} 5
windows_logical_disk_free_bytes{volume="HarddiskVolume1"} 1
# TYPE windows_logical_disk_size_bytes gauge
windows_logical_disk_size_bytes{volume="c:"} 100
windows_logical_disk_size_bytes{volume="D:"} 200
windows_logical_disk_size_bytes{volume="HarddiskVolume1"} 100
# TYPE windows_net_bytes_received_total counter
windows_net_bytes_received_total{nic="Ethernet"} 1000
windows_net_bytes_received_total{nic="vEthernet (Ext)"} 500
# TYPE windows_net_bytes_sent_total counter
windows_net_bytes_sent_total{nic="Ethernet"} 300
windows_net_bytes_sent_total{nic="vEthernet (Ext)"} 100
`

func TestParseOlderExporter(t *testing.T) {
	now := time.Unix(1000, 0)
	s, err := ParseExporter(strings.NewReader(oldExporter), now)
	require.NoError(t, err)
	assert.True(t, s.HasCPU)
	assert.Equal(t, 200.0, s.CPUIdle)
	assert.Equal(t, 300.0, s.CPUTotal)
	assert.True(t, s.HasMemory)
	assert.Equal(t, 8e9, s.MemTotal, "the cs collector's total when the memory collector has none")
	assert.Equal(t, 2e9, s.MemAvailable)
	assert.Equal(t, 1500.0, s.RxBytes, "summed over NICs")
	assert.Equal(t, 400.0, s.TxBytes)
	v, ok := s.Fullest()
	require.True(t, ok)
	assert.Equal(t, "D:", v.Name, "D: (2.5%% free) is fuller than c: (30%%); the unlettered partition does not count")

	m := Compute("n1", nil, s)
	assert.Nil(t, m.CPUPercent, "one sample has no rate")
	assert.Nil(t, m.NetRxBytesPerSec)
	require.NotNil(t, m.MemoryUsedPercent)
	assert.InDelta(t, 75, *m.MemoryUsedPercent, 1e-9)
	assert.InDelta(t, 2.5, *m.VolumeFreePercent, 1e-9)
	assert.Equal(t, 5.0, *m.VolumeFreeBytes)
	require.NotNil(t, s.HostClock)
	assert.Equal(t, 150.0, *s.HostClock, "300 s of processor time over two cores")
}

// TestComputeRatesOnTheHostsClock: the network rate divides by the time the host's CPU counters moved
// (read in the same moment as the NICs'), not by the reader's clock, which counts a late answer too.
func TestComputeRatesOnTheHostsClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	clock := func(v float64) *float64 { return &v }
	prev := Sample{Taken: t0, HostClock: clock(500), HasNet: true, RxBytes: 0, TxBytes: 0}
	cur := Sample{Taken: t0.Add(7 * time.Second), HostClock: clock(505), HasNet: true, RxBytes: 5000, TxBytes: 1000}
	m := Compute("n1", &prev, cur)
	require.NotNil(t, m.NetRxBytesPerSec)
	assert.InDelta(t, 1000, *m.NetRxBytesPerSec, 1e-9, "5000 bytes in 5 s of the host's time")
}

func TestComputeRates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	prev := Sample{Taken: t0, HasCPU: true, CPUIdle: 100, CPUTotal: 200, HasNet: true, RxBytes: 0, TxBytes: 0}
	cur := Sample{Taken: t0.Add(10 * time.Second), HasCPU: true, CPUIdle: 104, CPUTotal: 240, HasNet: true, RxBytes: 5000, TxBytes: 1000}
	m := Compute("n1", &prev, cur)
	require.NotNil(t, m.CPUPercent)
	assert.InDelta(t, 90, *m.CPUPercent, 1e-9, "4 s idle of 40 s of core time")
	assert.InDelta(t, 500, *m.NetRxBytesPerSec, 1e-9)
	assert.InDelta(t, 100, *m.NetTxBytesPerSec, 1e-9)

	restarted := Sample{Taken: t0.Add(20 * time.Second), HasCPU: true, CPUIdle: 1, CPUTotal: 2, HasNet: true, RxBytes: 10, TxBytes: 10}
	m = Compute("n1", &cur, restarted)
	assert.Nil(t, m.CPUPercent, "counters that went back (a restart) give no rate")
	assert.Nil(t, m.NetRxBytesPerSec)
	assert.Nil(t, m.MemoryUsedPercent, "no memory series, no memory figure")
}

func TestParseRejectsWhatIsNotMetrics(t *testing.T) {
	_, err := ParseExporter(strings.NewReader("<html>login</html>\n"), time.Now())
	assert.ErrorContains(t, err, "parse windows_exporter metrics")
}

func TestTrackerKeepsABoundedHistory(t *testing.T) {
	tr := NewTracker(3)
	t0 := time.Unix(0, 0)
	idle := 0.0
	var last []float64
	var step time.Duration
	for i, busy := range []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5} {
		idle += 10 * (1 - busy)
		m := tr.Observe("n1", Sample{Taken: t0.Add(time.Duration(i) * 10 * time.Second), HasCPU: true, CPUIdle: idle, CPUTotal: float64(10 * (i + 1))})
		last, step = m.CPUHistory, m.HistoryStep
	}
	require.Len(t, last, 3)
	assert.InDeltaSlice(t, []float64{30, 40, 50}, last, 1e-9, "the newest three, oldest first")
	assert.Equal(t, 10*time.Second, step, "the time between points")

	tr.Observe("gone", Sample{})
	tr.Retain([]string{"n1"})
	m := tr.Observe("gone", Sample{HasCPU: true, CPUTotal: 1})
	assert.Nil(t, m.CPUPercent, "a forgotten node starts over")
	assert.Empty(t, m.CPUHistory)
}

func TestTrackerKeepsEveryFiguresHistory(t *testing.T) {
	tr := NewTracker(10)
	t0 := time.Unix(0, 0)
	sample := func(i int, memAvail float64) Sample {
		return Sample{Taken: t0.Add(time.Duration(i) * time.Second), HasCPU: true, CPUIdle: float64(i) * 0.5, CPUTotal: float64(i),
			HasMemory: memAvail > 0, MemTotal: 100, MemAvailable: memAvail, HasNet: true, RxBytes: float64(i * 1000), TxBytes: float64(i * 10),
			Volumes: []Volume{{Name: "C:", SizeBytes: 100, FreeBytes: float64(50 - i)}}}
	}
	tr.Observe("n", sample(0, 40))
	tr.Observe("n", sample(1, 0)) // no memory figure this time: left out of its series only
	m := tr.Observe("n", sample(2, 20))
	assert.InDeltaSlice(t, []float64{50, 50}, m.CPUHistory, 1e-9)
	assert.InDeltaSlice(t, []float64{80}, m.MemoryHistory, 1e-9)
	assert.InDeltaSlice(t, []float64{49, 48}, m.VolumeFreeHistory, 1e-9)
	assert.InDeltaSlice(t, []float64{1000, 1000}, m.NetRxHistory, 1e-9)
	assert.InDeltaSlice(t, []float64{10, 10}, m.NetTxHistory, 1e-9)
	assert.Equal(t, time.Second, m.HistoryStep)
}

// A node's series are found by its name, else by its address with or without a port.
func TestInstanceIndex(t *testing.T) {
	metrics := []model.Metric{{"instance": "win-a"}, {"instance": "127.0.0.7:9182"}, {"instance": "127.0.0.8"}, {"instance": "win-a"}}
	idx := newInstanceIndex(len(metrics), func(i int) model.Metric { return metrics[i] })
	assert.Equal(t, []int{0, 3}, idx.of(Node{Name: "win-a", IP: "127.0.0.7"}), "the name first")
	assert.Equal(t, []int{1}, idx.of(Node{Name: "win-b", IP: "127.0.0.7"}))
	assert.Equal(t, []int{2}, idx.of(Node{Name: "win-c", IP: "127.0.0.8"}))
	assert.Empty(t, idx.of(Node{Name: "win-d"}))
}
