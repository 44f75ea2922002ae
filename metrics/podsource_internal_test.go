package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wmcon/wmcon/model"
)

func f64(v float64) *float64 { return &v }

var webPod = model.WorkloadPod{Namespace: "shop", Name: "web-1", UID: "u1", Node: "win-1", Containers: []model.WorkloadContainer{
	{Name: "iis", ID: "containerd://aaa", Limits: model.Resources{MemoryBytes: 1 << 30}},
	{Name: "log", ID: "containerd://bbb", Requests: model.Resources{CPUCores: 0.1}},
}}

func TestPodTrackerRatesAndHistory(t *testing.T) {
	tr := NewPodTracker(3)
	t0 := time.Unix(1000, 0)
	sample := func(at time.Duration, iisCPU, logCPU, rx float64) PodSample {
		return PodSample{Pod: webPod, Taken: t0.Add(at), HasNet: true, RxBytes: rx, TxBytes: rx / 2, Containers: []ContainerSample{
			{Name: "iis", CPUSeconds: f64(iisCPU), MemoryBytes: f64(300 << 20)},
			{Name: "log", CPUSeconds: f64(logCPU), MemoryBytes: f64(20 << 20)},
		}}
	}
	m := tr.Observe(sample(0, 100, 10, 1000))
	assert.Nil(t, m.CPUCores, "one read of a counter has no rate")
	require.NotNil(t, m.MemoryBytes)
	assert.Equal(t, float64(320<<20), *m.MemoryBytes, "the containers' working sets add up")
	assert.Nil(t, m.NetRxBytesPerSec)
	assert.Equal(t, model.Resources{CPUCores: 0.1}, m.Requests)
	assert.Equal(t, model.Resources{}, m.Limits, "one container without a memory limit leaves the pod unlimited")

	m = tr.Observe(sample(10*time.Second, 105, 11, 3000))
	require.NotNil(t, m.CPUCores)
	assert.InDelta(t, 0.6, *m.CPUCores, 1e-9, "(5+1) CPU seconds in 10 s")
	assert.InDelta(t, 0.5, *m.Containers[0].CPUCores, 1e-9)
	assert.InDelta(t, 200, *m.NetRxBytesPerSec, 1e-9)
	assert.Equal(t, []float64{0.6}, m.CPUHistory, "the first point had no CPU")
	assert.Len(t, m.MemoryHistory, 2)
	assert.Equal(t, 10*time.Second, m.HistoryStep)
	assert.Equal(t, float64(1<<30), m.Containers[0].Limits.MemoryBytes)

	m = tr.Observe(sample(20*time.Second, 1, 12, 4000)) // the iis container restarted: its counter went back
	assert.Nil(t, m.Containers[0].CPUCores, "a counter that went backwards gives no rate")
	assert.Nil(t, m.CPUCores)
	assert.InDelta(t, 0.1, *m.Containers[1].CPUCores, 1e-9)
	m = tr.Observe(sample(30*time.Second, 3, 13, 5000))
	m = tr.Observe(sample(40*time.Second, 5, 14, 6000))
	assert.Len(t, m.MemoryHistory, 3, "the ring keeps 3 points")
	require.Len(t, m.CPUHistory, 2, "the restart's point had no CPU")
	assert.InDelta(t, 0.3, m.CPUHistory[1], 1e-9)

	tr.Forget(t0.Add(40 * time.Second))
	assert.Equal(t, 1, tr.Len(), "seen at 40 s")
	tr.Forget(t0.Add(41 * time.Second))
	assert.Equal(t, 0, tr.Len(), "a pod not observed since the cutoff is forgotten")
}

func TestPodTrackerTakesTheSourcesRate(t *testing.T) {
	tr := NewPodTracker(10)
	m := tr.Observe(PodSample{Pod: webPod, Taken: time.Unix(1, 0), Containers: []ContainerSample{
		{Name: "iis", CPUCores: f64(0.25), CPUSeconds: f64(9), MemoryBytes: f64(1)},
		{Name: "log", CPUCores: f64(0.05), MemoryBytes: f64(1)},
	}})
	require.NotNil(t, m.CPUCores, "the kubelet's usageNanoCores is a rate: one read is enough")
	assert.InDelta(t, 0.3, *m.CPUCores, 1e-9)
	assert.Equal(t, []float64{0.3}, m.CPUHistory)
}

// TestRatesUseTheHostsClock: the exporter's counters are divided by the time its own CPU counters
// moved, not by the reader's clock: a second read whose answer came 2 s late (a loaded machine, a slow
// link) still gives the container's 1.5 cores and the pod's traffic, not a third of them.
func TestRatesUseTheHostsClock(t *testing.T) {
	body := func(cpuPerCore, container, rx float64) string {
		var b strings.Builder
		for _, core := range []string{"0,0", "0,1"} {
			fmt.Fprintf(&b, "windows_cpu_time_total{core=%q,mode=\"idle\"} %g\n", core, cpuPerCore*0.75)
			fmt.Fprintf(&b, "windows_cpu_time_total{core=%q,mode=\"user\"} %g\n", core, cpuPerCore*0.25)
		}
		fmt.Fprintf(&b, "windows_container_cpu_usage_seconds_total{container_id=\"containerd://aaa\"} %g\n", container)
		fmt.Fprintf(&b, "windows_container_cpu_usage_seconds_total{container_id=\"containerd://bbb\"} 0\n")
		fmt.Fprintf(&b, "windows_container_network_receive_bytes_total{container_id=\"containerd://aaa\",interface=\"E1\"} %g\n", rx)
		fmt.Fprintf(&b, "windows_container_network_transmit_bytes_total{container_id=\"containerd://aaa\",interface=\"E1\"} %g\n", rx)
		return b.String()
	}
	bodies := []string{body(100, 10, 1000), body(101, 11.5, 3000)} // one second of the host's time apart
	var reads atomic.Int32
	t0 := time.Unix(1000, 0)
	src := &ExporterPodSource{Via: "test", Tracker: NewPodTracker(10),
		Scrape: func(context.Context, Node) ([]byte, error) { return []byte(bodies[reads.Add(1)-1]), nil },
		Now:    func() time.Time { return t0.Add(time.Duration(reads.Load()-1) * 3 * time.Second) }}
	src.Refresh(context.Background(), []model.WorkloadPod{webPod})
	r := src.Refresh(context.Background(), []model.WorkloadPod{webPod})
	require.Len(t, r.Pods, 1)
	require.NotNil(t, r.Pods[0].CPUCores)
	assert.InDelta(t, 1.5, *r.Pods[0].CPUCores, 1e-9, "1.5 CPU seconds in one second of the host's clock, the answer 3 s after the first")
	require.NotNil(t, r.Pods[0].NetRxBytesPerSec)
	assert.InDelta(t, 2000, *r.Pods[0].NetRxBytesPerSec, 1e-9)

	noCPU := PodSample{Pod: webPod, Taken: t0, Containers: []ContainerSample{{Name: "iis", CPUSeconds: f64(1)}, {Name: "log", CPUSeconds: f64(0)}}}
	tr := NewPodTracker(10)
	tr.Observe(noCPU)
	later := noCPU
	later.Taken, later.Containers = t0.Add(2*time.Second), []ContainerSample{{Name: "iis", CPUSeconds: f64(2)}, {Name: "log", CPUSeconds: f64(0)}}
	m := tr.Observe(later)
	require.NotNil(t, m.CPUCores)
	assert.InDelta(t, 0.5, *m.CPUCores, 1e-9, "without the exporter's cpu collector the reader's clock is all there is")
}

// summaryJSON is a kubelet summary as the Windows kubelet writes it: web-1 (two containers), a pod of
// another namespace, and a pod of web-1's name with another UID (recreated).
const summaryJSON = `{"node":{"nodeName":"win-1","startTime":"2026-01-01T00:00:00Z"},"pods":[
{"podRef":{"name":"web-1","namespace":"shop","uid":"u1"},"startTime":"2026-01-01T00:00:00Z",
 "containers":[
  {"name":"iis","startTime":"2026-01-01T00:00:00Z","cpu":{"time":"2026-01-01T10:00:00Z","usageNanoCores":250000000,"usageCoreNanoSeconds":9000000000},"memory":{"time":"2026-01-01T10:00:00Z","workingSetBytes":314572800}},
  {"name":"log","startTime":"2026-01-01T00:00:00Z","cpu":{"time":"2026-01-01T10:00:01Z","usageCoreNanoSeconds":1000000000},"memory":{"time":"2026-01-01T10:00:01Z","workingSetBytes":20971520}}],
 "network":{"time":"2026-01-01T10:00:00Z","name":"eth0","rxBytes":1000,"txBytes":500,"interfaces":[{"name":"eth0","rxBytes":1000,"txBytes":500},{"name":"eth1","rxBytes":10,"txBytes":5}]}},
{"podRef":{"name":"db-0","namespace":"other","uid":"u2"},"startTime":"2026-01-01T00:00:00Z","containers":[]},
{"podRef":{"name":"web-1","namespace":"shop","uid":"u-old"},"startTime":"2026-01-01T00:00:00Z","containers":[]}]}`

func TestSummarySamples(t *testing.T) {
	now := time.Unix(5, 0)
	got, err := SummarySamples([]byte(summaryJSON), []model.WorkloadPod{webPod}, now)
	require.NoError(t, err)
	require.Len(t, got, 1, "only the pods asked about, with their UID")
	s := got[0]
	assert.Equal(t, time.Date(2026, 1, 1, 10, 0, 1, 0, time.UTC), s.Taken.UTC(), "stamped when the runtime read the figures")
	require.Len(t, s.Containers, 2)
	assert.InDelta(t, 0.25, *s.Containers[0].CPUCores, 1e-12)
	assert.InDelta(t, 9, *s.Containers[0].CPUSeconds, 1e-12)
	assert.Nil(t, s.Containers[1].CPUCores, "the kubelet had no rate yet")
	assert.Equal(t, float64(20<<20), *s.Containers[1].MemoryBytes)
	assert.True(t, s.HasNet)
	assert.Equal(t, 1010.0, s.RxBytes, "summed over the pod's interfaces")

	_, err = SummarySamples([]byte("<html>"), nil, now)
	assert.ErrorContains(t, err, "not a kubelet summary")
}

// forbiddenErr is the API server's answer to a user without get nodes/proxy.
func forbiddenErr(node string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "nodes/proxy"}, node, errors.New(`User "alice" cannot get resource "nodes/proxy"`))
}

func TestSummarySourceBacksOffAndIsRefused(t *testing.T) {
	now := time.Unix(10000, 0)
	var reads atomic.Int32
	answer := map[string]error{"win-1": forbiddenErr("win-1"), "win-2": forbiddenErr("win-2")}
	src := &SummarySource{Via: "test", Tracker: NewPodTracker(5), Now: func() time.Time { return now },
		Read: func(_ context.Context, node string) ([]byte, error) {
			reads.Add(1)
			if err := answer[node]; err != nil {
				return nil, err
			}
			return []byte(summaryJSON), nil
		}}
	pods := []model.WorkloadPod{webPod, {Namespace: "shop", Name: "web-2", Node: "win-2"}}
	r, refused := src.refresh(context.Background(), pods)
	assert.Equal(t, int32(2), reads.Load())
	assert.Contains(t, refused, "the kubelets' summary API is forbidden to this user (get nodes/proxy")
	require.Len(t, r.Errors, 2)

	now = now.Add(30 * time.Second)
	r, refused = src.refresh(context.Background(), pods)
	assert.Equal(t, int32(2), reads.Load(), "a 403 is not asked again at the next refresh")
	assert.NotEmpty(t, refused, "still refused while backing off")
	assert.Contains(t, r.Errors[0].Error, "not asked again until")

	answer["win-1"] = nil // the user was given nodes/proxy on win-1 only (resourceNames)
	now = now.Add(31 * time.Second)
	r, refused = src.refresh(context.Background(), pods)
	assert.Equal(t, int32(4), reads.Load(), "asked again after a minute")
	assert.Empty(t, refused, "one node answered: the source is not refused as a whole")
	require.Len(t, r.Pods, 1)
	assert.Equal(t, "web-1", r.Pods[0].Name)
	require.Len(t, r.Errors, 1)
	assert.Equal(t, "win-2", r.Errors[0].Node)

	now = now.Add(90 * time.Second) // win-2's second back-off is 2 minutes
	src.refresh(context.Background(), pods)
	assert.Equal(t, int32(5), reads.Load(), "win-1 is read every refresh; win-2 waits twice as long")
	now = now.Add(31 * time.Second)
	src.refresh(context.Background(), pods)
	assert.Equal(t, int32(7), reads.Load())

	answer["win-2"] = errors.New("dial tcp: connection refused") // not a status that lasts: no back-off
	now = now.Add(5 * time.Minute)
	src.refresh(context.Background(), pods)
	src.refresh(context.Background(), pods)
	assert.Equal(t, int32(11), reads.Load())
}

// fixedSource answers with a report naming itself.
type fixedSource struct {
	name  string
	calls int
}

func (f *fixedSource) Name() string { return f.name }
func (f *fixedSource) Refresh(context.Context, []model.WorkloadPod) model.PodMetricsReport {
	f.calls++
	return model.PodMetricsReport{Source: f.name, Pods: []model.PodMetrics{{Name: "from " + f.name}}}
}

func TestPodFallbackSaysWhy(t *testing.T) {
	now := time.Unix(10000, 0)
	forbidden := true
	primary := &SummarySource{Via: "the node proxy", Tracker: NewPodTracker(5), Now: func() time.Time { return now },
		Read: func(_ context.Context, node string) ([]byte, error) {
			if forbidden {
				return nil, forbiddenErr(node)
			}
			return []byte(summaryJSON), nil
		}}
	ssh := &fixedSource{name: "windows_exporter over SSH"}
	picks := 0
	f := &PodFallback{Primary: primary, Next: func(context.Context) (PodSource, string) {
		picks++
		return ssh, "the cluster has no thanos-querier, so each host's windows_exporter is read over SSH"
	}}
	r := f.Refresh(context.Background(), []model.WorkloadPod{webPod})
	assert.Equal(t, "windows_exporter over SSH", r.Source)
	assert.True(t, strings.HasPrefix(r.Why, "the kubelets' summary API is forbidden to this user (get nodes/proxy"), r.Why)
	assert.Contains(t, r.Why, "; the cluster has no thanos-querier, so each host's windows_exporter is read over SSH")
	f.Refresh(context.Background(), []model.WorkloadPod{webPod})
	assert.Equal(t, 1, picks, "the fallback is picked once")
	assert.Equal(t, 2, ssh.calls)

	forbidden = false // RBAC changed; the back-off ends
	now = now.Add(2 * time.Minute)
	r = f.Refresh(context.Background(), []model.WorkloadPod{webPod})
	assert.Equal(t, primary.Name(), r.Source, "the summary API is used again once it answers")
	assert.Empty(t, r.Why)
	assert.Equal(t, 2, ssh.calls)

	none := &PodFallback{Primary: &SummarySource{Via: "x", Tracker: NewPodTracker(1),
		Read: func(_ context.Context, node string) ([]byte, error) { return nil, forbiddenErr(node) }},
		Next: func(context.Context) (PodSource, string) { return nil, "no host can be reached" }}
	r = none.Refresh(context.Background(), []model.WorkloadPod{webPod})
	assert.Contains(t, r.Why, "forbidden to this user")
	assert.Contains(t, r.Why, "; no host can be reached")
	assert.Len(t, r.Errors, 1)
}

func TestCurrentPodsReadsTwiceOnlyForCounters(t *testing.T) {
	rate := &fixedSource{name: "rates"}
	r, err := CurrentPods(context.Background(), &withCPU{rate}, nil, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 1, rate.calls, "every pod has CPU: no second read, no wait")
	assert.Len(t, r.Pods, 1)

	counters := &fixedSource{name: "counters"}
	_, err = CurrentPods(context.Background(), counters, nil, time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, 2, counters.calls, "CPU unknown after one read: read again")
}

type withCPU struct{ *fixedSource }

func (w *withCPU) Refresh(ctx context.Context, pods []model.WorkloadPod) model.PodMetricsReport {
	r := w.fixedSource.Refresh(ctx, pods)
	r.Pods[0].CPUCores = f64(1)
	return r
}
