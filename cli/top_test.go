package cli

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/model"
)

func TestTopDemo(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "top", "--interval", "300ms")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "metrics: windows_exporter via the demo's simulated hosts (in-process) (the demo cluster has no Prometheus)")
	assert.Regexp(t, regexp.MustCompile(`(?m)^NAME\s+CPU%\s+MEMORY%\s+MEMORY\s+VOLUME\s+FREE\s+FREE%\s+NET IN\s+NET OUT$`), out)
	assert.Regexp(t, regexp.MustCompile(`(?m)^ip-127-0-0-3\.ec2\.internal\s+9[2-9]%\s+81%\s+16\.0Gi\s+C:`), out, "the demo's busy node")
	assert.Regexp(t, regexp.MustCompile(`(?m)^ip-127-0-0-4\.ec2\.internal\s+\d+%\s+62%\s+16\.0Gi\s+C:\s+5\.1Gi\s+4%`), out, "the demo's node running out of disk")
}

func TestTopDemoJSONAndLinuxNode(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "top", "--interval", "300ms", "-o", "json", "ip-127-0-0-5.ec2.internal", "ip-127-0-1-10.ec2.internal")
	require.Equal(t, 0, code, errOut)
	var r model.MetricsReport
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Len(t, r.Nodes, 1)
	m := r.Nodes[0]
	assert.Equal(t, "ip-127-0-0-5.ec2.internal", m.Node)
	require.NotNil(t, m.CPUPercent)
	assert.InDelta(t, 22, *m.CPUPercent, 9, "the demo's load swings by up to 8 points")
	assert.InDelta(t, 93, *m.MemoryUsedPercent, 0.1)
	assert.NotNil(t, m.NetRxBytesPerSec)
	require.Len(t, r.Errors, 1)
	assert.Equal(t, model.NodeError{Node: "ip-127-0-1-10.ec2.internal", Error: "a Linux node: its node_exporter is read through Prometheus only (--prometheus, or the cluster's thanos-querier)"}, r.Errors[0])
}

func TestTopBadInput(t *testing.T) {
	code, _, errOut := runWmcon(t, "--demo", "top", "no-such-node")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, `node "no-such-node" not found`)
	code, _, errOut = runWmcon(t, "--demo", "top", "--interval", "0s")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "--interval 0s: use 100ms to 1m")
	code, _, errOut = runWmcon(t, "--demo", "top", "-o", "yaml")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, `--output "yaml": use text or json`)
}
