package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/demo"
)

// The console's feed on the demo: the first read has no rates yet, the next (after the warmup) has
// CPU and a sparkline point; Linux nodes are named with why they have no figures, and a node that
// left the list is forgotten.
func TestDemoMetricsFeed(t *testing.T) {
	t.Setenv("WMCON_AUDIT_LOG", t.TempDir()+"/audit.log")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := New(ctx, Options{Backend: newDemo(t, demo.Options{}), SSH: SSHOptions{SSHConfig: ""}})
	require.NoError(t, err)
	defer s.Close()

	feed, err := s.MetricsFeed(MetricsOptions{})
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, feed.Interval)
	assert.Equal(t, 2*time.Second, feed.Warmup, "the exporters need two reads")
	targets := []model.MetricsTarget{
		{Name: "ip-127-0-0-3.ec2.internal", IP: "127.0.0.3", Windows: true},
		{Name: "ip-127-0-1-10.ec2.internal", IP: "127.0.1.10"},
	}
	first := feed.Refresh(ctx, targets)
	assert.Contains(t, first.Source, "the demo's simulated hosts")
	assert.Equal(t, "the demo cluster has no Prometheus", first.Why)
	require.Len(t, first.Nodes, 1)
	assert.Nil(t, first.Nodes[0].CPUPercent, "a first read has no rate")
	require.Len(t, first.Errors, 1)
	assert.Equal(t, model.NodeError{Node: "ip-127-0-1-10.ec2.internal", Error: "a Linux node: its node_exporter is read through Prometheus only (--prometheus, or the cluster's thanos-querier)"}, first.Errors[0])

	time.Sleep(300 * time.Millisecond)
	second := feed.Refresh(ctx, targets)
	require.Len(t, second.Nodes, 1)
	busy := second.Nodes[0]
	require.NotNil(t, busy.CPUPercent)
	assert.Greater(t, *busy.CPUPercent, model.CPUBusyPercent, "the demo's busy node")
	assert.Len(t, busy.CPUHistory, 1)
	// The exporters do not count pods: the feed counts the node's running pods in the cluster, each read.
	pods, err := s.Clients.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	running := 0
	for _, p := range pods.Items {
		if p.Spec.NodeName == busy.Node && p.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	require.Positive(t, running, "the demo runs pods on its busy node")
	require.NotNil(t, busy.PodsRunning)
	assert.Equal(t, float64(running), *busy.PodsRunning)
	assert.Equal(t, []float64{float64(running)}, busy.PodsHistory)

	feed.Refresh(ctx, targets[1:]) // the Windows node left the list: forgotten
	again := feed.Refresh(ctx, targets[:1])
	require.Len(t, again.Nodes, 1)
	assert.Nil(t, again.Nodes[0].CPUPercent, "a forgotten node starts over")
}

// TestDemoTriageResourceChecks triages the demo's loaded hosts: 4 % free on C:, 93 % memory, and the
// pinned CPU — a warning after one read (how long is not known), a failure once the console's feed has
// five minutes of history above 90 % (its reads stamped 30 s apart, as OpenShift's scrapes are).
func TestDemoTriageResourceChecks(t *testing.T) {
	ctx, s := openDemo(t, 2*time.Minute)
	check := func(node, id string) diagnosis.Check {
		t.Helper()
		r, err := s.Triage(ctx, node)
		require.NoError(t, err)
		c, ok := r.Check(id)
		require.True(t, ok, "%s has a %s check", node, id)
		assert.Contains(t, strings.Join(c.Evidence, "\n"), "source: windows_exporter via the demo's simulated hosts")
		return c
	}
	disk := check(demo.NodeName("127.0.0.4"), "disk-free")
	assert.Equal(t, diagnosis.CheckFail, disk.Status, disk.Detail)
	assert.Contains(t, disk.Detail, "C: has 4 % free: the kubelet's image garbage collection will fail")
	assert.Contains(t, disk.Fix, "crictl rmi --prune")
	mem := check(demo.NodeName("127.0.0.5"), "memory-full")
	assert.Equal(t, diagnosis.CheckFail, mem.Status, mem.Detail)
	assert.Contains(t, mem.Detail, "memory 93 % used of 16.0 GiB")
	assert.Contains(t, mem.Fix, "run wmcon drain "+demo.NodeName("127.0.0.5"))
	quiet := check(demo.NodeName("127.0.0.2"), "cpu-busy")
	assert.Equal(t, diagnosis.CheckOK, quiet.Status, quiet.Detail)
	busy := check(demo.NodeName("127.0.0.3"), "cpu-busy")
	assert.Equal(t, diagnosis.CheckWarn, busy.Status, busy.Detail)
	assert.Contains(t, busy.Detail, "for an unknown time (no history: one reading)")

	clock := time.Now()
	feed, err := s.MetricsFeed(MetricsOptions{Now: func() time.Time { clock = clock.Add(30 * time.Second); return clock }})
	require.NoError(t, err)
	targets := []model.MetricsTarget{{Name: demo.NodeName("127.0.0.3"), IP: "127.0.0.3", Windows: true}}
	for range 12 { // 11 points 30 s apart: 5 minutes
		feed.Refresh(ctx, targets)
		time.Sleep(20 * time.Millisecond)
	}
	busy = check(demo.NodeName("127.0.0.3"), "cpu-busy")
	assert.Equal(t, diagnosis.CheckFail, busy.Status, busy.Detail)
	assert.Regexp(t, `CPU 9\d %, above 90 % for 5m: the kubelet and containerd are starved`, busy.Detail)
	assert.Contains(t, busy.Evidence[0], "the console's latest figures")
}
