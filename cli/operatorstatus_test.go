package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoOperatorStatusShowsThePodAndItsLog: operator status names the operator's pod with its health
// (ready, restarts, the last exit) and its last log lines, where configuration failures show first.
func TestDemoOperatorStatusShowsThePodAndItsLog(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "operator", "status")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Regexp(t, `pod windows-machine-config-operator-\S+: Running, ready, 1 restart\(s\); last exit: OOMKilled, exit 137`, out)
	assert.Contains(t, out, "operator log, last 15 line(s)")
	assert.Contains(t, out, "node is not Ready: the kubelet service is stopped", "the NotReady node's trouble is in the log")
	assert.Equal(t, 15, strings.Count(out, "  | "), "the last 15 lines")
	assert.NotContains(t, out, "\t", "the logger's tabs are spaced out")
}
