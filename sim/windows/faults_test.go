package windows

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

func TestOnlyAuthorizedPublicKeysLogIn(t *testing.T) {
	th := startHost(t, Options{})
	cfg := th.clientConfig()
	cfg.Auth = []ssh.AuthMethod{ssh.Password("Passw0rd!")}
	_, err := ssh.Dial("tcp", th.Addr(), cfg)
	assert.Error(t, err, "password authentication is refused")

	cfg = th.clientConfig()
	cfg.Auth = []ssh.AuthMethod{ssh.PublicKeys(newSigner(t))}
	_, err = ssh.Dial("tcp", th.Addr(), cfg)
	assert.Error(t, err, "an unknown key is refused")

	cfg = th.clientConfig()
	cfg.User = "core"
	_, err = ssh.Dial("tcp", th.Addr(), cfg)
	assert.Error(t, err, "another user is refused")

	cfg = th.clientConfig()
	cfg.User = "administrator"
	c, err := ssh.Dial("tcp", th.Addr(), cfg)
	require.NoError(t, err, "Windows user names are case-insensitive")
	c.Close()
}

func TestKeepaliveAnswered(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	_, _, err := c.SendRequest("keepalive@openssh.com", true, nil)
	assert.NoError(t, err)
	assert.Equal(t, 0, run(t, c, "hostname").code, "the connection still works")
}

func TestManySessionsPerConnection(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	done := make(chan result, 8)
	for range 8 {
		go func() {
			r, _ := tryRun(c, "hostname")
			done <- r
		}()
	}
	for range 8 {
		assert.Equal(t, th.Hostname()+"\r\n", (<-done).stdout)
	}
	assert.Len(t, th.Commands(), 8)
}

func TestRefusesNonLoopbackAddress(t *testing.T) {
	_, err := Start(Options{Addr: "0.0.0.0:22"}) // every interface: refused before anything is bound
	assert.ErrorContains(t, err, "not a loopback address")
}

func TestSetLatency(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	th.SetLatency(60 * time.Millisecond)
	start := time.Now()
	assert.Equal(t, 0, run(t, c, "hostname").code)
	assert.GreaterOrEqual(t, time.Since(start), 60*time.Millisecond, "the latency is added before the reply")
}

func TestDropConnections(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	th.AppendLog(`C:\var\log\x.log`, "a")
	f := startFollow(t, c, `Get-Content -LiteralPath 'C:\var\log\x.log' -Wait`)
	assert.Equal(t, "a", f.next(t))
	th.DropConnections()
	select {
	case err := <-f.done:
		assert.Error(t, err)
	case <-time.After(testTimeout):
		t.Fatal("the connection was not dropped")
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Wait() }()
	select {
	case <-closed:
	case <-time.After(testTimeout):
		t.Fatal("the client connection did not end")
	}
	_, err := tryRun(c, "hostname")
	assert.Error(t, err, "the old client is dead")
	assert.Equal(t, 0, run(t, th.dial(t), "hostname").code, "new connections work")
}

func TestDropAfterBytesCutsOneSession(t *testing.T) {
	th := startHost(t, Options{})
	th.AppendLog(`C:\var\log\big.log`, strings.Repeat("0123456789\n", 200))
	th.DropAfterBytes(100)
	c := th.dial(t)
	r, err := tryRun(c, `Get-Content -LiteralPath 'C:\var\log\big.log'`)
	assert.Error(t, err, "no exit status arrives")
	assert.LessOrEqual(t, len(r.stdout), 100)

	r = run(t, th.dial(t), `@(Get-Content -LiteralPath 'C:\var\log\big.log').Count`)
	assert.Equal(t, "201\r\n", r.stdout, "only the next session was cut")
}

func TestDropAfterBytesMidTransfer(t *testing.T) {
	th := startHost(t, Options{})
	payload := bytes.Repeat([]byte("x"), 256*1024)
	require.NoError(t, th.WriteFile(`C:\k\big.exe`, payload))
	th.DropAfterBytes(64 * 1024)
	sc, err := sftp.NewClient(th.dial(t))
	require.NoError(t, err)
	defer sc.Close()
	f, err := sc.Open("/C:/k/big.exe")
	require.NoError(t, err)
	got, err := io.ReadAll(f)
	assert.Error(t, err, "the transfer was cut")
	assert.Less(t, len(got), len(payload))
}

func TestSetHostKey(t *testing.T) {
	th := startHost(t, Options{})
	old := th.clientConfig()
	th.SetHostKey(newSigner(t))
	_, err := ssh.Dial("tcp", th.Addr(), old)
	assert.ErrorContains(t, err, "host key mismatch")
	assert.Equal(t, 0, run(t, th.dial(t), "hostname").code, "the new key is the one HostKey reports")
}

func TestSetRefuseAuth(t *testing.T) {
	th := startHost(t, Options{})
	th.SetRefuseAuth(true)
	assert.ErrorContains(t, dialErr(th), "unable to authenticate")
	th.SetRefuseAuth(false)
	assert.NoError(t, dialErr(th))
}

func TestCloseIsIdempotentAndStopsListening(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	c := th.dial(t)
	require.NoError(t, th.Close())
	require.NoError(t, th.Close())
	assert.False(t, th.Up())
	assert.Error(t, dialErr(th))
	_, err := tryRun(c, "hostname")
	assert.Error(t, err)
}
