package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	statsv1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/wmcon/wmcon/model"
)

// ReadSummary returns a node's kubelet summary (GET /stats/summary: the Summary JSON of
// k8s.io/kubelet/pkg/apis/stats/v1alpha1).
type ReadSummary func(ctx context.Context, node string) ([]byte, error)

// SummarySource reads the pods' figures from each node's kubelet summary API: the Windows kubelet fills
// pod and container CPU, memory and network from the container runtime's stats, so it needs no Prometheus,
// only a way to the kubelet (the API server's node proxy: get nodes/proxy). One request per node a
// refresh. A node that answers 400, 403 or 404 is not asked again at once but after a back-off (1 minute,
// doubling to 16), since asking again each refresh would get the same answer.
type SummarySource struct {
	Via      string // how the kubelets are reached, e.g. "the API server's node proxy"
	Read     ReadSummary
	Tracker  *PodTracker
	Now      func() time.Time // default time.Now
	Parallel int              // concurrent reads (default 8)

	mu      sync.Mutex
	backoff map[string]backoff
}

// backoff is a node whose last answer will not change soon.
type backoff struct {
	until     time.Time
	wait      time.Duration
	err       string
	forbidden bool
}

const (
	backoffMin = time.Minute
	backoffMax = 16 * time.Minute
)

func (s *SummarySource) Name() string {
	return "the kubelets' summary API via " + s.Via
}

// Refresh reads the summary of every node the pods run on.
func (s *SummarySource) Refresh(ctx context.Context, pods []model.WorkloadPod) model.PodMetricsReport {
	r, _ := s.refresh(ctx, pods)
	return r
}

func (s *SummarySource) refresh(ctx context.Context, pods []model.WorkloadPod) (model.PodMetricsReport, string) {
	now := s.now()
	nodes, byNode := podNodes(pods)
	found := make([][]model.PodMetrics, len(nodes))
	errs := make([]error, len(nodes))
	forbidden := make([]bool, len(nodes))
	forEachNode(nodes, s.Parallel, func(i int, node string) {
		if b, ok := s.backingOff(node, now); ok {
			errs[i], forbidden[i] = fmt.Errorf("%s (not asked again until %s)", b.err, b.until.Format("15:04:05")), b.forbidden
			return
		}
		body, err := s.Read(ctx, node)
		if err != nil {
			errs[i], forbidden[i] = err, apierrors.IsForbidden(err)
			s.noteFailure(node, err, now)
			return
		}
		s.noteSuccess(node)
		samples, err := SummarySamples(body, byNode[node], now)
		if err != nil {
			errs[i] = fmt.Errorf("read the kubelet summary of %s: %w", node, err)
			return
		}
		for _, smp := range samples {
			found[i] = append(found[i], s.Tracker.Observe(smp))
		}
	})
	s.Tracker.Forget(now.Add(-trackerTTL))
	r := model.PodMetricsReport{Source: s.Name()}
	refused := len(nodes) > 0
	for i, n := range nodes {
		r.Pods = append(r.Pods, found[i]...)
		if errs[i] != nil {
			r.Errors = append(r.Errors, model.NodeError{Node: n, Error: errs[i].Error()})
		}
		refused = refused && forbidden[i]
	}
	sortPods(r.Pods)
	if refused {
		return r, "the kubelets' summary API is forbidden to this user (get nodes/proxy: " + r.Errors[0].Error + ")"
	}
	return r, ""
}

func (s *SummarySource) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *SummarySource) backingOff(node string, now time.Time) (backoff, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.backoff[node]
	return b, ok && now.Before(b.until)
}

// noteFailure starts or lengthens a node's back-off when its answer will not change soon: a bad request
// (the kubelet does not serve the summary), forbidden (RBAC), or not found (the node is gone).
func (s *SummarySource) noteFailure(node string, err error, now time.Time) {
	if !apierrors.IsBadRequest(err) && !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.backoff == nil {
		s.backoff = map[string]backoff{}
	}
	b := s.backoff[node]
	b.wait = min(max(2*b.wait, backoffMin), backoffMax)
	b.until, b.err, b.forbidden = now.Add(b.wait), err.Error(), apierrors.IsForbidden(err)
	s.backoff[node] = b
}

func (s *SummarySource) noteSuccess(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.backoff, node)
}

// SummarySamples picks the pods out of a kubelet summary (the JSON of /stats/summary) and turns them into
// samples: CPU as the kubelet's rate (usageNanoCores) and counter (usageCoreNanoSeconds), memory as the
// working set, network as the pod's interfaces' byte counters. Pods of the summary not in pods are left
// out (another namespace, or gone); a pod whose UID differs is another pod of the same name.
func SummarySamples(body []byte, pods []model.WorkloadPod, now time.Time) ([]PodSample, error) {
	var sum statsv1.Summary
	if err := json.Unmarshal(body, &sum); err != nil {
		return nil, fmt.Errorf("not a kubelet summary: %w", err)
	}
	want := make(map[[2]string]model.WorkloadPod, len(pods))
	for _, p := range pods {
		want[[2]string{p.Namespace, p.Name}] = p
	}
	var out []PodSample
	for _, ps := range sum.Pods {
		p, ok := want[[2]string{ps.PodRef.Namespace, ps.PodRef.Name}]
		if !ok || (p.UID != "" && ps.PodRef.UID != "" && p.UID != ps.PodRef.UID) {
			continue
		}
		out = append(out, podSample(p, ps, now))
	}
	return out, nil
}

func podSample(p model.WorkloadPod, ps statsv1.PodStats, now time.Time) PodSample {
	s := PodSample{Pod: p, Taken: now}
	var latest time.Time
	for _, c := range ps.Containers {
		cs := ContainerSample{Name: c.Name}
		if c.CPU != nil {
			cs.CPUCores = scaled(c.CPU.UsageNanoCores, 1e-9)
			cs.CPUSeconds = scaled(c.CPU.UsageCoreNanoSeconds, 1e-9)
			latest = later(latest, c.CPU.Time.Time)
		}
		if c.Memory != nil {
			cs.MemoryBytes = scaled(c.Memory.WorkingSetBytes, 1)
		}
		s.Containers = append(s.Containers, cs)
	}
	// The kubelet stamps each figure with when the runtime read it; rates from its counters use that time.
	if !latest.IsZero() {
		s.Taken = latest
	}
	if n := ps.Network; n != nil {
		ifaces := n.Interfaces
		if len(ifaces) == 0 {
			ifaces = []statsv1.InterfaceStats{n.InterfaceStats}
		}
		for _, i := range ifaces {
			if i.RxBytes != nil && i.TxBytes != nil {
				s.HasNet = true
				s.RxBytes += float64(*i.RxBytes)
				s.TxBytes += float64(*i.TxBytes)
			}
		}
	}
	return s
}

func scaled(v *uint64, by float64) *float64 {
	if v == nil {
		return nil
	}
	return ptr(float64(*v) * by)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
