package session

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/model"
)

// The console's feed on the demo: the first read has no rates yet, the next (after the warmup) has
// CPU and a sparkline point; Linux nodes are named with why they have no figures, and a node that
// left the list is forgotten.
func TestDemoMetricsFeed(t *testing.T) {
	t.Setenv("WMCON_AUDIT_LOG", t.TempDir()+"/audit.log")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := New(ctx, Options{Demo: true, SSH: SSHOptions{SSHConfig: ""}})
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
	assert.Equal(t, model.NodeError{Node: "ip-127-0-1-10.ec2.internal", Error: "a Linux node: wmcon reads windows_exporter only"}, first.Errors[0])

	time.Sleep(300 * time.Millisecond)
	second := feed.Refresh(ctx, targets)
	require.Len(t, second.Nodes, 1)
	busy := second.Nodes[0]
	require.NotNil(t, busy.CPUPercent)
	assert.Greater(t, *busy.CPUPercent, model.CPUBusyPercent, "the demo's busy node")
	assert.Len(t, busy.CPUHistory, 1)

	feed.Refresh(ctx, targets[1:]) // the Windows node left the list: forgotten
	again := feed.Refresh(ctx, targets[:1])
	require.Len(t, again.Nodes, 1)
	assert.Nil(t, again.Nodes[0].CPUPercent, "a forgotten node starts over")
}
