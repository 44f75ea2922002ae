// Package metrics turns windows_exporter's series into per-node figures (CPU %, memory used %, the fullest
// volume's free space, network throughput) and keeps a short history of them for sparklines. It reads
// the exposition format with the Prometheus libraries; where the text comes from (the API server's node
// proxy, a Prometheus server) is its callers' business, so it imports no Kubernetes client.
package metrics

import (
	"fmt"
	"io"
	"regexp"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is what one scrape of a node's windows_exporter says, reduced to what wmcon shows. Counters
// stay counters: a rate needs two samples.
type Sample struct {
	Taken time.Time

	HasCPU   bool
	CPUIdle  float64 // seconds, summed over cores
	CPUTotal float64 // seconds in every mode, summed over cores
	// HostClock is the host's own clock at the read (hostClock); rates use it when both reads have it.
	HostClock *float64

	HasMemory    bool
	MemTotal     float64
	MemAvailable float64

	Volumes []Volume

	HasNet  bool
	RxBytes float64 // summed over NICs
	TxBytes float64

	// Pods is how many pods run on the node, counted from the cluster (windows_exporter does not count
	// pods); nil when not counted.
	Pods *float64
}

// Volume is one logical disk.
type Volume struct {
	Name      string
	SizeBytes float64
	FreeBytes float64
}

// Series names, current and older. windows_exporter moved physical memory from the os and cs collectors
// to the memory collector; nodes of different ages expose one or the other.
const (
	seriesCPUTime      = "windows_cpu_time_total"
	seriesMemTotal     = "windows_memory_physical_total_bytes"
	seriesMemTotalCS   = "windows_cs_physical_memory_bytes"
	seriesMemAvailable = "windows_memory_available_bytes"
	seriesMemFreeOS    = "windows_os_physical_memory_free_bytes"
	seriesDiskFree     = "windows_logical_disk_free_bytes"
	seriesDiskSize     = "windows_logical_disk_size_bytes"
	seriesNetRx        = "windows_net_bytes_received_total"
	seriesNetTx        = "windows_net_bytes_sent_total"
)

// ParseExporter reads windows_exporter's /metrics text. A body that is not the exposition format is an
// error; one without some of the series leaves those figures unknown.
func ParseExporter(r io.Reader, taken time.Time) (Sample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Sample{}, fmt.Errorf("parse windows_exporter metrics: %w", err)
	}
	s := Sample{Taken: taken}
	if f := fams[seriesCPUTime]; f != nil {
		for _, m := range f.GetMetric() {
			v := value(m)
			s.CPUTotal += v
			if label(m, "mode") == "idle" {
				s.CPUIdle += v
			}
		}
		s.HasCPU = len(f.GetMetric()) > 0
		s.HostClock = hostClock(fams)
	}
	total, okTotal := first(fams, seriesMemTotal, seriesMemTotalCS)
	avail, okAvail := first(fams, seriesMemAvailable, seriesMemFreeOS)
	if okTotal && okAvail && total > 0 {
		s.HasMemory, s.MemTotal, s.MemAvailable = true, total, avail
	}
	s.Volumes = volumes(fams)
	rx, okRx := sum(fams[seriesNetRx])
	tx, okTx := sum(fams[seriesNetTx])
	if okRx && okTx {
		s.HasNet, s.RxBytes, s.TxBytes = true, rx, tx
	}
	return s, nil
}

func volumes(fams map[string]*dto.MetricFamily) []Volume {
	size := map[string]float64{}
	for _, m := range fams[seriesDiskSize].GetMetric() {
		size[label(m, "volume")] = value(m)
	}
	var out []Volume
	for _, m := range fams[seriesDiskFree].GetMetric() {
		name := label(m, "volume")
		if sz, ok := size[name]; ok {
			out = append(out, Volume{Name: name, SizeBytes: sz, FreeBytes: value(m)})
		}
	}
	return out
}

// driveLetter matches the volumes an operator can clean: a Windows drive ("C:"; partitions without a
// letter, "HarddiskVolume1" the recovery partition, are full by design) or a Linux mount point ("/",
// "/var", from node_exporter).
var driveLetter = regexp.MustCompile(`^([A-Za-z]:|/.*)$`)

// Fullest is the lettered volume with the smallest free fraction.
func (s Sample) Fullest() (Volume, bool) {
	var best Volume
	found := false
	for _, v := range s.Volumes {
		if !driveLetter.MatchString(v.Name) || v.SizeBytes <= 0 {
			continue
		}
		if !found || v.FreeBytes/v.SizeBytes < best.FreeBytes/best.SizeBytes {
			best, found = v, true
		}
	}
	return best, found
}

func first(fams map[string]*dto.MetricFamily, names ...string) (float64, bool) {
	for _, n := range names {
		if f := fams[n]; f != nil && len(f.GetMetric()) > 0 {
			return value(f.GetMetric()[0]), true
		}
	}
	return 0, false
}

func sum(f *dto.MetricFamily) (float64, bool) {
	if f == nil || len(f.GetMetric()) == 0 {
		return 0, false
	}
	var total float64
	for _, m := range f.GetMetric() {
		total += value(m)
	}
	return total, true
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
