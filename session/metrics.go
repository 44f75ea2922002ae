package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/model"
)

// ExporterPort is windows_exporter's port on every WMCO-configured node.
const ExporterPort = 9182

// MetricsOptions choose where node metrics come from.
type MetricsOptions struct {
	PrometheusURL string        // --prometheus: ask this Prometheus (or Thanos querier) with PromQL
	Interval      time.Duration // between the two reads of an exporter (its counters need two); default 2s
	History       int           // points of history kept per node when wmcon reads the exporters; default 30
	// Span is the history a Prometheus is asked for (default 15m; the console asks for consoleHistory).
	Span time.Duration
	// Now stamps each exporter read (default time.Now): the history's time step comes from it, so a test
	// can stand for minutes of reads.
	Now func() time.Time
	// Refresh is the console's time between two refreshes (the config file's metrics.interval); 0: 30s,
	// or 3s on a backend with exporters of its own.
	Refresh time.Duration
}

// MetricsSource picks the source of node metrics and says why it was picked: --prometheus when given;
// the backend's own exporters, read in-process (the demo's simulated hosts); the cluster's thanos-querier through the API server's
// service proxy when it answers; otherwise each node's windows_exporter through the API server's node
// proxy (no route to the nodes needed, only `get nodes/proxy`).
func (s *Session) MetricsSource(opts MetricsOptions) (metrics.Source, string, error) {
	if opts.PrometheusURL != "" {
		src, err := metrics.NewPrometheusSource(opts.PrometheusURL)
		if err != nil {
			return nil, "", fmt.Errorf("--prometheus %q: %w", opts.PrometheusURL, err)
		}
		src.History = opts.Span
		return src, "--prometheus was given", nil
	}
	tracker := metrics.NewTracker(cmp.Or(opts.History, 30))
	if own := s.backend.Exporters(); own != nil {
		return &metrics.ExporterSource{Via: own.Via, Tracker: tracker, Now: opts.Now, Scrape: own.Scrape, Pods: s.runningPods}, own.Why, nil
	}
	src, why := s.thanosSource(opts)
	if src != nil {
		return src, why, nil
	}
	return &metrics.ExporterSource{Via: fmt.Sprintf("the API server's node proxy (nodes/NODE:%d/proxy/metrics), or SSH "+
		"to the host's 127.0.0.1:%d where the node proxy is forbidden", ExporterPort, ExporterPort),
		Tracker: tracker, Now: opts.Now, Scrape: s.scrapeExporter(), Pods: s.runningPods}, "no --prometheus URL was given and " + why, nil
}

// runningPods counts the running pods of each node, from one list of the cluster's running pods (only
// their metadata and node are used); the exporter paths' pods-running line.
func (s *Session) runningPods(ctx context.Context) (map[string]int, error) {
	pods, err := s.Clients.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" { // the demo's fake ignores field selectors
			out[p.Spec.NodeName]++
		}
	}
	return out, nil
}

// scrapeExporter reads a node's windows_exporter through the API server's node proxy; once the node
// proxy is forbidden to this user (get nodes/proxy), over the host's SSH connection instead.
func (s *Session) scrapeExporter() metrics.Scrape {
	var forbidden atomic.Bool
	return func(ctx context.Context, n metrics.Node) ([]byte, error) {
		if !forbidden.Load() {
			body, err := cluster.ScrapeNodeExporter(ctx, s.Clients.Kube, n.Name, ExporterPort)
			if !apierrors.IsForbidden(err) {
				return body, err
			}
			forbidden.Store(true)
		}
		return s.scrapeOverSSH(ctx, n.Name)
	}
}

// hostDialer is a host that opens connections as the host sees them (remote.Client).
type hostDialer interface {
	DialHost(ctx context.Context, addr string) (net.Conn, error)
}

func (s *Session) scrapeOverSSH(ctx context.Context, node string) ([]byte, error) {
	info, err := s.Node(ctx, node)
	if err != nil {
		return nil, err
	}
	h, err := s.Hosts.Host(ctx, info)
	if err != nil {
		return nil, fmt.Errorf("the node proxy is forbidden, and SSH to the host: %w", err)
	}
	d, ok := h.(hostDialer)
	if !ok {
		return nil, errors.New("the node proxy is forbidden, and this host connection cannot forward to the exporter")
	}
	return metrics.ScrapeOver(ctx, d.DialHost, ExporterPort)
}

// thanosLabel names the cluster's querier as the source.
var thanosLabel = "the cluster's thanos-querier (" + cluster.ThanosNamespace + ", through the API server's service proxy)"

// thanosSource is the cluster's Thanos querier when it answers through the API server's service proxy;
// otherwise nil and why not (absent, forbidden, or its error), for the user.
func (s *Session) thanosSource(opts MetricsOptions) (metrics.Source, string) {
	ctx, cancel := context.WithTimeout(context.Background(), thanosProbeTimeout)
	defer cancel()
	url, rt, err := cluster.ThanosQuerier(ctx, s.Clients)
	switch {
	case errors.Is(err, cluster.ErrThanosAbsent):
		return nil, "the cluster has no " + cluster.ThanosNamespace + "/" + cluster.ThanosService + " (no OpenShift monitoring)"
	case errors.Is(err, cluster.ErrThanosForbidden):
		return nil, "the cluster's thanos-querier is forbidden to this user (get services/proxy in " + cluster.ThanosNamespace + ")"
	case err != nil:
		return nil, "the cluster's thanos-querier did not answer (" + err.Error() + ")"
	}
	src, err := metrics.NewPrometheusSourceVia(url, thanosLabel, rt)
	if err != nil {
		return nil, "the cluster's thanos-querier cannot be used (" + err.Error() + ")"
	}
	src.History = opts.Span
	return src, "no --prometheus URL was given; the cluster's thanos-querier answers, so the node proxy is not scraped"
}

// thanosProbeTimeout bounds the question to the cluster's querier: the console waits for it to start.
const thanosProbeTimeout = 5 * time.Second

// NodeMetrics reads the current figures of the named Windows nodes (all of them when none are named),
// in the snapshot's order (Windows nodes first, then by name). A named node that does not exist is an
// error; a named Linux node has node_exporter's figures through Prometheus, and none (with why) from the
// exporters.
func (s *Session) NodeMetrics(ctx context.Context, names []string, opts MetricsOptions) (model.MetricsReport, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return model.MetricsReport{}, err
	}
	src, why, err := s.MetricsSource(opts)
	if err != nil {
		return model.MetricsReport{}, err
	}
	linuxToo := readsLinux(src)
	var nodes []metrics.Node
	var linux []string
	want := map[string]bool{}
	for _, n := range names {
		if _, err := s.Node(ctx, n); err != nil {
			return model.MetricsReport{}, err
		}
		want[n] = true
	}
	for _, n := range snap.Nodes {
		if len(want) > 0 && !want[n.Name] {
			continue
		}
		switch {
		case n.Windows || len(want) > 0 && linuxToo:
			nodes = append(nodes, metrics.Node{Name: n.Name, IP: n.InternalIP})
		case len(want) > 0:
			linux = append(linux, n.Name)
		}
	}
	interval := opts.Interval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	r, err := metrics.Current(ctx, src, nodes, interval)
	if err != nil {
		return r, err
	}
	r.Why = why
	sort.Strings(linux)
	for _, n := range linux {
		r.Errors = append(r.Errors, model.NodeError{Node: n, Error: linuxNoMetrics})
	}
	return r, nil
}

// MetricsFeed is the console's live metrics: one source for the session's life, so an exporter's counters
// give rates from one refresh to the next and the sparklines fill up.
type MetricsFeed struct {
	src metrics.Source
	why string
	// Interval is the time between refreshes: 30 s (OpenShift's scrape interval: reading faster shows
	// nothing new), 3 s when the backend's exporters are in-process (the demo's).
	Interval time.Duration
	// Warmup is the time before the second refresh when the source derives rates from two reads, so CPU
	// and network show soon after the console opens; 0 when one read gives them.
	Warmup time.Duration

	mu   sync.Mutex
	last model.MetricsReport // the latest refresh, for triage

	// plan, when every read is a request of its own (node proxy, SSH), picks the nodes each refresh
	// reads; known keeps each node's latest figures meanwhile, so a row read one refresh keeps them.
	plan  *scrapePlan
	known map[string]model.NodeMetrics
}

// consoleHistory is the span of the sparklines the console keeps (the health view's; the Nodes pane
// draws the last 15 minutes of it).
const consoleHistory = time.Hour

// MetricsFeed picks the console's metrics source (see MetricsSource).
func (s *Session) MetricsFeed(opts MetricsOptions) (*MetricsFeed, error) {
	f := &MetricsFeed{Interval: 30 * time.Second}
	if s.backend.Exporters() != nil {
		f.Interval = 3 * time.Second
	}
	if opts.Refresh > 0 {
		f.Interval = opts.Refresh
	}
	opts.History, opts.Span = int(consoleHistory/f.Interval), consoleHistory
	src, why, err := s.MetricsSource(opts)
	if err != nil {
		return nil, err
	}
	f.src, f.why = src, why
	if src.NeedsTwoReads() {
		f.Warmup = 2 * time.Second
	}
	if es, ok := src.(*metrics.ExporterSource); ok && s.backend.Exporters() == nil {
		f.plan, f.known = newScrapePlan(opts.Now), map[string]model.NodeMetrics{}
		scrape := es.Scrape
		es.Scrape = func(ctx context.Context, n metrics.Node) ([]byte, error) {
			body, err := scrape(ctx, n)
			f.plan.observe(n.Name, err)
			return body, err
		}
	}
	s.feed.Store(f)
	return f, nil
}

// latest is the last refresh's figures of node, alone in a report; false when that refresh has none
// for it (not read yet, or no CPU rate yet: a fresh read says more).
func (f *MetricsFeed) latest(node string) (model.MetricsReport, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.last.Nodes {
		if m.Node == node && m.CPUPercent != nil {
			return model.MetricsReport{Source: f.last.Source, Why: f.last.Why + "; the console's latest figures",
				Nodes: []model.NodeMetrics{m}}, true
		}
	}
	return model.MetricsReport{}, false
}

// triageMetrics gives triage a node's figures: the console's latest, with their history, while the
// console reads metrics; otherwise read now (from the exporters: twice, 2 s apart).
func (s *Session) triageMetrics(ctx context.Context, node string) (model.MetricsReport, error) {
	if f := s.feed.Load(); f != nil {
		if r, ok := f.latest(node); ok {
			return r, nil
		}
	}
	return s.NodeMetrics(ctx, []string{node}, MetricsOptions{})
}

// Refresh reads the figures of the targets: Linux ones too through Prometheus (node_exporter's series);
// from the exporters a Linux one is reported without figures, with why. Nodes no longer listed are
// forgotten.
func (f *MetricsFeed) Refresh(ctx context.Context, targets []model.MetricsTarget) model.MetricsReport {
	var nodes []metrics.Node
	var names, linux []string
	linuxToo := readsLinux(f.src)
	for _, t := range targets {
		if !t.Windows && !linuxToo {
			linux = append(linux, t.Name)
			continue
		}
		nodes = append(nodes, metrics.Node{Name: t.Name, IP: t.IP})
		names = append(names, t.Name)
	}
	if es, ok := f.src.(*metrics.ExporterSource); ok {
		es.Tracker.Retain(names)
	}
	var r model.MetricsReport
	if f.plan != nil {
		r = f.refreshPlanned(ctx, targets, names)
	} else {
		r = f.src.Refresh(ctx, nodes)
	}
	r.Why = f.why
	for _, n := range linux {
		r.Errors = append(r.Errors, model.NodeError{Node: n, Error: linuxNoMetrics})
	}
	f.mu.Lock()
	f.last = r
	f.mu.Unlock()
	return r
}

// notOnScreen is why a Windows node the per-node paths have not read has no figures.
const notOnScreen = "not read yet: figures are read for the rows on screen (one request per node through the node proxy or SSH)"

// refreshPlanned reads the nodes the plan picks (rows on screen, within its rate, not backing off) and
// reports every Windows target with its latest figures, or why it has none.
func (f *MetricsFeed) refreshPlanned(ctx context.Context, targets []model.MetricsTarget, names []string) model.MetricsReport {
	keep := make(map[string]bool, len(names))
	for _, n := range names {
		keep[n] = true
	}
	f.plan.forget(keep)
	pick, waiting := f.plan.pick(targets)
	fresh := model.MetricsReport{Source: f.src.Name()}
	if len(pick) > 0 {
		nodes := make([]metrics.Node, len(pick))
		for i, t := range pick {
			nodes[i] = metrics.Node{Name: t.Name, IP: t.IP}
		}
		fresh = f.src.Refresh(ctx, nodes)
	}
	errs := map[string]string{}
	for n, e := range waiting {
		errs[n] = e
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for n := range f.known {
		if !keep[n] {
			delete(f.known, n)
		}
	}
	for _, m := range fresh.Nodes {
		f.known[m.Node] = m
	}
	for _, e := range fresh.Errors {
		errs[e.Node] = e.Error
		delete(f.known, e.Node) // the failure says more than figures from an earlier read
	}
	r := model.MetricsReport{Source: fresh.Source}
	for _, t := range targets {
		if !keep[t.Name] {
			continue
		}
		if m, ok := f.known[t.Name]; ok {
			r.Nodes = append(r.Nodes, m)
		} else if e, ok := errs[t.Name]; ok {
			r.Errors = append(r.Errors, model.NodeError{Node: t.Name, Error: e})
		} else if !t.OnScreen {
			r.Errors = append(r.Errors, model.NodeError{Node: t.Name, Error: notOnScreen})
		}
	}
	return r
}

// readsLinux says the source has Linux nodes' figures: Prometheus has node_exporter's series (OpenShift
// scrapes it on every Linux node); wmcon reads only windows_exporter itself.
func readsLinux(src metrics.Source) bool {
	_, ok := src.(*metrics.PrometheusSource)
	return ok
}

const linuxNoMetrics = "a Linux node: its node_exporter is read through Prometheus only (--prometheus, or the cluster's thanos-querier)"
