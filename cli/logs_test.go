package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/sim/demo"
)

func TestLogsOnTheDemo(t *testing.T) {
	node := demo.NodeName("127.0.0.2")
	code, out, errOut := runWmcon(t, "--demo", "logs", node, "--tail", "20")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// The demo hosts come up with a history of log lines, as hosts that have been running for a while:
	// a first tail shows as many lines as asked, klog lines of the kubelet.
	require.Len(t, lines, 20, out)
	for _, l := range lines {
		require.Regexp(t, `^[IWE]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ \S+\.go:\d+\] `, l)
	}
	require.Contains(t, errOut, "over SSH", "stderr says which source is used")

	other := demo.NodeName("127.0.0.3")
	code, out, errOut = runWmcon(t, "--demo", "logs", node, other, "--tail", "2", "-o", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var line logline.Line
		require.NoError(t, json.Unmarshal([]byte(l), &line), l)
		seen[line.Node]++
		require.Equal(t, "kubelet", line.Service)
	}
	require.Len(t, seen, 2, out)
	for n, count := range seen {
		require.Contains(t, []string{node, other}, n)
		require.LessOrEqual(t, count, 2)
	}
}

func TestLogsRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "n1", "--service", "kubeletx"}, `unknown log "kubeletx"`},
		{[]string{"logs", "n1", "--via", "rdp"}, `unknown log source "rdp": use api or ssh`},
		{[]string{"logs", "n1", "--service", "events:bogus"}, `unknown service "bogus" in "events:bogus"`},
		{[]string{"logs", "n1", "--service", "events", "--via", "api"}, "only reachable over SSH"},
		{[]string{"logs", "n1", "--tail", "-5"}, "--tail -5"},
		{[]string{"logs", "n1", "-o", "yaml"}, `--output "yaml"`},
	} {
		code, _, errOut := runWmcon(t, tc.args...)
		require.NotEqual(t, 0, code)
		require.Contains(t, errOut, tc.want)
	}
	code, _, errOut := runWmcon(t, "--demo", "logs", "no-such-node")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, `node "no-such-node" not found`)
}

func TestLogsOfANodeNamedTwicePrintsEachLineOnce(t *testing.T) {
	node := demo.NodeName("127.0.0.2")
	code, out, errOut := runWmcon(t, "--demo", "logs", node, node, "--tail", "5")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5, out)
	for _, l := range lines {
		require.False(t, strings.HasPrefix(l, "["), "one node: no [node] prefix: %q", l)
	}
}

func TestUniqueNodesKeepsTheFirstOfEachName(t *testing.T) {
	require.Equal(t, []string{"a", "b", "c"}, uniqueNodes([]string{"a", "b", "a", "c", "b"}))
	require.Empty(t, uniqueNodes(nil))
}

// TestLogsOfTheNodesASelectorMatches: -l reads the matching Windows nodes, each with its [node] prefix,
// leaves out the Linux ones it matches (saying so), and refuses a selector matching only Linux nodes.
func TestLogsOfTheNodesASelectorMatches(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "logs", "-l", "node-role.kubernetes.io/worker", "--tail", "1", "-o", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var line logline.Line
		require.NoError(t, json.Unmarshal([]byte(l), &line), l)
		seen[line.Node] = true
	}
	require.Contains(t, seen, demo.NodeName("127.0.0.2"))
	require.Greater(t, len(seen), 1, "every matching Windows node")
	for n := range seen {
		require.True(t, strings.HasPrefix(n, "ip-127-0-0-"), "a Windows node: %s", n)
	}
	require.Contains(t, errOut, "leaving out 3 Linux node(s)")

	code, _, errOut = runWmcon(t, "--demo", "logs", "-l", "node-role.kubernetes.io/master")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "matches only Linux nodes")

	code, _, errOut = runWmcon(t, "--demo", "logs", "n1", "-l", "a=b")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "not both")
}
