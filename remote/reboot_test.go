package remote

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/windows"
)

func fastReboot() RebootOptions {
	return RebootOptions{DownTimeout: 10 * time.Second, UpTimeout: 10 * time.Second, PollInterval: 20 * time.Millisecond}
}

func TestRebootWaitsForTheHostToGoDownAndComeBack(t *testing.T) {
	h, c := simClient(t, windows.Options{Hostname: "WIN-RB"}, nil)
	ctx := testCtx(t)
	_, err := c.Hostname(ctx)
	require.NoError(t, err)
	var mu sync.Mutex
	var phases []RebootPhase
	opts := fastReboot()
	opts.Progress = func(p RebootProgress) {
		mu.Lock()
		defer mu.Unlock()
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
	}
	require.NoError(t, c.Reboot(ctx, opts))
	assert.Equal(t, 1, h.Reboots())
	assert.True(t, h.Up())
	assert.Equal(t, RebootSent, phases[0])
	assert.Equal(t, RebootDown, phases[1])
	assert.Equal(t, RebootUp, phases[len(phases)-1])
	name, err := c.Hostname(ctx)
	require.NoError(t, err, "the client works after the reboot")
	assert.Equal(t, "WIN-RB", name)
	assert.EqualValues(t, 2, c.Stats().Dials)
}

func TestRebootOfAHostThatNeverComesBack(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	h.SetNeverReturn(true)
	opts := fastReboot()
	opts.UpTimeout = 500 * time.Millisecond
	err := c.Reboot(ctx, opts)
	var never *HostNeverCameBackError
	require.ErrorAs(t, err, &never)
	assert.Equal(t, "winworker-a", never.Host)
	assert.Contains(t, err.Error(), "did not come back within 500ms")
	assert.False(t, h.Up())
}

func TestRebootRefusesAHostThatCameBackWithAnotherKey(t *testing.T) {
	h, c := simClient(t, windows.Options{RebootDowntime: 300 * time.Millisecond}, nil)
	ctx := testCtx(t)
	_, err := c.Hostname(ctx)
	require.NoError(t, err)
	h.SetHostKey(newSigner(t)) // takes effect for connections after the reboot
	err = c.Reboot(ctx, fastReboot())
	var mismatch *HostKeyMismatchError
	require.ErrorAs(t, err, &mismatch)
}

func TestHostHelpers(t *testing.T) {
	h, c := simClient(t, windows.Options{Platform: "AWS", Gateway: "127.0.32.1", LoseMetadataRouteOnReboot: true}, nil)
	ctx := testCtx(t)
	gw, err := c.Gateway(ctx)
	require.NoError(t, err)
	assert.Equal(t, "127.0.32.1", gw)

	require.NoError(t, c.Reboot(ctx, fastReboot()))
	require.False(t, h.HasMetadataRoute())
	has, err := c.HasMetadataRoute(ctx)
	require.NoError(t, err)
	assert.False(t, has)
	added, err := c.EnsureMetadataRoute(ctx)
	require.NoError(t, err)
	assert.True(t, added)
	assert.True(t, h.HasMetadataRoute())
	added, err = c.EnsureMetadataRoute(ctx)
	require.NoError(t, err)
	assert.False(t, added, "present: nothing to do")

	require.NoError(t, h.WriteFile(`C:\k\svc.exe`, []byte("MZ")))
	require.NoError(t, c.CreateService(ctx, ServiceSpec{Name: "svc", BinPath: `C:\k\svc.exe`}))
	require.NoError(t, c.StartService(ctx, "svc"))
	events, err := c.ServiceEvents(ctx, 5)
	require.NoError(t, err)
	require.NotEmpty(t, events)
	assert.Contains(t, events[0].Message, "svc service entered the running state")
	assert.False(t, events[0].Time.IsZero())
}

func TestParseGatewayFromIPConfig(t *testing.T) {
	out := "Windows IP Configuration\r\n\r\nEthernet adapter Ethernet:\r\n\r\n" +
		"   Connection-specific DNS Suffix  . : ec2.internal\r\n" +
		"   IPv4 Address. . . . . . . . . . . : 127.0.32.7\r\n" +
		"   Default Gateway . . . . . . . . . : ::1\r\n" +
		"                                       127.0.32.1\r\n"
	assert.Equal(t, "127.0.32.1", parseGateway(out))
	assert.Equal(t, "", parseGateway("   Default Gateway . . . . . . . . . : \r\n"))
}

// TestRebootDefaultsAreTheOnePlace: a reboot given no waits takes the graceful reboot's defaults
// (package config), the ones the reboot request and wmcon reboot's flags show.
func TestRebootDefaultsAreTheOnePlace(t *testing.T) {
	var o RebootOptions
	o.applyDefaults()
	assert.Equal(t, config.RebootDownTimeout, o.DownTimeout)
	assert.Equal(t, config.RebootUpTimeout, o.UpTimeout)
}
