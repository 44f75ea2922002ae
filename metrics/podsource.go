package metrics

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/wmcon/wmcon/model"
)

// PodSource is where the figures of pods on Windows nodes come from: the kubelets' summary API, a
// Prometheus, or the nodes' windows_exporter. Each is asked about pods (from the cluster, with their
// container IDs and resources), reads only the nodes those pods run on, and returns their figures; a node
// it cannot read is in the report's Errors. How often and for which pods is the caller's business.
type PodSource interface {
	// Name says where the numbers come from, for the user.
	Name() string
	// Refresh reads the current figures of pods.
	Refresh(ctx context.Context, pods []model.WorkloadPod) model.PodMetricsReport
}

// refusable is a pod source that knows when this user may not use it at all (RBAC refused every node),
// so that a PodFallback moves on; refused says why, "" when the source answered.
type refusable interface {
	refresh(ctx context.Context, pods []model.WorkloadPod) (r model.PodMetricsReport, refused string)
}

// PodFallback reads pods from Primary; while Primary is refused as a whole (the user may not get
// nodes/proxy), from the source Next picks, and the report's Why says both why Primary was not used and
// why that one was. Primary is asked again every refresh: its own back-off keeps that from costing a
// request per node.
type PodFallback struct {
	Primary PodSource
	// Next picks the source used while Primary is refused, and says why (or why there is none: nil). It is
	// called once, when Primary is first refused.
	Next func(ctx context.Context) (PodSource, string)

	mu      sync.Mutex
	picked  bool
	next    PodSource
	nextWhy string
}

func (f *PodFallback) Name() string { return f.Primary.Name() }

// Refresh asks Primary, then Next's source when Primary is refused.
func (f *PodFallback) Refresh(ctx context.Context, pods []model.WorkloadPod) model.PodMetricsReport {
	r, refused := refreshPods(ctx, f.Primary, pods)
	if refused == "" {
		return r
	}
	src, why := f.pick(ctx)
	if src == nil {
		r.Why = join(r.Why, refused+"; "+why)
		return r
	}
	out := src.Refresh(ctx, pods)
	out.Why = join(out.Why, refused+"; "+why)
	return out
}

func (f *PodFallback) pick(ctx context.Context) (PodSource, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.picked {
		f.next, f.nextWhy = f.Next(ctx)
		f.picked = true
	}
	return f.next, f.nextWhy
}

func refreshPods(ctx context.Context, src PodSource, pods []model.WorkloadPod) (model.PodMetricsReport, string) {
	if r, ok := src.(refusable); ok {
		return r.refresh(ctx, pods)
	}
	return src.Refresh(ctx, pods), ""
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// CurrentPods reads once and, when some pod's CPU is still unknown (a source counting CPU seconds
// itself needs two reads), again after interval: what `wmcon top pods` prints.
func CurrentPods(ctx context.Context, src PodSource, pods []model.WorkloadPod, interval time.Duration) (model.PodMetricsReport, error) {
	r := src.Refresh(ctx, pods)
	if !missingCPU(r) {
		return r, nil
	}
	select {
	case <-ctx.Done():
		return r, fmt.Errorf("pod metrics: %w", ctx.Err())
	case <-time.After(interval):
	}
	return src.Refresh(ctx, pods), nil
}

func missingCPU(r model.PodMetricsReport) bool {
	for _, p := range r.Pods {
		if p.CPUCores == nil {
			return true
		}
	}
	return false
}

// podNodes are the nodes the pods run on, by name, and each node's pods.
func podNodes(pods []model.WorkloadPod) ([]string, map[string][]model.WorkloadPod) {
	byNode := map[string][]model.WorkloadPod{}
	var names []string
	for _, p := range pods {
		if p.Node == "" {
			continue
		}
		if _, ok := byNode[p.Node]; !ok {
			names = append(names, p.Node)
		}
		byNode[p.Node] = append(byNode[p.Node], p)
	}
	sort.Strings(names)
	return names, byNode
}

// sortPods orders figures by namespace, then name.
func sortPods(ps []model.PodMetrics) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Namespace != ps[j].Namespace {
			return ps[i].Namespace < ps[j].Namespace
		}
		return ps[i].Name < ps[j].Name
	})
}

// forEachNode runs read for every node, at most parallel at once, and waits.
func forEachNode(nodes []string, parallel int, read func(i int, node string)) {
	if parallel < 1 {
		parallel = 8
	}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			read(i, n)
		}()
	}
	wg.Wait()
}

// trackerTTL is how long a pod nobody asked about keeps its history.
const trackerTTL = 15 * time.Minute
