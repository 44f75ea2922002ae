package remote

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/sshd"
)

// bastionAndNode starts a real sshd (the bastion) and a simulated Windows host on 127.0.0.2, which the
// test reaches only through the bastion's direct-tcpip forwarding.
func bastionAndNode(t *testing.T) (*sshd.Server, *windows.Host, testKey) {
	t.Helper()
	s := sshd.Start(t)
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{Addr: "127.0.0.2:0", Hostname: "WIN-BEHIND"})
	return s, h, key
}

func TestJumpThroughRealSSHDToASimulatedHost(t *testing.T) {
	s, h, key := bastionAndNode(t)
	s.AuthorizeKey(t, key.signer.PublicKey()) // like the bastion Service: the same key opens both
	ctx := testCtx(t)
	hops, err := ParseJumpSpec(fmt.Sprintf("%s@127.0.0.1:%d", s.User, s.Port))
	require.NoError(t, err)
	p := newTestPool(t, key, func(c *Config) {
		c.Jumps = hops
		c.BastionHostKeys = NewKnownHostsStore(s.KnownHosts)
	})
	c := clientFor(t, p, h)
	name, err := c.Hostname(ctx)
	require.NoError(t, err, s.Log())
	assert.Equal(t, "WIN-BEHIND", name)
	assert.Contains(t, s.Log(), "direct-tcpip", "the connection went through the bastion")

	report, err := c.Upload(ctx, []Upload{{Remote: `C:\k\through-bastion.txt`, Data: []byte("hop")}}, UploadOptions{})
	require.NoError(t, err)
	assert.Len(t, report.Uploaded, 1)
	got, _ := h.ReadFile(`C:\k\through-bastion.txt`)
	assert.Equal(t, "hop", string(got))
}

func TestBastionHostKeyIsVerified(t *testing.T) {
	s, h, key := bastionAndNode(t)
	s.AuthorizeKey(t, key.signer.PublicKey())
	wrong := filepath.Join(t.TempDir(), "known_hosts")
	require.NoError(t, NewKnownHostsStore(wrong).Pin(testCtx(t), s.Addr, newSigner(t).PublicKey()))
	p := newTestPool(t, key, func(c *Config) {
		c.Jumps = []Hop{{User: s.User, Host: "127.0.0.1", Port: s.Port}}
		c.BastionHostKeys = NewKnownHostsStore(wrong)
	})
	_, err := clientFor(t, p, h).Hostname(testCtx(t))
	var mismatch *HostKeyMismatchError
	require.ErrorAs(t, err, &mismatch)
	assert.Equal(t, s.Addr, mismatch.Host)
	assert.Empty(t, h.Commands(), "nothing reached the node")
}

func TestUnreachableNodeBehindBastionNamesTheBastion(t *testing.T) {
	s := sshd.Start(t)
	key := newTestKey(t)
	s.AuthorizeKey(t, key.signer.PublicKey())
	l, err := net.Listen("tcp", "127.0.0.3:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	l.Close()
	p := newTestPool(t, key, func(c *Config) {
		c.Jumps = []Hop{{User: s.User, Host: "127.0.0.1", Port: s.Port}}
		c.BastionHostKeys = NewKnownHostsStore(s.KnownHosts)
	})
	c, _ := p.Client(Target{Node: "lost", Addr: closed})
	_, err = c.Hostname(testCtx(t))
	var unreachable *UnreachableError
	require.ErrorAs(t, err, &unreachable)
	assert.Equal(t, s.Addr, unreachable.Via)
	assert.Contains(t, err.Error(), "through bastion "+s.Addr)
}

func TestSSHConfigProxyJumpAndIdentityFile(t *testing.T) {
	s, h, key := bastionAndNode(t) // the bastion accepts only its own client key, named by IdentityFile
	_, simPort, _ := net.SplitHostPort(h.Addr())
	cfgPath := filepath.Join(t.TempDir(), "config")
	cfg := fmt.Sprintf(`Host jumpbox
  HostName 127.0.0.1
  Port %d
  User %s
  IdentityFile %s

Host 127.0.0.2
  ProxyJump jumpbox
`, s.Port, s.User, s.ClientKeyFile)
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))

	p := newTestPool(t, key, func(c *Config) {
		c.SSHConfigPath = cfgPath
		c.BastionHostKeys = NewKnownHostsStore(s.KnownHosts)
	})
	c, err := p.Client(Target{Node: "winworker-b", Addr: "127.0.0.2:" + simPort})
	require.NoError(t, err)
	name, err := c.Hostname(testCtx(t))
	require.NoError(t, err, s.Log())
	assert.Equal(t, "WIN-BEHIND", name)
}

func TestResolveSSHConfigChainsAndOverrides(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(cfgPath, []byte(`Host outer
  HostName 127.0.2.1
  User alice
Host inner
  HostName 127.0.2.2
  Port 2200
  ProxyJump outer
  IdentityFile ~/.ssh/inner_key
Host 127.0.1.*
  ProxyJump bob@inner:2201
  User Administrator
Host loop
  ProxyJump loop
`), 0o600))
	sc, err := LoadSSHConfig(cfgPath)
	require.NoError(t, err)
	got, err := ResolveSSHConfig(sc, "127.0.1.5")
	require.NoError(t, err)
	assert.Equal(t, "Administrator", got.User)
	require.Len(t, got.Jumps, 2)
	assert.Equal(t, "alice@127.0.2.1:22", got.Jumps[0].String())
	assert.Equal(t, "bob@127.0.2.2:2201", got.Jumps[1].String(), "values in the spec win over the alias's")
	assert.Equal(t, []string{"~/.ssh/inner_key"}, got.Jumps[1].IdentityFiles)

	_, err = ResolveSSHConfig(sc, "loop")
	assert.ErrorContains(t, err, "a loop?")

	missing, err := LoadSSHConfig(filepath.Join(t.TempDir(), "none"))
	require.NoError(t, err)
	got, err = ResolveSSHConfig(missing, "127.0.1.5")
	require.NoError(t, err)
	assert.Empty(t, got.Jumps)
}

func TestParseJumpSpec(t *testing.T) {
	hops, err := ParseJumpSpec("core@a.example:2222, b.example,[::1]:22")
	require.NoError(t, err)
	require.Len(t, hops, 3)
	assert.Equal(t, Hop{User: "core", Host: "a.example", Port: 2222}, hops[0])
	assert.Equal(t, "b.example:22", hops[1].String())
	assert.Equal(t, "::1", hops[2].Host)
	_, err = ParseJumpSpec("core@host:99999")
	assert.ErrorContains(t, err, "bad port")
	hops, err = ParseJumpSpec("none")
	require.NoError(t, err)
	assert.Empty(t, hops)
}

func TestSFTPWithTheRealSFTPServer(t *testing.T) {
	s := sshd.Start(t)
	ctx := testCtx(t)
	p, err := NewPool(Config{
		Auth:              Auth{KeyPEM: s.ClientKeyPEM},
		User:              s.User,
		HostKeys:          NewKnownHostsStore(s.KnownHosts),
		BastionHostKeys:   NewKnownHostsStore(s.KnownHosts),
		KeepaliveInterval: -1,
	})
	require.NoError(t, err)
	defer p.Close()
	c, err := p.Client(Target{Node: "linux", Addr: s.Addr})
	require.NoError(t, err)
	dir := filepath.Join(s.Dir, "payload", "nested")
	data := randomBytes(t, 1_500_000)
	old := []byte("previous")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.bin"), old, 0o600))
	report, err := c.Upload(ctx, []Upload{
		{Remote: filepath.Join(dir, "a.bin"), Data: data},
		{Remote: filepath.Join(s.Dir, "payload", "other", "b.txt"), Data: []byte("b")},
	}, UploadOptions{Force: true})
	require.NoError(t, err, s.Log())
	assert.Len(t, report.Uploaded, 2)
	got, err := os.ReadFile(filepath.Join(dir, "a.bin"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got), "the real sftp-server received the file and posix-rename replaced the old one")
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	assert.Empty(t, leftovers, "no temporary file left behind")

	var buf bytes.Buffer
	require.NoError(t, c.Download(ctx, filepath.Join(dir, "a.bin"), &buf, nil))
	assert.True(t, bytes.Equal(data, buf.Bytes()))
}

func TestRefusingBastionIsNamedAsTheBastion(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{Addr: "127.0.0.2:0", Hostname: "WIN-BEHIND"})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusing := l.Addr().String()
	l.Close()
	host, port, _ := net.SplitHostPort(refusing)
	portNum, _ := strconv.Atoi(port)
	p := newTestPool(t, key, func(c *Config) { c.Jumps = []Hop{{User: "core", Host: host, Port: portNum}} })
	_, err = clientFor(t, p, h).Hostname(testCtx(t))
	var unreachable *UnreachableError
	require.ErrorAs(t, err, &unreachable)
	assert.True(t, unreachable.Bastion)
	assert.Contains(t, err.Error(), "cannot reach the bastion "+refusing)
	assert.NotContains(t, err.Error(), "nodes usually need a bastion")
	assert.Empty(t, h.Commands(), "nothing reached the node")
}

func TestBastionRefusingTheKeyIsNamedAsTheBastion(t *testing.T) {
	s, h, key := bastionAndNode(t) // the bastion does not know the key
	p := newTestPool(t, key, func(c *Config) {
		c.Jumps = []Hop{{User: s.User, Host: "127.0.0.1", Port: s.Port}}
		c.BastionHostKeys = NewKnownHostsStore(s.KnownHosts)
	})
	_, err := clientFor(t, p, h).Hostname(testCtx(t))
	var auth *AuthError
	require.ErrorAs(t, err, &auth, s.Log())
	assert.Contains(t, err.Error(), "the bastion "+s.Addr+" refused key login for user "+s.User)
	assert.NotContains(t, err.Error(), "windows-user-data")
}

// FindJumps is asked for the bastion on the first connection, once, and the node is reached through what
// it found; a pool that reaches no host never asks (the console's start does not list Services).
func TestPoolFindsItsBastionOnFirstConnection(t *testing.T) {
	s, h, key := bastionAndNode(t)
	s.AuthorizeKey(t, key.signer.PublicKey())
	finds := 0
	find := func() ([]Hop, error) { finds++; return []Hop{{User: s.User, Host: "127.0.0.1", Port: s.Port}}, nil }
	edit := func(c *Config) { c.FindJumps = find; c.BastionHostKeys = NewKnownHostsStore(s.KnownHosts) }
	newTestPool(t, key, edit)
	assert.Zero(t, finds, "a pool that reached no host did not look for a bastion")

	p := newTestPool(t, key, edit)
	ctx := testCtx(t)
	for range 2 {
		c, err := p.Client(Target{Node: "winworker-a", Addr: h.Addr()})
		require.NoError(t, err)
		_, err = c.Hostname(ctx)
		require.NoError(t, err, s.Log())
	}
	assert.Equal(t, 1, finds, "the bastion is looked up once")
	assert.Contains(t, s.Log(), "direct-tcpip", "the node was reached through the bastion")
}

// bastionLogins counts the logins the bastion's sshd accepted.
func bastionLogins(s *sshd.Server) int { return strings.Count(s.Log(), "Accepted publickey") }

// Hosts reached at once through a bastion share one login to it (a channel each), and the bastion
// connection closes with the last host's.
func TestHostsBehindABastionShareOneBastionConnection(t *testing.T) {
	s := sshd.Start(t)
	key := newTestKey(t)
	s.AuthorizeKey(t, key.signer.PublicKey())
	p := newTestPool(t, key, func(c *Config) {
		c.Jumps = []Hop{{User: s.User, Host: "127.0.0.1", Port: s.Port}}
		c.BastionHostKeys = NewKnownHostsStore(s.KnownHosts)
	})
	ctx := testCtx(t)
	var clients []*Client
	for i := range 5 {
		h := startSim(t, key, windows.Options{Addr: fmt.Sprintf("127.0.0.%d:0", 2+i), Hostname: fmt.Sprintf("WIN-%d", i)})
		c, err := p.Client(Target{Node: fmt.Sprintf("winworker-%d", i), Addr: h.Addr()})
		require.NoError(t, err)
		clients = append(clients, c)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	for i, c := range clients {
		wg.Go(func() { _, errs[i] = c.Hostname(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err, s.Log())
	}
	assert.Equal(t, 1, bastionLogins(s), "five hosts, one login to the bastion:\n%s", s.Log())
	assert.Equal(t, len(clients), strings.Count(s.Log(), "server_request_direct_tcpip"), "a channel per host")

	for _, c := range clients {
		c.Close()
	}
	_, err := clients[0].Hostname(ctx)
	require.NoError(t, err, s.Log())
	assert.Equal(t, 2, bastionLogins(s), "the bastion connection closed with the last host's; the next host logs in again")
}

// A bastion connection that died is dialled again by the next host instead of failing it.
func TestDeadBastionConnectionIsDialledAgain(t *testing.T) {
	s, h, key := bastionAndNode(t)
	s.AuthorizeKey(t, key.signer.PublicKey())
	hops := []Hop{{User: s.User, Host: "127.0.0.1", Port: s.Port}}
	p := newTestPool(t, key, func(c *Config) {
		c.Jumps = hops
		c.BastionHostKeys = NewKnownHostsStore(s.KnownHosts)
	})
	ctx := testCtx(t)
	c := clientFor(t, p, h)
	_, err := c.Hostname(ctx)
	require.NoError(t, err, s.Log())

	slot := p.jumpSlot(jumpKey(hops))
	slot.mu.Lock()
	dying := slot.conn
	slot.mu.Unlock()
	require.NotNil(t, dying)
	dying.via[0].Close() // the link to the bastion drops
	select {
	case <-dying.dead:
	case <-ctx.Done():
		t.Fatal("the dead bastion connection was not noticed")
	}
	other := startSim(t, key, windows.Options{Addr: "127.0.0.3:0", Hostname: "WIN-OTHER"})
	c2, err := p.Client(Target{Node: "winworker-b", Addr: other.Addr()})
	require.NoError(t, err)
	name, err := c2.Hostname(ctx)
	require.NoError(t, err, s.Log())
	assert.Equal(t, "WIN-OTHER", name)
	assert.Equal(t, 2, bastionLogins(s))
}
