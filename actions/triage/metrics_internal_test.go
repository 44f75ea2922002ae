package triage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/model"
)

func f64(v float64) *float64 { return &v }

func metricsInput(t *testing.T, read TriageMetrics) triageInput {
	t.Helper()
	deps := TriageDeps{Metrics: read}
	deps.applyDefaults()
	return triageInput{node: model.NodeInfo{Name: "win-1"}, metrics: readMetricsFacts(context.Background(), deps, "win-1")}
}

func byID(cs []diagnosis.Check) map[string]diagnosis.Check {
	out := map[string]diagnosis.Check{}
	for _, c := range cs {
		out[c.ID] = c
	}
	return out
}

// No source, a source that fails, and a node the source has no figures for are unknown, never failures.
func TestMetricsChecksUnknownWithoutFigures(t *testing.T) {
	for name, read := range map[string]TriageMetrics{
		"no source": nil,
		"source fails": func(context.Context, string) (model.MetricsReport, error) {
			return model.MetricsReport{}, errors.New("the node proxy is forbidden")
		},
		"node not read": func(context.Context, string) (model.MetricsReport, error) {
			return model.MetricsReport{Source: "windows_exporter via x", Errors: []model.NodeError{{Node: "win-1", Error: "connection refused"}}}, nil
		},
	} {
		cs := byID(metricsInput(t, read).metricsChecks())
		require.Len(t, cs, 3, name)
		for id, c := range cs {
			assert.Equal(t, diagnosis.CheckUnknown, c.Status, "%s: %s", name, id)
			assert.NotEmpty(t, c.Fix, "%s: %s", name, id)
		}
		if name == "node not read" {
			assert.Equal(t, "unknown: no metrics could be read (connection refused)", cs["disk-free"].Detail)
			assert.Equal(t, []string{"source: windows_exporter via x"}, cs["disk-free"].Evidence)
		}
	}
}

func TestMetricsChecksThresholds(t *testing.T) {
	busy := func(points int) []float64 {
		h := []float64{40, 50}
		for range points {
			h = append(h, 95)
		}
		return h
	}
	figures := model.NodeMetrics{Node: "win-1", CPUPercent: f64(96), CPUHistory: busy(11), HistoryStep: 30 * time.Second,
		MemoryUsedPercent: f64(93), MemoryTotalBytes: f64(16 << 30), Volume: "C:", VolumeFreePercent: f64(3), VolumeFreeBytes: f64(3.84 * (1 << 30))}
	read := func(m model.NodeMetrics) TriageMetrics {
		return func(context.Context, string) (model.MetricsReport, error) {
			return model.MetricsReport{Source: "Prometheus at http://p", Why: "--prometheus was given", Nodes: []model.NodeMetrics{m}}, nil
		}
	}
	cs := byID(metricsInput(t, read(figures)).metricsChecks())
	assert.Equal(t, diagnosis.CheckFail, cs["cpu-busy"].Status)
	assert.Equal(t, "CPU 96 %, above 90 % for 5m: the kubelet and containerd are starved (late heartbeats, slow pod starts)", cs["cpu-busy"].Detail)
	assert.Contains(t, cs["cpu-busy"].Evidence, "history: 13 points 30s apart, CPU 40–95 %")
	assert.Equal(t, "source: Prometheus at http://p (--prometheus was given)", cs["cpu-busy"].Evidence[0])
	assert.Equal(t, diagnosis.CheckFail, cs["memory-full"].Status)
	assert.Contains(t, cs["memory-full"].Detail, "memory 93 % used of 16.0 GiB (above 90 %)")
	assert.Equal(t, diagnosis.CheckFail, cs["disk-free"].Status)
	assert.Contains(t, cs["disk-free"].Detail, "C: has 3 % free: the kubelet's image garbage collection will fail")
	assert.Contains(t, cs["disk-free"].Evidence, "C: has 3 % free (3.8 GiB), the fullest volume with a drive letter")

	short := figures
	short.CPUHistory = busy(4) // 1m30s above 90 %
	cpu := byID(metricsInput(t, read(short)).metricsChecks())["cpu-busy"]
	assert.Equal(t, diagnosis.CheckWarn, cpu.Status)
	assert.Equal(t, "CPU 96 % now, above 90 % for 1m so far (a problem once it lasts 5m)", cpu.Detail)

	calm := figures
	calm.CPUPercent, calm.MemoryUsedPercent, calm.VolumeFreePercent = f64(20), f64(50), f64(40)
	for id, c := range byID(metricsInput(t, read(calm)).metricsChecks()) {
		assert.Equal(t, diagnosis.CheckOK, c.Status, id)
	}
}

// podsRead answers triage's pod read with one pod using memBytes of a 16 GiB, 4-core node and one
// container at 95 % of its 1 GiB limit when nearLimit.
func podsRead(memBytes float64, nearLimit bool) TriagePods {
	return func(context.Context, string) (model.PodMetricsReport, model.NodeCapacity, error) {
		pods := []model.PodMetrics{{Namespace: "apps", Name: "dotnet-api-5", Node: "win-1", CPUCores: f64(0.3), MemoryBytes: f64(memBytes)},
			{Namespace: "apps", Name: "other-on-another-node", Node: "win-2", CPUCores: f64(3.9), MemoryBytes: f64(15 << 30)}}
		if nearLimit {
			lim := model.Resources{MemoryBytes: 1 << 30}
			pods = append(pods, model.PodMetrics{Namespace: "apps", Name: "iis-2", Node: "win-1", CPUCores: f64(0.1), MemoryBytes: f64(0.95 * (1 << 30)),
				Limits: lim, Containers: []model.ContainerMetrics{{Name: "iis", MemoryBytes: f64(0.95 * (1 << 30)), Limits: lim}}})
		}
		return model.PodMetricsReport{Source: "the kubelets' summary API", Why: "no --prometheus URL was given", Pods: pods},
			model.NodeCapacity{CPUCores: 4, MemoryBytes: 16 << 30}, nil
	}
}

func podsInput(t *testing.T, memUsedPercent float64, pods TriagePods) triageInput {
	t.Helper()
	deps := TriageDeps{Pods: pods, Metrics: func(context.Context, string) (model.MetricsReport, error) {
		return model.MetricsReport{Source: "exporter", Nodes: []model.NodeMetrics{{Node: "win-1", CPUPercent: f64(20),
			MemoryUsedPercent: f64(memUsedPercent), MemoryTotalBytes: f64(16 << 30), Volume: "C:", VolumeFreePercent: f64(40)}}}, nil
	}}
	deps.applyDefaults()
	return triageInput{node: model.NodeInfo{Name: "win-1"}, metrics: readMetricsFacts(context.Background(), deps, "win-1")}
}

// A pod using most of a node short of memory is the cause: the check fails, names it, and comes before
// the node's memory check, whose fix names it too.
func TestPodPressureRankedAmongTheCauses(t *testing.T) {
	checks := podsInput(t, 93, podsRead(10<<30, false)).metricsChecks()
	diagnosis.Sort(checks)
	require.Len(t, checks, 4)
	assert.Equal(t, []string{"pod-pressure", "memory-full"}, []string{checks[0].ID, checks[1].ID}, "the pod first: it is why memory is full")
	pod := checks[0]
	assert.Equal(t, diagnosis.CheckFail, pod.Status)
	assert.Equal(t, "pod apps/dotnet-api-5 uses 62 % of the node's memory (10.0 GiB of 16.0 GiB), and the node is short of it", pod.Detail)
	assert.Contains(t, pod.Fix, "give pod apps/dotnet-api-5 a memory limit")
	assert.Contains(t, pod.Fix, "run wmcon top pods --node win-1 --containers")
	assert.Equal(t, "source: the kubelets' summary API (no --prometheus URL was given)", pod.Evidence[0])
	assert.True(t, strings.HasPrefix(checks[1].Fix, `pod apps/dotnet-api-5 uses 62 % of it (see the check "Pods' memory and CPU"); `), checks[1].Fix)
	assert.Contains(t, checks[1].Fix, "run wmcon top pods --node win-1 --sort-by memory")
}

// The same pod on a node with room is a risk; a container near its memory limit is named; a node whose
// pods use little passes; pods that cannot be read are unknown; without a pod source there is no check.
func TestPodPressureStatuses(t *testing.T) {
	risk := byID(podsInput(t, 70, podsRead(10<<30, false)).metricsChecks())["pod-pressure"]
	assert.Equal(t, diagnosis.CheckWarn, risk.Status)
	assert.Equal(t, "pod apps/dotnet-api-5 uses 62 % of the node's memory (10.0 GiB of 16.0 GiB): a risk while the node has room", risk.Detail)

	near := byID(podsInput(t, 70, podsRead(10<<30, true)).metricsChecks())["pod-pressure"]
	assert.Equal(t, diagnosis.CheckWarn, near.Status)
	assert.Equal(t, "container iis of pod apps/iis-2 uses 95 % of its memory limit (972.8 MiB of 1.0 GiB): it fails to allocate at the limit", near.Detail)
	assert.Contains(t, near.Evidence, "pod apps/dotnet-api-5 uses 62 % of the node's memory (10.0 GiB of 16.0 GiB)")
	assert.Contains(t, near.Fix, "raise the memory limit of container iis of pod apps/iis-2")

	calm := byID(podsInput(t, 40, podsRead(1<<30, false)).metricsChecks())["pod-pressure"]
	assert.Equal(t, diagnosis.CheckOK, calm.Status)
	assert.Equal(t, "no pod uses most of the node's memory or CPU, none is near its memory limit (pods read: 1)", calm.Detail)

	failing := func(context.Context, string) (model.PodMetricsReport, model.NodeCapacity, error) {
		return model.PodMetricsReport{Source: "exporter over SSH", Errors: []model.NodeError{{Node: "win-1", Error: "connection refused"}}}, model.NodeCapacity{}, nil
	}
	unknown := byID(podsInput(t, 93, failing).metricsChecks())
	assert.Equal(t, diagnosis.CheckUnknown, unknown["pod-pressure"].Status)
	assert.Equal(t, "unknown: the pods' figures could not be read (connection refused)", unknown["pod-pressure"].Detail)
	assert.NotContains(t, unknown["memory-full"].Fix, "pod ", "no pod named when the pods could not be read")

	assert.NotContains(t, byID(podsInput(t, 93, nil).metricsChecks()), "pod-pressure")
}
