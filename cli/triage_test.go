package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/sim/demo"
)

func TestTriageCommandOnTheDemo(t *testing.T) {
	node := demo.NodeName("127.0.0.2")
	code, out, errOut := runWmcon(t, "--demo", "triage", node)
	require.Equal(t, 0, code, "a healthy demo node exits 0\n%s\n%s", out, errOut)
	assert.Contains(t, out, node+": 0 failing")
	assert.Contains(t, out, "ok    Service kubelet: running")
	assert.Contains(t, out, "ok    SSH to the host: the host answers over SSH")

	code, out, errOut = runWmcon(t, "--demo", "triage", node, "-o", "json")
	require.Equal(t, 0, code, errOut)
	var r diagnosis.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r), "the JSON report parses: %s", out)
	assert.Equal(t, node, r.Node)
	c, ok := r.Check("service:kubelet")
	require.True(t, ok)
	assert.Equal(t, diagnosis.CheckOK, c.Status)
}

// TestTriageFixesNameCommands: headless fixes (text and JSON) name the commands to run, never console
// keys; under --read-only a fix that changes something says it needs a run without it.
func TestTriageFixesNameCommands(t *testing.T) {
	node := demo.NodeName("127.0.0.3") // the demo's node whose kubelet stopped
	want := "→ start it: run wmcon restart-service " + node + " kubelet; if it stops again, read its log: run wmcon logs " + node + " --service kubelet"
	code, out, errOut := runWmcon(t, "--demo", "triage", node)
	require.Equal(t, ExitCheckFailed, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, want+"\n")
	assert.NotContains(t, out, "press ")

	code, out, errOut = runWmcon(t, "--demo", "--read-only", "triage", node)
	require.Equal(t, ExitCheckFailed, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, want+" (without --read-only: this session refuses changes)\n")
	assert.Contains(t, out, "→ read them in context: run wmcon logs "+node+" --service kubelet\n", "reading needs no note")

	code, out, errOut = runWmcon(t, "--demo", "triage", node, "-o", "json")
	require.Equal(t, ExitCheckFailed, code, errOut)
	var r diagnosis.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	c, ok := r.Check("service:kubelet")
	require.True(t, ok)
	assert.Equal(t, strings.TrimPrefix(want, "→ "), c.Fix)
	for _, c := range r.Checks {
		assert.NotContains(t, c.Fix, "press ", c.ID)
	}
}

func TestTriageCommandRestartsFirst(t *testing.T) {
	node := demo.NodeName("127.0.0.2")
	code, out, errOut := runWmcon(t, "--demo", "triage", node, "--restart", "windows_exporter")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, errOut, "[start] ✓ windows_exporter is running", "the restart's events go to stderr")
	assert.Contains(t, out, "ok    Service windows_exporter: running")

	code, _, errOut = runWmcon(t, "--demo", "--read-only", "triage", node, "--restart", "kubelet")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--read-only is set: refusing to restart kubelet")
}

func TestRestartServiceCommand(t *testing.T) {
	node := demo.NodeName("127.0.0.2")
	code, out, errOut := runWmcon(t, "--demo", "restart-service", node, "csi-proxy", "-o", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var last event.Event
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		require.NoError(t, json.Unmarshal([]byte(l), &last), "every line is a JSON event: %q", l)
	}
	assert.Equal(t, event.Succeeded, last.Outcome)
	assert.Equal(t, request.ActionRestartService, last.Action)

	code, _, errOut = runWmcon(t, "--demo", "restart-service", node, "notepad")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `"notepad" is not one of WMCO's services`)
}

func TestTriageCommandFailsOnAnUnreachableHost(t *testing.T) {
	e := newNodeEnv(t, "cli-triage")
	e.node("cli-triage-win", true) // its address has no host behind it

	code, out, errOut := runWmcon(t, kubeconfigArgs(t, "triage", "cli-triage-win")...)
	assert.Equal(t, ExitCheckFailed, code, "a failing check exits 4\n%s\n%s", out, errOut)
	// The test gives no SSH key, so the host is not even tried: the check says so rather than "cannot reach".
	assert.Contains(t, out, "FAIL  SSH to the host: cannot connect to 127.0.0.99:22 because of a problem on this machine")
	assert.Contains(t, errOut, "cli-triage-win:")

	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "triage", "no-such-node")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "node no-such-node not found")

	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "triage", "cli-triage-win", "-o", "yaml")...)
	assert.Equal(t, ExitUsage, code, "a bad flag value is a usage error")
	assert.Contains(t, errOut, `--output "yaml": use text or json`)
}

// TestTriageSeveralNodes: the reports in the order given, a summary naming the nodes with failing checks,
// exit 4; JSON is an array; an unknown node is named and the others are still checked.
func TestTriageSeveralNodes(t *testing.T) {
	healthy, sick := demo.NodeName("127.0.0.2"), demo.NodeName("127.0.0.3")
	code, out, errOut := runWmcon(t, "--demo", "triage", sick, healthy)
	require.Equal(t, ExitCheckFailed, code, "%s\n%s", out, errOut)
	assert.Less(t, strings.Index(out, sick+": "), strings.Index(out, healthy+": "), "in the order given:\n%s", out)
	assert.Contains(t, out, "2 nodes checked: failing checks on "+sick+"\n")

	code, out, errOut = runWmcon(t, "--demo", "triage", healthy, sick, "-o", "json")
	require.Equal(t, ExitCheckFailed, code, errOut)
	var reports []diagnosis.Report
	require.NoError(t, json.Unmarshal([]byte(out), &reports), out)
	require.Len(t, reports, 2)
	assert.Equal(t, healthy, reports[0].Node)
	assert.Equal(t, sick, reports[1].Node)

	code, out, errOut = runWmcon(t, "--demo", "triage", healthy, "no-such-node")
	assert.Equal(t, 1, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, healthy+": 0 failing")
	assert.Contains(t, errOut, "could not check no-such-node")
}
