package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/reboot"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/demo"
)

func TestRebootCommandRefusesBadNodes(t *testing.T) {
	e := newNodeEnv(t, "cli-reboot-bad")
	e.node("cli-reboot-lin", false)
	e.node("cli-reboot-win", true)
	audit := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv(actions.AuditEnv, audit)

	code, _, errOut := runWmcon(t, kubeconfigArgs(t, "reboot", "cli-reboot-lin")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "cli-reboot-lin is not a Windows node: wmcon reboots Windows nodes over SSH only")

	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "reboot", "cli-reboot-win", "no-such-node")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `node "no-such-node" not found`)
	assert.False(t, e.cordoned("cli-reboot-win"), "a bad node in the list refuses the whole batch")

	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "reboot", "cli-reboot-win", "--max-unavailable", "0")...)
	assert.Equal(t, ExitUsage, code, "a bad flag value is a usage error")
	assert.Contains(t, errOut, `invalid argument "0" for "--max-unavailable" flag: 0 is below 1`)
}

func TestRebootCommandOnTheDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("reboots a simulated host (several seconds)")
	}
	audit := filepath.Join(t.TempDir(), "state", "audit.log")
	t.Setenv(actions.AuditEnv, audit)
	node := demo.NodeName("127.0.0.2")
	code, out, errOut := runWmcon(t, "--demo", "reboot", node, "-o", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var steps []string
	var last event.Event
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		require.NoError(t, json.Unmarshal([]byte(l), &last), "every line is a JSON event: %q", l)
		if last.Kind == event.StepStarted {
			steps = append(steps, last.Step)
		}
	}
	assert.Equal(t, reboot.RebootSteps, steps)
	assert.Equal(t, event.Succeeded, last.Outcome)
	assert.Contains(t, out, `"message":"added 169.254.169.254/32 via`, "the demo's AWS host lost its metadata route")

	_, err := os.Stat(audit)
	assert.ErrorIs(t, err, os.ErrNotExist, "the demo audits into its own private log, never the user's")
}

// TestRebootFlagsDefaultToTheRequests: wmcon reboot's flags show the defaults the reboot request fills in
// (and audits) when none is given; they are written once (package config).
func TestRebootFlagsDefaultToTheRequests(t *testing.T) {
	def := request.Reboot{}.WithDefaults()
	fs := newRebootCommand(&globalOptions{}).Flags()
	for flag, want := range map[string]string{"down-timeout": def.DownTimeout.String(), "up-timeout": def.UpTimeout.String(),
		"ready-timeout": def.ReadyTimeout.String(), "max-unavailable": strconv.Itoa(def.MaxUnavailable)} {
		assert.Equal(t, want, fs.Lookup(flag).DefValue, flag)
	}
	assert.Equal(t, config.RebootReadyTimeout, def.ReadyTimeout)
}
