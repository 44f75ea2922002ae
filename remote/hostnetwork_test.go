package remote

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
)

// The network configuration's commands against a simulated host over SSH: the hybrid overlay network
// hybrid-overlay-node made, the VIP endpoint created and attached, its address found by its MAC.
func TestHostNetworkCommands(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{Configured: true, Addr: "127.0.0.47:0"})
	h.RemoveHNSEndpoint("VIPEndpoint") // before WMCO's network step
	require.Eventually(t, func() bool { return h.ServiceRunning("hybrid-overlay-node") }, 10*time.Second, 10*time.Millisecond)
	c := clientFor(t, newTestPool(t, key, nil), h)
	ctx := context.Background()

	n, ok, err := c.HNSNetwork(ctx, windows.HNSModule, "OVNKubernetesHybridOverlayNetwork")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "Overlay", n.Type)
	assert.Equal(t, h.HybridOverlaySubnet(), n.Subnet)
	assert.Equal(t, "127.0.0.47", n.ManagementIP)
	_, ok, err = c.HNSNetwork(ctx, windows.HNSModule, "no-such-network")
	require.NoError(t, err)
	assert.False(t, ok)

	_, ok, err = c.HNSEndpoint(ctx, windows.HNSModule, "VIPEndpoint")
	require.NoError(t, err)
	assert.False(t, ok)
	ep, err := c.NewHostEndpoint(ctx, windows.HNSModule, n.ID, "VIPEndpoint")
	require.NoError(t, err)
	_, ok, err = c.InterfaceAddress(ctx, ep.MAC)
	require.NoError(t, err)
	assert.False(t, ok, "not attached yet")
	require.NoError(t, c.AttachHostEndpoint(ctx, windows.HNSModule, ep.ID))
	ip, ok, err := c.InterfaceAddress(ctx, ep.MAC)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, ep.IP, ip)
	found, ok, err := c.HNSEndpoint(ctx, windows.HNSModule, "VIPEndpoint")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, ep, found)
}

// Pre-scripts run as the contract writes them; one run for its effect is refused under --read-only, and a
// failing one names itself.
func TestPreScriptsAndDefender(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{Platform: "AWS", Addr: "127.0.0.48:0"})
	c := clientFor(t, newTestPool(t, key, nil), h)
	ctx := context.Background()
	v, err := c.PreScriptValue(ctx, "Invoke-RestMethod -UseBasicParsing -Uri http://169.254.169.254/latest/meta-data/local-hostname")
	require.NoError(t, err)
	assert.Equal(t, "ip-127-0-0-48.ec2.internal", v)
	_, err = c.PreScriptValue(ctx, "Get-Nothing")
	assert.ErrorContains(t, err, `pre-script "Get-Nothing"`)

	running, err := c.DefenderRunning(ctx)
	require.NoError(t, err)
	assert.True(t, running)
	require.NoError(t, c.AddDefenderExclusion(ctx, `C:\k\containerd\containerd.exe`))
	assert.Equal(t, []string{`C:\k\containerd\containerd.exe`}, h.DefenderExclusions())

	ro := clientFor(t, newTestPool(t, key, func(cfg *Config) { cfg.ReadOnly = true }), h)
	var roErr *ReadOnlyError
	_, err = ro.RunPreScript(ctx, "hostname")
	assert.ErrorAs(t, err, &roErr)
	assert.ErrorAs(t, ro.AddDefenderExclusion(ctx, `C:\x.exe`), &roErr)
	assert.ErrorAs(t, ro.AttachHostEndpoint(ctx, windows.HNSModule, "x"), &roErr)

	gcp := startSim(t, key, windows.Options{Platform: "GCP", Hostname: "WIN-G1", NoDefender: true})
	gc := clientFor(t, newTestPool(t, key, nil), gcp)
	name, err := gc.GCPInstanceHostname(ctx)
	require.NoError(t, err)
	assert.Equal(t, "win-g1.c.winsim-project.internal", name)
	running, err = gc.DefenderRunning(ctx)
	require.NoError(t, err)
	assert.False(t, running)
}

func TestReadFile(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	c := clientFor(t, newTestPool(t, key, nil), h)
	ctx := context.Background()
	require.NoError(t, h.WriteFile(`C:\k\a.conf`, []byte("hello")))
	b, ok, err := c.ReadFile(ctx, `C:\k\a.conf`, 100)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "hello", string(b))
	_, ok, err = c.ReadFile(ctx, `C:\k\none.conf`, 100)
	require.NoError(t, err)
	assert.False(t, ok)
	_, _, err = c.ReadFile(ctx, `C:\k\a.conf`, 3)
	assert.ErrorContains(t, err, "larger than 3 bytes")
}

// The computer's new name holds from the next restart on; vSphere's node name is the host name with the
// primary DNS suffix, as ipconfig /all shows them (the bare name without a suffix).
func TestRenameComputerAndFullyQualifiedHostname(t *testing.T) {
	key := newTestKey(t)
	ctx := testCtx(t)
	h := startSim(t, key, windows.Options{Platform: "VSphere", Hostname: "WIN-V1", DNSSuffix: "winsim.test", RebootDowntime: 50 * time.Millisecond})
	c := clientFor(t, newTestPool(t, key, nil), h)
	fqdn, err := c.FullyQualifiedHostname(ctx)
	require.NoError(t, err)
	assert.Equal(t, "WIN-V1.winsim.test", fqdn)

	require.NoError(t, c.RenameComputer(ctx, "winworker-v1"))
	name, err := c.Hostname(ctx)
	require.NoError(t, err)
	assert.Equal(t, "WIN-V1", name, "until the restart")
	assert.ErrorContains(t, c.RenameComputer(ctx, "not a name"), "the new name is not valid")
	require.NoError(t, c.Reboot(ctx, RebootOptions{PollInterval: 20 * time.Millisecond}))
	fqdn, err = c.FullyQualifiedHostname(ctx)
	require.NoError(t, err)
	assert.Equal(t, "winworker-v1.winsim.test", fqdn)

	bare := startSim(t, key, windows.Options{Platform: "VSphere", Hostname: "WIN-V2"})
	fqdn, err = clientFor(t, newTestPool(t, key, nil), bare).FullyQualifiedHostname(ctx)
	require.NoError(t, err)
	assert.Equal(t, "WIN-V2", fqdn)
}
