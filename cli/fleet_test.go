package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMirrorsRenderFromTheSharedFixture renders testdata/mirrorsets (a disconnected cluster's mirror sets)
// without a cluster: one hosts.toml per source registry, written 0600.
func TestMirrorsRenderFromTheSharedFixture(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "registries")
	code, out, stderr := runWmcon(t, "mirrors", "render", "-f", "../testdata/mirrorsets/disconnected.yaml", "-o", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, filepath.Join(dir, "quay.io", "hosts.toml")+"\t1 mirrors")
	assert.Contains(t, out, filepath.Join(dir, "registry.redhat.io", "hosts.toml")+"\t2 mirrors")
	b, err := os.ReadFile(filepath.Join(dir, "registry.redhat.io", "hosts.toml"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "backup-mirror.example.internal")
	st, err := os.Stat(filepath.Join(dir, "quay.io", "hosts.toml"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

// On the demo, whose hosts show drift, the status commands exit 4 (a check found a problem) and name the
// nodes out of step; the command that fixes it is in the message.
func TestDemoStatusCommandsExitFourOnDrift(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "mirrors", "status")
	assert.Equal(t, ExitCheckFailed, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "ip-127-0-0-4.ec2.internal")
	assert.Contains(t, errOut, "1 of 5 nodes are not in step: run wmcon mirrors apply")
	code, out, errOut = runWmcon(t, "--demo", "proxy", "status", "-o", "json")
	assert.Equal(t, ExitCheckFailed, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, `"node":"ip-127-0-0-5.ec2.internal"`)
	assert.Contains(t, errOut, "differ from the cluster's proxy: run wmcon proxy sync")
}

// The demo's standalone node (configured by wmcon under an older operator) is upgraded by wmcon itself
// through the configuration engine: stop services, new payload, Ready heartbeat from the new kubelet.
func TestDemoUpgradeRunUpgradesTheStandaloneNode(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "upgrade", "run")
	require.Equal(t, ExitOK, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "ip-127-0-0-8.ec2.internal SUCCEEDED upgraded to 11.0.1")
	assert.Contains(t, out, "is Ready on a heartbeat of its restarted kubelet")
	assert.Contains(t, out, "annotated windowsmachineconfig.openshift.io/version=11.0.1")
	assert.NotContains(t, out, "cordoning the node while its host is reconfigured", "the upgrade cordoned it already")
	assert.Contains(t, out, "upgrade: 1 succeeded")
}
