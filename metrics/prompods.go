package metrics

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	pmodel "github.com/prometheus/common/model"

	"github.com/wmcon/wmcon/model"
)

// PrometheusPodSource asks a Prometheus (or Thanos querier) that scrapes the nodes' windows_exporter for
// its container collector's series, and joins them to the pods through the pods' container IDs. CPU and
// network are PromQL rates, so one refresh gives them; History > 0 also asks for that span of history
// (range queries). A refresh is four instant queries, and two range queries with history, whatever the
// number of nodes.
type PrometheusPodSource struct {
	Prom    *PrometheusSource // the server, its rate window and step
	History time.Duration     // the sparklines' span; 0 asks for none
}

func (s *PrometheusPodSource) Name() string {
	return strings.TrimSuffix(s.Prom.Name(), " (PromQL)") + " (PromQL, windows_container_*)"
}

// maxFilteredIDs bounds the container IDs named in a query: past it the query asks for every container
// series and the join leaves out the rest, rather than send a regular expression of a fleet's IDs.
const maxFilteredIDs = 300

// containerQueries are a refresh's instant queries over the rate window w, for the containers matched by sel.
func containerQueries(w, sel string) map[string]string {
	return map[string]string{
		"cpu": `rate(` + seriesContainerCPU + sel + `[` + w + `])`,
		"mem": seriesContainerMemory + sel,
		"rx":  `sum by (container_id) (rate(` + seriesContainerRx + sel + `[` + w + `]))`,
		"tx":  `sum by (container_id) (rate(` + seriesContainerTx + sel + `[` + w + `]))`,
	}
}

// Refresh runs the queries; one that fails fails every node with its error (the server is the problem).
func (s *PrometheusPodSource) Refresh(ctx context.Context, pods []model.WorkloadPod) model.PodMetricsReport {
	window, _, step, now := s.Prom.defaults()
	r := model.PodMetricsReport{Source: s.Name()}
	nodes, _ := podNodes(pods)
	sel := idSelector(pods)
	queries := containerQueries(pmodel.Duration(window).String(), sel)
	vecs := map[string]map[string]float64{}
	for name, q := range queries {
		v, err := s.Prom.instant(ctx, q, now)
		if err != nil {
			for _, n := range nodes {
				r.Errors = append(r.Errors, model.NodeError{Node: n, Error: err.Error()})
			}
			return r
		}
		vecs[name] = byContainer(v)
	}
	var hist map[string]map[string][]pmodel.SamplePair
	if s.History > 0 {
		hist = s.history(ctx, queries, promv1.Range{Start: now.Add(-s.History), End: now, Step: step})
	}
	for _, p := range pods {
		if m, ok := promPod(p, vecs, hist, now); ok {
			m.HistoryStep = step
			r.Pods = append(r.Pods, m)
		}
	}
	sortPods(r.Pods)
	return r
}

// history is the range queries of the containers' CPU and memory; the sparklines are a nicety, so a
// failed one leaves them out.
func (s *PrometheusPodSource) history(ctx context.Context, q map[string]string, rng promv1.Range) map[string]map[string][]pmodel.SamplePair {
	out := map[string]map[string][]pmodel.SamplePair{}
	for _, name := range []string{"cpu", "mem"} {
		v, _, err := s.Prom.API.QueryRange(ctx, q[name], rng)
		mat, ok := v.(pmodel.Matrix)
		if err != nil || !ok {
			continue
		}
		out[name] = map[string][]pmodel.SamplePair{}
		for _, series := range mat {
			if id := BareContainerID(string(series.Metric["container_id"])); id != "" {
				out[name][id] = series.Values
			}
		}
	}
	return out
}

// idSelector matches the pods' containers by ID (with or without the runtime's prefix), or every
// container series when there are too many to name.
func idSelector(pods []model.WorkloadPod) string {
	var ids []string
	for _, p := range pods {
		for _, c := range p.Containers {
			if id := BareContainerID(c.ID); id != "" {
				ids = append(ids, regexp.QuoteMeta(id))
			}
		}
	}
	if len(ids) == 0 || len(ids) > maxFilteredIDs {
		return ""
	}
	sort.Strings(ids)
	return `{container_id=~"(.*://)?(` + strings.Join(ids, "|") + `)"}`
}

// byContainer indexes an instant answer by bare container ID (summing series of one container, such as
// an exporter's two instances during a restart, would double it: the first is kept).
func byContainer(v pmodel.Vector) map[string]float64 {
	out := make(map[string]float64, len(v))
	for _, smp := range v {
		id := BareContainerID(string(smp.Metric["container_id"]))
		if _, dup := out[id]; id != "" && !dup {
			out[id] = float64(smp.Value)
		}
	}
	return out
}

// promPod is a pod's figures from the answers; false when Prometheus has none of its containers.
func promPod(p model.WorkloadPod, vecs map[string]map[string]float64, hist map[string]map[string][]pmodel.SamplePair, now time.Time) (model.PodMetrics, bool) {
	m := model.PodMetrics{Namespace: p.Namespace, Name: p.Name, Node: p.Node, Taken: now, Requests: p.Requests(), Limits: p.Limits()}
	cpuSum, memSum, all := 0.0, 0.0, true
	var rx, tx *float64
	var cpuHist, memHist [][]pmodel.SamplePair
	for _, c := range p.Containers {
		id := BareContainerID(c.ID)
		cpu, okC := vecs["cpu"][id]
		mem, okM := vecs["mem"][id]
		if id == "" || (!okC && !okM) {
			all = false
			continue
		}
		cm := model.ContainerMetrics{Name: c.Name, Requests: c.Requests, Limits: c.Limits}
		if okC {
			cm.CPUCores, cpuSum = ptr(cpu), cpuSum+cpu
		}
		if okM {
			cm.MemoryBytes, memSum = ptr(mem), memSum+mem
		}
		all = all && okC && okM
		cm.CPUHistory, cm.MemoryHistory = values(hist["cpu"][id]), values(hist["mem"][id])
		cpuHist, memHist = append(cpuHist, hist["cpu"][id]), append(memHist, hist["mem"][id])
		// The containers of a pod share its endpoint: its throughput is any one's.
		if v, ok := vecs["rx"][id]; ok {
			rx = ptr(max(v, deref(rx)))
		}
		if v, ok := vecs["tx"][id]; ok {
			tx = ptr(max(v, deref(tx)))
		}
		m.Containers = append(m.Containers, cm)
	}
	if len(m.Containers) == 0 {
		return m, false
	}
	if all {
		m.CPUCores, m.MemoryBytes = ptr(cpuSum), ptr(memSum)
	}
	m.NetRxBytesPerSec, m.NetTxBytesPerSec = rx, tx
	m.CPUHistory, m.MemoryHistory = sumByTime(cpuHist), sumByTime(memHist)
	return m, true
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

func values(pts []pmodel.SamplePair) []float64 {
	if len(pts) == 0 {
		return nil
	}
	out := make([]float64, len(pts))
	for i, pt := range pts {
		out[i] = float64(pt.Value)
	}
	return out
}

// sumByTime adds the containers' series point by point (a range query's points of one step share their
// timestamps), oldest first: a container that started later adds nothing before it did.
func sumByTime(series [][]pmodel.SamplePair) []float64 {
	sums := map[pmodel.Time]float64{}
	for _, s := range series {
		for _, pt := range s {
			sums[pt.Timestamp] += float64(pt.Value)
		}
	}
	if len(sums) == 0 {
		return nil
	}
	times := make([]pmodel.Time, 0, len(sums))
	for t := range sums {
		times = append(times, t)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	out := make([]float64, len(times))
	for i, t := range times {
		out[i] = sums[t]
	}
	return out
}
