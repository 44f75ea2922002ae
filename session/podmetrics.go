package session

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/model"
)

// PodMetricsOptions choose where pod metrics come from and which pods `wmcon top pods` shows.
type PodMetricsOptions struct {
	PrometheusURL string        // --prometheus: ask this Prometheus (or Thanos querier) with PromQL
	Interval      time.Duration // between two reads when the source counts CPU seconds itself; default 2s
	Node          string        // --node: only this Windows node's pods ("" every Windows node's)
	Namespace     string        // -n: only this namespace's pods ("" every namespace's)
	History       int           // points of history kept per pod when wmcon computes the rates; default 30
	Span          time.Duration // the history a Prometheus is asked for; 0 asks for none
	Now           func() time.Time
	Refresh       time.Duration // the console's time between two refreshes (as MetricsOptions.Refresh)
}

// The sources' texts, for the user.
const (
	summaryVia   = "the API server's node proxy (nodes/NODE/proxy/stats/summary)"
	summaryFirst = "no --prometheus URL was given; the kubelets' summary API comes first (it needs only get nodes/proxy, no Prometheus)"
)

// PodMetricsSource picks the source of pod metrics and says why: --prometheus when given; the backend's
// own exporters (the demo's simulated hosts, in-process); otherwise the kubelets' summary API through the
// API server's node proxy, and where that is forbidden, the cluster's thanos-querier when it answers, else
// each node's windows_exporter over SSH.
func (s *Session) PodMetricsSource(opts PodMetricsOptions) (metrics.PodSource, string, error) {
	if opts.PrometheusURL != "" {
		src, err := metrics.NewPrometheusSource(opts.PrometheusURL)
		if err != nil {
			return nil, "", fmt.Errorf("--prometheus %q: %w", opts.PrometheusURL, err)
		}
		return &metrics.PrometheusPodSource{Prom: src, History: opts.Span}, "--prometheus was given", nil
	}
	tracker := metrics.NewPodTracker(cmp.Or(opts.History, 30))
	if own := s.backend.Exporters(); own != nil {
		return &metrics.ExporterPodSource{Via: own.Via, Scrape: own.Scrape, Tracker: tracker, Now: opts.Now},
			own.Why + ", nor an API server's node proxy to a kubelet", nil
	}
	summary := &metrics.SummarySource{Via: summaryVia, Tracker: tracker, Now: opts.Now,
		Read: func(ctx context.Context, node string) ([]byte, error) {
			return cluster.KubeletSummary(ctx, s.Clients.Kube, node)
		}}
	next := func(context.Context) (metrics.PodSource, string) {
		src, why := s.thanosSource(MetricsOptions{Span: opts.Span})
		if prom, ok := src.(*metrics.PrometheusSource); ok {
			return &metrics.PrometheusPodSource{Prom: prom, History: opts.Span}, "the cluster's thanos-querier answers"
		}
		return &metrics.ExporterPodSource{Via: "SSH to each host (127.0.0.1:9182 on the host)", Tracker: tracker, Now: opts.Now,
			Scrape: func(ctx context.Context, n metrics.Node) ([]byte, error) { return s.scrapeOverSSH(ctx, n.Name) },
		}, why + ", so each host's windows_exporter is read over SSH"
	}
	return &metrics.PodFallback{Primary: summary, Next: next}, summaryFirst, nil
}

// PodMetrics reads the current figures of the running pods on Windows nodes (opts.Node's only, when
// given), in opts.Namespace or every namespace: what `wmcon top pods` prints. A --node that does not
// exist or is not a Windows node is an error.
func (s *Session) PodMetrics(ctx context.Context, opts PodMetricsOptions) (model.PodMetricsReport, error) {
	nodes, err := s.windowsNodes(ctx, opts.Node)
	if err != nil {
		return model.PodMetricsReport{}, err
	}
	pods, err := cluster.WorkloadPods(ctx, s.Clients.Kube, opts.Namespace, nodes)
	if err != nil {
		return model.PodMetricsReport{}, err
	}
	src, why, err := s.PodMetricsSource(opts)
	if err != nil {
		return model.PodMetricsReport{}, err
	}
	r, err := metrics.CurrentPods(ctx, src, pods, cmp.Or(opts.Interval, 2*time.Second))
	if r.Source == "" {
		r.Source = src.Name()
	}
	r.Why, r.Asked = joinWhy(why, r.Why), len(pods)
	return r, err
}

// windowsNodes are the snapshot's Windows nodes, or the one named (which must be one).
func (s *Session) windowsNodes(ctx context.Context, name string) (map[string]bool, error) {
	if name != "" {
		n, err := s.Node(ctx, name)
		if err != nil {
			return nil, err
		}
		if !n.Windows {
			return nil, fmt.Errorf("node %s is not a Windows node: wmcon reads the pods of Windows nodes (oc adm top pods shows the others)", name)
		}
		return map[string]bool{name: true}, nil
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range snap.Nodes {
		if n.Windows {
			out[n.Name] = true
		}
	}
	return out, nil
}

// WorkloadPods lists the running pods of a Windows node, as the pod metrics need them (the console's
// node details ask PodMetricsFeed.Refresh about them).
func (s *Session) WorkloadPods(ctx context.Context, node string) ([]model.WorkloadPod, error) {
	return cluster.WorkloadPods(ctx, s.Clients.Kube, "", map[string]bool{node: true})
}

func joinWhy(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// PodMetricsFeed is the console's live pod metrics: one source for the session's life, so counters give
// rates from one refresh to the next and each pod's sparklines fill up. Which pods it is asked about, and
// how often, is the console's choice.
type PodMetricsFeed struct {
	src metrics.PodSource
	why string
	// Interval is the time between refreshes the source is meant for: 30 s (the kubelet's and
	// Prometheus's own resolution), 3 s on the demo's in-process exporters.
	Interval time.Duration

	// Warmup is the least time between two reads of a node whose last read had no CPU rate for some pod
	// (a source that counts CPU seconds itself needs a second read), so CPU shows soon after a view opens.
	Warmup time.Duration

	s   *Session
	now func() time.Time

	mu    sync.Mutex
	last  map[string]model.PodMetricsReport // the latest refresh of each node's pods
	reads map[string]*nodePodsRead          // the latest read of each node (Node)
}

// nodePodsRead is one read of a node's pods by PodMetricsFeed.Node: when it started and, once done is
// closed, what it found.
type nodePodsRead struct {
	started time.Time
	done    chan struct{}
	pods    model.NodePods
	err     error
}

// PodMetricsFeed picks the console's pod metrics source (see PodMetricsSource), with an hour of
// history: from Prometheus's range queries, or kept by wmcon at one point per refresh.
func (s *Session) PodMetricsFeed(opts PodMetricsOptions) (*PodMetricsFeed, error) {
	f := &PodMetricsFeed{Interval: 30 * time.Second, Warmup: 2 * time.Second, s: s, now: opts.Now,
		last: map[string]model.PodMetricsReport{}, reads: map[string]*nodePodsRead{}}
	if f.now == nil {
		f.now = time.Now
	}
	if s.backend.Exporters() != nil {
		f.Interval = 3 * time.Second
	}
	if opts.Refresh > 0 {
		f.Interval = opts.Refresh
	}
	opts.History, opts.Span = int(consoleHistory/f.Interval), consoleHistory
	src, why, err := s.PodMetricsSource(opts)
	if err != nil {
		return nil, err
	}
	f.src, f.why = src, why
	s.podFeed.Store(f)
	return f, nil
}

// Node reads the figures of a node's running pods and names the pods behind its trouble: what the
// console's node details, pod details and health view show, and what triage takes in the console. Every
// caller shares the reads: a node is read at most once per Interval (once more after Warmup when the
// first read had no CPU rate yet), a caller within that time gets the last read's answer, and a caller
// while a read runs waits for it.
func (f *PodMetricsFeed) Node(ctx context.Context, node string) (model.NodePods, error) {
	for {
		f.mu.Lock()
		r := f.reads[node]
		if r != nil {
			select {
			case <-r.done:
			default: // a read is under way: wait for it rather than ask again
				f.mu.Unlock()
				select {
				case <-r.done:
					continue
				case <-ctx.Done():
					return model.NodePods{}, fmt.Errorf("read the pods of %s: %w", node, ctx.Err())
				}
			}
			if f.now().Sub(r.started) < f.gapAfter(r) {
				f.mu.Unlock()
				return r.pods, r.err
			}
		}
		r = &nodePodsRead{started: f.now(), done: make(chan struct{})}
		f.reads[node] = r
		f.mu.Unlock()
		r.pods, r.err = f.read(ctx, node)
		close(r.done)
		return r.pods, r.err
	}
}

// gapAfter is the least time before a node read by r is read again.
func (f *PodMetricsFeed) gapAfter(r *nodePodsRead) time.Duration {
	if r.err == nil && missingCPU(r.pods.Report) {
		return min(f.Warmup, f.Interval)
	}
	return f.Interval
}

func missingCPU(r model.PodMetricsReport) bool {
	for _, p := range r.Pods {
		if p.CPUCores == nil {
			return true
		}
	}
	return false
}

// read lists the node's running pods, refreshes their figures and finds the pressures.
func (f *PodMetricsFeed) read(ctx context.Context, node string) (model.NodePods, error) {
	info, err := f.s.Node(ctx, node)
	if err != nil {
		return model.NodePods{}, err
	}
	pods, err := f.s.WorkloadPods(ctx, node)
	if err != nil {
		return model.NodePods{}, fmt.Errorf("list the pods of %s: %w", node, err)
	}
	r := f.Refresh(ctx, pods)
	capacity := metrics.NodeCapacityOf(info.Capacity)
	return model.NodePods{Report: r, Capacity: capacity,
		Pressures: model.PodPressures(capacity, f.s.consoleFigures(node), podsOn(node, r.Pods))}, nil
}

// Refresh reads the figures of pods (a node's, as the node details list them; or any set).
func (f *PodMetricsFeed) Refresh(ctx context.Context, pods []model.WorkloadPod) model.PodMetricsReport {
	r := f.src.Refresh(ctx, pods)
	r.Why, r.Asked = joinWhy(f.why, r.Why), len(pods)
	byNode := map[string]model.PodMetricsReport{}
	for _, p := range r.Pods {
		n := byNode[p.Node]
		n.Pods = append(n.Pods, p)
		byNode[p.Node] = n
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for node, n := range byNode {
		n.Source, n.Why = r.Source, r.Why
		f.last[node] = n
	}
	return r
}

// Latest is the last refresh's figures of a node's pods; false when none was read.
func (f *PodMetricsFeed) Latest(node string) (model.PodMetricsReport, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.last[node]
	return r, ok
}

// PodPressures names the pods behind a node's trouble (model.PodPressures): the node's capacity from the
// snapshot, its figures from the console's node metrics when they are read (nil otherwise: nothing is
// severe), and pods' figures from r.
func (s *Session) PodPressures(ctx context.Context, node string, r model.PodMetricsReport) ([]model.PodPressure, error) {
	info, err := s.Node(ctx, node)
	if err != nil {
		return nil, err
	}
	return model.PodPressures(metrics.NodeCapacityOf(info.Capacity), s.consoleFigures(node), podsOn(node, r.Pods)), nil
}

// consoleFigures is the node's latest figures from the console's node metrics; nil when it reads none.
func (s *Session) consoleFigures(node string) *model.NodeMetrics {
	if feed := s.feed.Load(); feed != nil {
		if nr, ok := feed.latest(node); ok {
			return &nr.Nodes[0]
		}
	}
	return nil
}

func podsOn(node string, all []model.PodMetrics) []model.PodMetrics {
	var pods []model.PodMetrics
	for _, p := range all {
		if p.Node == node {
			pods = append(pods, p)
		}
	}
	return pods
}

// triagePods gives triage the figures of a node's pods and the node's capacity: the console's (shared
// with its views, see PodMetricsFeed.Node) while it reads them; otherwise read now, as wmcon top pods
// --node does.
func (s *Session) triagePods(ctx context.Context, node string) (model.PodMetricsReport, model.NodeCapacity, error) {
	if f := s.podFeed.Load(); f != nil {
		np, err := f.Node(ctx, node)
		return np.Report, np.Capacity, err
	}
	info, err := s.Node(ctx, node)
	if err != nil {
		return model.PodMetricsReport{}, model.NodeCapacity{}, err
	}
	r, err := s.PodMetrics(ctx, PodMetricsOptions{Node: node})
	return r, metrics.NodeCapacityOf(info.Capacity), err
}
