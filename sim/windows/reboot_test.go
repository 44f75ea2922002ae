package windows

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wmcon/wmcon/config"
)

func TestRestartComputer(t *testing.T) {
	th := startHost(t, Options{Configured: true, Platform: "AWS", LoseMetadataRouteOnReboot: true})
	c := th.dial(t)
	require.True(t, th.HasMetadataRoute())
	addr, key := th.Addr(), th.HostKey()
	// A follow open on another session must be cut by the reboot.
	f := startFollow(t, c, `Get-Content -LiteralPath 'C:\var\log\kubelet\kubelet.log' -Wait`)

	firstBoot := th.BootID()
	th.StopService("kubelet")
	assert.Contains(t, run(t, c, "sc.exe start kubelet").stdout, "START_PENDING")
	assert.Equal(t, firstBoot, th.BootID(), "a service restart is not a boot")
	r := run(t, c, "Restart-Computer -Force")
	assert.Equal(t, result{}, r, "the command replies before the host goes down")

	eventually(t, "the host to go down", func() bool { return !th.Up() })
	select {
	case err := <-f.done:
		assert.Error(t, err, "the live connection was dropped")
	case <-time.After(testTimeout):
		t.Fatal("the connection survived the reboot")
	}
	if err := dialErr(th); err != nil {
		assert.True(t, isRefused(err), "connections are refused while down: %v", err)
	} else {
		assert.True(t, th.Up(), "a dial succeeded only because the host was already back")
	}

	eventually(t, "the host to come back", th.Up)
	assert.Equal(t, 1, th.Reboots())
	assert.NotEqual(t, firstBoot, th.BootID(), "each boot has its own bootID")
	assert.Equal(t, addr, th.Addr())
	assert.Equal(t, key.Marshal(), th.HostKey().Marshal())
	for _, ws := range config.Services {
		if ws.Platform == "" {
			assert.True(t, th.ServiceRunning(ws.Name), ws.Name)
		}
	}
	assert.False(t, th.HasMetadataRoute(), "EC2Launch lost the metadata route")

	c2 := th.dial(t)
	r = run(t, c2, `Get-NetRoute -DestinationPrefix '169.254.169.254/32' -ErrorAction SilentlyContinue`)
	assert.Empty(t, r.stdout)
	assert.Equal(t, " OK!\r\n", run(t, c2, "route add 169.254.169.254 mask 255.255.255.255 127.0.0.1").stdout)
	assert.True(t, th.HasMetadataRoute())

	log, err := th.ReadFile(`C:\var\log\kubelet\kubelet.log`)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(log), `"Kubelet version"`), "the log notes each start: boot, service restart, boot")
}

func TestRebootKeepsMetadataRouteByDefault(t *testing.T) {
	th := startHost(t, Options{Platform: "AWS"})
	th.Reboot()
	assert.False(t, th.Up())
	eventually(t, "the host to come back", th.Up)
	assert.True(t, th.HasMetadataRoute())
	assert.Equal(t, 1, th.Reboots())
}

func TestNeverReturn(t *testing.T) {
	th := startHost(t, Options{RebootDowntime: 50 * time.Millisecond})
	th.SetNeverReturn(true)
	th.Reboot()
	time.Sleep(300 * time.Millisecond) // six downtimes: a host that could come back would have
	assert.False(t, th.Up())
	assert.Equal(t, 0, th.Reboots())
	assert.Error(t, dialErr(th))
}

// Rename-Computer takes effect at the next boot: hostname and ipconfig /all give the old name until the
// restart, the new one after it; a name Windows does not allow, or the current one, is refused.
func TestRenameComputerTakesEffectAfterTheRestart(t *testing.T) {
	th := startHost(t, Options{Platform: "VSphere", Addr: "127.0.0.61:0", DNSSuffix: "winsim.test", RebootDowntime: 50 * time.Millisecond})
	c := th.dial(t)
	old := strings.TrimSpace(run(t, c, "hostname").stdout)
	require.Regexp(t, `^WIN-[0-9A-Z]{11}$`, old)

	r := run(t, c, "Rename-Computer -NewName 'winworker-abc12' -Force")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "WARNING: The changes will take effect after you restart the computer "+old+".\r\n", r.stdout)
	assert.Equal(t, old+"\r\n", run(t, c, "hostname").stdout, "not before the restart")
	assert.Contains(t, run(t, c, "ipconfig /all").stdout, "   Host Name . . . . . . . . . . . . : "+old+"\r\n")

	r = run(t, c, "Rename-Computer -NewName 'bad.name' -Force")
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "because the new name is not valid")

	th.Reboot()
	eventually(t, "the host to come back", th.Up)
	c = th.dial(t)
	assert.Equal(t, "winworker-abc12\r\n", run(t, c, "hostname").stdout)
	all := run(t, c, "ipconfig /all").stdout
	assert.Contains(t, all, "   Host Name . . . . . . . . . . . . : winworker-abc12\r\n")
	assert.Contains(t, all, "   Primary Dns Suffix  . . . . . . . : winsim.test\r\n")
	assert.NotContains(t, run(t, c, "ipconfig").stdout, "Host Name", "only /all shows the names")

	r = run(t, c, "Rename-Computer -NewName 'WINWORKER-ABC12' -Force")
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "the new name is the same as the current name")
}
