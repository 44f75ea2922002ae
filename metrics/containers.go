package metrics

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/wmcon/wmcon/model"
)

// windows_exporter's container collector (enabled by WMCO): one series per container, labelled
// container_id ("containerd://<id>"); newer exporters add namespace, pod and container. The network
// series are the container's HNS endpoint's, labelled interface, so the containers of a pod (which share
// the endpoint) report the same bytes.
const (
	seriesContainerCPU    = "windows_container_cpu_usage_seconds_total"
	seriesContainerMemory = "windows_container_memory_usage_private_working_set_bytes"
	seriesContainerRx     = "windows_container_network_receive_bytes_total"
	seriesContainerTx     = "windows_container_network_transmit_bytes_total"
)

// ContainerFigures is what the exporter says of one container: counters and the working set.
type ContainerFigures struct {
	CPUSeconds  *float64
	MemoryBytes *float64
	Rx, Tx      map[string]float64 // bytes by interface (the HNS endpoint)
}

// ParseContainers reads the container collector's series out of windows_exporter's /metrics text, by
// container ID without its runtime prefix ("containerd://"). A body without them gives none.
func ParseContainers(r io.Reader) (map[string]*ContainerFigures, error) {
	figs, _, err := parseContainerScrape(r)
	return figs, err
}

// parseContainerScrape is ParseContainers and the host's clock at the moment of the read (hostClock).
func parseContainerScrape(r io.Reader) (map[string]*ContainerFigures, *float64, error) {
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, nil, fmt.Errorf("parse windows_exporter metrics: %w", err)
	}
	return containerFigures(fams), hostClock(fams), nil
}

// hostClock is the seconds each of the host's processors has counted in all its modes
// (windows_cpu_time_total over the cores): a clock the exporter reads in the same moment as the
// containers' CPU counters. Rates between two reads divide by its difference rather than by the reader's
// own clock, which also counts the scrape's way there and back (seconds, on a loaded machine or link).
// Nil when the cpu collector is off.
func hostClock(fams map[string]*dto.MetricFamily) *float64 {
	f := fams[seriesCPUTime]
	if f == nil || len(f.GetMetric()) == 0 {
		return nil
	}
	total, cores := 0.0, map[string]bool{}
	for _, m := range f.GetMetric() {
		total += value(m)
		cores[label(m, "core")] = true
	}
	return ptr(total / float64(len(cores)))
}

func containerFigures(fams map[string]*dto.MetricFamily) map[string]*ContainerFigures {
	out := map[string]*ContainerFigures{}
	of := func(m *dto.Metric) *ContainerFigures {
		id := BareContainerID(label(m, "container_id"))
		if id == "" {
			return nil
		}
		c := out[id]
		if c == nil {
			c = &ContainerFigures{Rx: map[string]float64{}, Tx: map[string]float64{}}
			out[id] = c
		}
		return c
	}
	for _, m := range fams[seriesContainerCPU].GetMetric() {
		if c := of(m); c != nil {
			c.CPUSeconds = ptr(value(m))
		}
	}
	for _, m := range fams[seriesContainerMemory].GetMetric() {
		if c := of(m); c != nil {
			c.MemoryBytes = ptr(value(m))
		}
	}
	for _, m := range fams[seriesContainerRx].GetMetric() {
		if c := of(m); c != nil {
			c.Rx[label(m, "interface")] += value(m)
		}
	}
	for _, m := range fams[seriesContainerTx].GetMetric() {
		if c := of(m); c != nil {
			c.Tx[label(m, "interface")] += value(m)
		}
	}
	return out
}

// BareContainerID is a container ID without its runtime's prefix: "containerd://abc" and "abc" are the
// same container (pods' statuses carry the prefix, some exporters not).
func BareContainerID(id string) string {
	if _, rest, ok := strings.Cut(id, "://"); ok {
		return rest
	}
	return id
}

// containerSamples joins a node's container figures to its pods through the pods' container IDs; a pod
// none of whose containers the exporter reports (not started, or stopped) is left out.
func containerSamples(figs map[string]*ContainerFigures, pods []model.WorkloadPod, taken time.Time, clock *float64) []PodSample {
	var out []PodSample
	for _, p := range pods {
		s := PodSample{Pod: p, Taken: taken, HostClock: clock}
		rx, tx := map[string]float64{}, map[string]float64{}
		for _, c := range p.Containers {
			f := figs[BareContainerID(c.ID)]
			if c.ID == "" || f == nil {
				continue
			}
			s.Containers = append(s.Containers, ContainerSample{Name: c.Name, CPUSeconds: f.CPUSeconds, MemoryBytes: f.MemoryBytes})
			// The containers of a pod share its endpoint: count each interface once.
			for i, v := range f.Rx {
				rx[i] = max(rx[i], v)
			}
			for i, v := range f.Tx {
				tx[i] = max(tx[i], v)
			}
		}
		if len(s.Containers) == 0 {
			continue
		}
		for i, v := range rx {
			s.HasNet, s.RxBytes, s.TxBytes = true, s.RxBytes+v, s.TxBytes+tx[i]
		}
		out = append(out, s)
	}
	return out
}

// ExporterPodSource reads each node's windows_exporter (its container collector) and joins the
// containers to the pods; CPU and network are rates of counters, so a first read has none.
type ExporterPodSource struct {
	Via      string // how the exporter is reached, e.g. "SSH to each host"
	Scrape   Scrape
	Tracker  *PodTracker
	Now      func() time.Time
	Parallel int
}

func (s *ExporterPodSource) Name() string {
	return "windows_exporter's container collector via " + s.Via
}

// Refresh scrapes every node the pods run on once.
func (s *ExporterPodSource) Refresh(ctx context.Context, pods []model.WorkloadPod) model.PodMetricsReport {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	nodes, byNode := podNodes(pods)
	found := make([][]model.PodMetrics, len(nodes))
	errs := make([]error, len(nodes))
	forEachNode(nodes, s.Parallel, func(i int, node string) {
		text, err := s.Scrape(ctx, Node{Name: node})
		// The exporter reads its counters when the request reaches it, after any dial and handshake (the
		// first scrape of a host opens its SSH connection): the time the answer arrived is much closer to
		// that than the time the request began, so two scrapes' CPU rate is not diluted by the first's dial.
		taken := now()
		if err == nil {
			var figs map[string]*ContainerFigures
			var clock *float64
			if figs, clock, err = parseContainerScrape(bytes.NewReader(text)); err == nil {
				for _, smp := range containerSamples(figs, byNode[node], taken, clock) {
					found[i] = append(found[i], s.Tracker.Observe(smp))
				}
			}
		}
		errs[i] = err
	})
	s.Tracker.Forget(now().Add(-trackerTTL))
	r := model.PodMetricsReport{Source: s.Name()}
	for i, n := range nodes {
		r.Pods = append(r.Pods, found[i]...)
		if errs[i] != nil {
			r.Errors = append(r.Errors, model.NodeError{Node: n, Error: errs[i].Error()})
		}
	}
	sortPods(r.Pods)
	return r
}
