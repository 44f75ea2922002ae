package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// completions runs cobra's hidden completion command and returns the candidates (without descriptions)
// and the directive line.
func completions(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, out, errOut := runWmcon(t, append([]string{"__complete"}, args...)...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var names []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		names = append(names, name)
	}
	return names, lines[len(lines)-1]
}

// TestCompletionOfNodesFromTheCluster: node names come from the real API server, Windows first, without
// those already given, and never local files.
func TestCompletionOfNodesFromTheCluster(t *testing.T) {
	e := newNodeEnv(t, "cli-complete")
	e.node("cli-complete-lin", false)
	e.node("cli-complete-win", true)

	names, directive := completions(t, kubeconfigArgs(t, "reboot", "cli-complete")...)
	assert.Equal(t, []string{"cli-complete-win", "cli-complete-lin"}, names, "Windows first")
	assert.Equal(t, ":36", directive, "no file completion, order kept")

	names, _ = completions(t, kubeconfigArgs(t, "cordon", "cli-complete-win", "cli-complete")...)
	assert.Equal(t, []string{"cli-complete-lin"}, names, "a node already given is not offered again")

	names, _ = completions(t, kubeconfigArgs(t, "top", "cli-complete")...)
	assert.Equal(t, []string{"cli-complete-win", "cli-complete-lin"}, names, "top takes node names too")

	names, directive = completions(t, "--kubeconfig", t.TempDir()+"/missing", "triage", "")
	assert.Empty(t, names, "no cluster: nothing, and no local files")
	assert.Equal(t, ":4", directive)
}

func TestCompletionOfFlagValuesAndServices(t *testing.T) {
	names, _ := completions(t, "reboot", "--on-pdb", "")
	assert.Equal(t, []string{"abort", "wait", "disable-eviction"}, names)
	names, _ = completions(t, "logs", "n", "--via", "")
	assert.Equal(t, []string{"api", "ssh"}, names)
	names, _ = completions(t, "logs", "n", "--service", "")
	assert.Contains(t, names, "kubelet")
	assert.Contains(t, names, "events")
	names, _ = completions(t, "restart-service", "n", "")
	assert.Contains(t, names, "hybrid-overlay-node")
	assert.NotContains(t, names, "events", "only services can be restarted")
	names, _ = completions(t, "triage", "n", "-o", "")
	assert.Equal(t, []string{"text", "json"}, names)
	names, _ = completions(t, "top", "-o", "")
	assert.Equal(t, []string{"text", "json"}, names)
	names, _ = completions(t, "configure", "--render-services", "--platform", "")
	assert.Equal(t, []string{"AWS", "Azure", "GCP", "VSphere", "Nutanix", "BareMetal", "None"}, names)

	names, _ = completions(t, "--theme", "")
	assert.Equal(t, []string{"dark", "light", "high-contrast"}, names)
	names, _ = completions(t, "config", "view", "-o", "")
	assert.Equal(t, []string{"text", "yaml", "json"}, names)

	code, out, _ := runWmcon(t, "completion", "bash")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "bash completion V2 for wmcon")
}

// TestCompletionOfNodesOnTheDemo: --demo completes the demo's node names, Windows first, without starting
// it; the fresh demo has only Linux nodes.
func TestCompletionOfNodesOnTheDemo(t *testing.T) {
	names, directive := completions(t, "--demo", "reboot", "ip-127-0-0")
	require.NotEmpty(t, names)
	for _, n := range names {
		assert.Regexp(t, `^ip-127-0-0-\d+\.ec2\.internal$`, n, "only Windows nodes match this prefix")
	}
	assert.Equal(t, ":36", directive)

	all, _ := completions(t, "--demo", "logs", "")
	require.Greater(t, len(all), len(names))
	assert.Equal(t, names, all[:len(names)], "Windows nodes first")
	assert.NotContains(t, all[len(names):], names[0])

	fresh, _ := completions(t, "--demo=fresh", "triage", "")
	assert.Equal(t, all[len(names):], fresh, "the fresh demo has only its Linux nodes")
}
