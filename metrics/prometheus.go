package metrics

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	wmodel "github.com/wmcon/wmcon/model"
)

// PrometheusSource asks a Prometheus (or Thanos querier) that scrapes the nodes' windows_exporter, with
// PromQL. A series belongs to a node when its instance label is the node's name (how OpenShift's
// ServiceMonitor for WMCO's windows-exporter endpoints labels it) or the node's address.
type PrometheusSource struct {
	URL     string
	Label   string // how Name calls it; default "Prometheus at URL"
	API     promv1.API
	Window  time.Duration // rate window; default 2m (several scrapes at OpenShift's 30 s interval)
	History time.Duration // sparklines' span; default 15m (the console asks for an hour)
	Step    time.Duration // sparkline resolution; default 30s
	Now     func() time.Time
}

// NewPrometheusSource talks to the Prometheus HTTP API at url.
func NewPrometheusSource(url string) (*PrometheusSource, error) {
	c, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", url, err)
	}
	return &PrometheusSource{URL: url, API: promv1.NewAPI(c)}, nil
}

// NewPrometheusSourceVia talks to the Prometheus HTTP API at url through rt (the API server's service
// proxy, with the user's credentials), named label for the user.
func NewPrometheusSourceVia(url, label string, rt http.RoundTripper) (*PrometheusSource, error) {
	c, err := api.NewClient(api.Config{Address: url, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", label, err)
	}
	return &PrometheusSource{URL: url, Label: label, API: promv1.NewAPI(c)}, nil
}

func (p *PrometheusSource) Name() string {
	if p.Label != "" {
		return p.Label + " (PromQL)"
	}
	return "Prometheus at " + p.URL + " (PromQL)"
}
func (p *PrometheusSource) NeedsTwoReads() bool { return false }

func (p *PrometheusSource) defaults() (window, history, step time.Duration, now time.Time) {
	window, history, step = p.Window, p.History, p.Step
	if window <= 0 {
		window = 2 * time.Minute
	}
	if history <= 0 {
		history = 15 * time.Minute
	}
	if step <= 0 {
		step = 30 * time.Second
	}
	now = time.Now()
	if p.Now != nil {
		now = p.Now()
	}
	return window, history, step, now
}

// Linux nodes' node_exporter series, so a Linux node's figures stand next to the Windows nodes': the
// filesystems that hold data (not tmpfs, overlays or images), named by mount point, and every NIC but
// the loopback and virtual ones.
const (
	linuxFS  = `{fstype!~"tmpfs|overlay|squashfs|nsfs|ramfs",mountpoint!~"/run.*|/var/lib/containers/.*"}`
	linuxNIC = `{device!~"lo|veth.*|br-.*|ovs-.*|genev_sys.*|vxlan.*|docker.*"}`
)

// promQueries are the instant queries of a refresh over the rate window w: each figure from
// windows_exporter's series, or node_exporter's for Linux nodes, by instance.
func promQueries(w string) map[string]string {
	return map[string]string{
		"cpu": `100 * (1 - avg by (instance) (rate(windows_cpu_time_total{mode="idle"}[` + w + `])))` +
			` or 100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[` + w + `])))`,
		"total": `windows_memory_physical_total_bytes or windows_cs_physical_memory_bytes or node_memory_MemTotal_bytes`,
		"avail": `windows_memory_available_bytes or windows_os_physical_memory_free_bytes or node_memory_MemAvailable_bytes`,
		"free":  `windows_logical_disk_free_bytes or label_replace(node_filesystem_avail_bytes` + linuxFS + `, "volume", "$1", "mountpoint", "(.*)")`,
		"size":  `windows_logical_disk_size_bytes or label_replace(node_filesystem_size_bytes` + linuxFS + `, "volume", "$1", "mountpoint", "(.*)")`,
		"rx": `sum by (instance) (rate(windows_net_bytes_received_total[` + w + `]))` +
			` or sum by (instance) (rate(node_network_receive_bytes_total` + linuxNIC + `[` + w + `]))`,
		"tx": `sum by (instance) (rate(windows_net_bytes_sent_total[` + w + `]))` +
			` or sum by (instance) (rate(node_network_transmit_bytes_total` + linuxNIC + `[` + w + `]))`,
		"pods": podsRunning,
	}
}

// podsRunning counts each node's running pods from kube-state-metrics (kube_pod_info names the node),
// labelled with the node's name as instance like the exporters' series.
const podsRunning = `label_replace(count by (node) ((kube_pod_status_phase{phase="Running"} == 1)` +
	` * on (namespace, pod) group_left (node) kube_pod_info{node!=""}), "instance", "$1", "node", "(.*)")`

// historyQueries are the range queries of the sparklines.
func historyQueries(q map[string]string) map[string]string {
	return map[string]string{
		"cpu": q["cpu"],
		"mem": `100 * (1 - (windows_memory_available_bytes or windows_os_physical_memory_free_bytes) / on(instance) (windows_memory_physical_total_bytes or windows_cs_physical_memory_bytes))` +
			` or 100 * (1 - node_memory_MemAvailable_bytes / on(instance) node_memory_MemTotal_bytes)`,
		// The fullest volume's free share, as Fullest picks it from the instant figures.
		"disk": `100 * min by (instance) (windows_logical_disk_free_bytes{volume=~"[A-Za-z]:"} / windows_logical_disk_size_bytes{volume=~"[A-Za-z]:"})` +
			` or 100 * min by (instance) (node_filesystem_avail_bytes` + linuxFS + ` / node_filesystem_size_bytes` + linuxFS + `)`,
		"rx":   q["rx"],
		"tx":   q["tx"],
		"pods": podsRunning,
	}
}

// Refresh runs the queries; a query that fails fails every node with its error (the server is the
// problem, not the node).
func (p *PrometheusSource) Refresh(ctx context.Context, nodes []Node) wmodel.MetricsReport {
	window, history, step, now := p.defaults()
	r := wmodel.MetricsReport{Source: p.Name()}
	w := model.Duration(window).String()
	queries := promQueries(w)
	results := map[string]model.Vector{}
	for name, q := range queries {
		v, err := p.instant(ctx, q, now)
		if err != nil {
			for _, n := range nodes {
				r.Errors = append(r.Errors, wmodel.NodeError{Node: n.Name, Error: err.Error()})
			}
			return r
		}
		results[name] = v
	}
	// The sparklines are a nicety: without them the current figures still stand.
	rng := promv1.Range{Start: now.Add(-history), End: now, Step: step}
	hist := map[string]model.Matrix{}
	for name, q := range historyQueries(queries) {
		if v, _, err := p.API.QueryRange(ctx, q, rng); err == nil {
			hist[name], _ = v.(model.Matrix)
		}
	}
	idx := indexAnswers(results, hist)
	for _, n := range nodes {
		m, ok := p.nodeFigures(n, now, results, hist, idx)
		m.HistoryStep = step
		if !ok {
			r.Errors = append(r.Errors, wmodel.NodeError{Node: n.Name, Error: "Prometheus has no windows_exporter or node_exporter series for this node (instance " + n.Name + " or " + n.IP + ")"})
			continue
		}
		r.Nodes = append(r.Nodes, m)
	}
	return r
}

func (p *PrometheusSource) instant(ctx context.Context, q string, at time.Time) (model.Vector, error) {
	v, _, err := p.API.Query(ctx, q, at)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", p.where(), err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %s: %s answered %s, not a vector", p.where(), q, v.Type())
	}
	return vec, nil
}

func (p *PrometheusSource) where() string {
	if p.Label != "" {
		return p.Label
	}
	return "Prometheus at " + p.URL
}

// instanceIndex finds a node's series in one answer by their instance label: the node's name (how
// OpenShift's ServiceMonitor labels WMCO's endpoints) or its address (host:port or host). Indexing each
// answer once keeps a refresh linear in the fleet's size rather than nodes × series.
type instanceIndex map[string][]int

func newInstanceIndex(n int, metric func(i int) model.Metric) instanceIndex {
	idx := make(instanceIndex, n)
	for i := range n {
		inst := string(metric(i)["instance"])
		idx[inst] = append(idx[inst], i)
		if host, _, err := net.SplitHostPort(inst); err == nil {
			idx["addr:"+host] = append(idx["addr:"+host], i)
		} else {
			idx["addr:"+inst] = append(idx["addr:"+inst], i)
		}
	}
	return idx
}

// of is the positions of node n's series: those named after it, else those at its address.
func (idx instanceIndex) of(n Node) []int {
	if s, ok := idx[n.Name]; ok {
		return s
	}
	if n.IP == "" {
		return nil
	}
	return idx["addr:"+n.IP]
}

// answerIndex indexes every answer of a refresh.
type answerIndex struct {
	vec map[string]instanceIndex
	mat map[string]instanceIndex
}

func indexAnswers(res map[string]model.Vector, hist map[string]model.Matrix) answerIndex {
	a := answerIndex{vec: map[string]instanceIndex{}, mat: map[string]instanceIndex{}}
	for name, v := range res {
		a.vec[name] = newInstanceIndex(len(v), func(i int) model.Metric { return v[i].Metric })
	}
	for name, m := range hist {
		a.mat[name] = newInstanceIndex(len(m), func(i int) model.Metric { return m[i].Metric })
	}
	return a
}

func (p *PrometheusSource) nodeFigures(n Node, now time.Time, res map[string]model.Vector, hist map[string]model.Matrix, idx answerIndex) (wmodel.NodeMetrics, bool) {
	m := wmodel.NodeMetrics{Node: n.Name, Taken: now}
	found := false
	one := func(name string) (float64, bool) {
		at := idx.vec[name].of(n)
		if len(at) == 0 {
			return 0, false
		}
		found = true
		return float64(res[name][at[0]].Value), true
	}
	if v, ok := one("cpu"); ok {
		m.CPUPercent = ptr(clampPercent(v))
	}
	total, okT := one("total")
	avail, okA := one("avail")
	if okT && okA && total > 0 {
		m.MemoryUsedPercent, m.MemoryTotalBytes = ptr(clampPercent(100*(1-avail/total))), ptr(total)
	}
	var s Sample
	size := map[string]float64{}
	for _, i := range idx.vec["size"].of(n) {
		x := res["size"][i]
		size[string(x.Metric["volume"])] = float64(x.Value)
	}
	for _, i := range idx.vec["free"].of(n) {
		x := res["free"][i]
		found = true
		vol := string(x.Metric["volume"])
		if sz, ok := size[vol]; ok {
			s.Volumes = append(s.Volumes, Volume{Name: vol, SizeBytes: sz, FreeBytes: float64(x.Value)})
		}
	}
	if v, ok := s.Fullest(); ok {
		m.Volume, m.VolumeFreeBytes, m.VolumeFreePercent = v.Name, ptr(v.FreeBytes), ptr(clampPercent(100*v.FreeBytes/v.SizeBytes))
	}
	rx, okR := one("rx")
	tx, okX := one("tx")
	if okR && okX {
		m.NetRxBytesPerSec, m.NetTxBytesPerSec = ptr(rx), ptr(tx)
	}
	m.CPUHistory = seriesOf(hist["cpu"], idx.mat["cpu"].of(n), clampPercent)
	m.MemoryHistory = seriesOf(hist["mem"], idx.mat["mem"].of(n), clampPercent)
	m.VolumeFreeHistory = seriesOf(hist["disk"], idx.mat["disk"].of(n), clampPercent)
	m.NetRxHistory = seriesOf(hist["rx"], idx.mat["rx"].of(n), nil)
	m.NetTxHistory = seriesOf(hist["tx"], idx.mat["tx"].of(n), nil)
	// Pods are the cluster's count, not the node's exporter: they do not make a node found.
	if at := idx.vec["pods"].of(n); len(at) > 0 {
		m.PodsRunning = ptr(float64(res["pods"][at[0]].Value))
	}
	m.PodsHistory = seriesOf(hist["pods"], idx.mat["pods"].of(n), nil)
	return m, found
}

// seriesOf is the values of the first of a node's series (at positions at) in a range query's answer,
// oldest first, through clamp.
func seriesOf(mat model.Matrix, at []int, clamp func(float64) float64) []float64 {
	if len(at) == 0 {
		return nil
	}
	series := mat[at[0]]
	out := make([]float64, 0, len(series.Values))
	for _, pt := range series.Values {
		v := float64(pt.Value)
		if clamp != nil {
			v = clamp(v)
		}
		out = append(out, v)
	}
	return out
}
