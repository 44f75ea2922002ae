package kubelet

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/wmcon/wmcon/sim/windows"
)

// StatsHost is a host whose containers' figures the kubelet reads from the container runtime
// (windows.Host and windows.Process are).
type StatsHost interface {
	ContainerStats() []windows.ContainerStat
}

// Summary is the kubelet's summary (/stats/summary) of node: one PodStats per pod whose containers run
// on the host, each container with its CPU (the rate as usageNanoCores, the counter as
// usageCoreNanoSeconds) and working set, and the pod's endpoint's network counters, all stamped with when
// they were read, as the Windows kubelet fills them from the CRI's stats. A pod whose containers stopped
// is not in it.
func Summary(node string, h StatsHost, started time.Time) statsv1.Summary {
	stats := h.ContainerStats()
	rx, tx := windows.PodNetwork(stats)
	pods := map[string]*statsv1.PodStats{}
	var order []string
	for _, s := range stats {
		key := s.Namespace + "/" + s.Pod
		ps := pods[key]
		if ps == nil {
			ps = &statsv1.PodStats{PodRef: statsv1.PodReference{Name: s.Pod, Namespace: s.Namespace, UID: s.PodUID},
				StartTime: metav1.NewTime(s.Started)}
			pods[key] = ps
			order = append(order, key)
		}
		at := metav1.NewTime(s.At)
		ps.Containers = append(ps.Containers, statsv1.ContainerStats{Name: s.Name, StartTime: metav1.NewTime(s.Started),
			CPU:    &statsv1.CPUStats{Time: at, UsageNanoCores: u64(s.CPUCores * 1e9), UsageCoreNanoSeconds: u64(s.CPUSeconds * 1e9)},
			Memory: &statsv1.MemoryStats{Time: at, WorkingSetBytes: u64(s.MemoryBytes), UsageBytes: u64(s.MemoryBytes)}})
		ps.Network = &statsv1.NetworkStats{Time: at, InterfaceStats: statsv1.InterfaceStats{Name: "eth0",
			RxBytes: u64(rx[key]), TxBytes: u64(tx[key])}}
	}
	sort.Strings(order)
	out := statsv1.Summary{Node: statsv1.NodeStats{NodeName: node, StartTime: metav1.NewTime(started)}, Pods: []statsv1.PodStats{}}
	for _, k := range order {
		out.Pods = append(out.Pods, *pods[k])
	}
	return out
}

func u64(v float64) *uint64 {
	n := uint64(max(v, 0))
	return &n
}

// statsSource is what a log server's /stats/summary reads.
type statsSource struct {
	node    string
	host    StatsHost
	started time.Time
}

// ServeStats adds the kubelet's summary API (/stats/summary) of node, from host's containers, to a
// running log server: the API server's node proxy reaches it at /api/v1/nodes/NODE/proxy/stats/summary.
func (s *LogServer) ServeStats(node string, host StatsHost) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = &statsSource{node: node, host: host, started: time.Now()}
}

// summaryHandler serves GET /stats/summary (404 until ServeStats, as a kubelet without the stats
// provider would).
func (s *LogServer) summaryHandler(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	src := s.stats
	s.mu.Unlock()
	if src == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(Summary(src.node, src.host, src.started))
}

// Handler is the log server's routes, for requests made in-process (no TLS, no connection).
func (s *LogServer) Handler() http.Handler { return s.server.Handler }
