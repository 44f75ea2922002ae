package remote

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/sim/windows"
)

// testKey is a client key: its PEM (what the cloud-private-key secret holds) and signer.
type testKey struct {
	pem    []byte
	signer ssh.Signer
}

func newTestKey(t testing.TB) testKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "wmcon-test")
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	return testKey{pem: pem.EncodeToMemory(block), signer: signer}
}

// startSim starts a simulated Windows host that authorises key, stopped when the test ends.
func startSim(t testing.TB, key testKey, opts windows.Options) *windows.Host {
	t.Helper()
	opts.AuthorizedKeys = append(opts.AuthorizedKeys, key.signer.PublicKey())
	if opts.RebootDowntime == 0 {
		opts.RebootDowntime = 200 * time.Millisecond
	}
	if opts.LogInterval == 0 {
		opts.LogInterval = time.Hour // tests write logs themselves
	}
	if opts.ServicePending == 0 {
		opts.ServicePending = 20 * time.Millisecond
	}
	h, err := windows.Start(opts)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	return h
}

// newTestPool makes a pool that logs in with key and pins host keys in a temporary known_hosts.
func newTestPool(t testing.TB, key testKey, edit func(*Config)) *Pool {
	t.Helper()
	dir := t.TempDir()
	cfg := Config{
		Auth:              Auth{KeyPEM: key.pem, KeyPEMName: "cloud-private-key"},
		HostKeys:          NewKnownHostsStore(filepath.Join(dir, "known_hosts")),
		BastionHostKeys:   NewKnownHostsStore(filepath.Join(dir, "bastion_known_hosts")),
		DialTimeout:       5 * time.Second,
		KeepaliveInterval: -1,
		CommandTimeout:    20 * time.Second,
	}
	if edit != nil {
		edit(&cfg)
	}
	p, err := NewPool(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func clientFor(t testing.TB, p *Pool, h *windows.Host) *Client {
	t.Helper()
	c, err := p.Client(Target{Node: "winworker-a", Addr: h.Addr()})
	require.NoError(t, err)
	return c
}

// testCtx bounds a test so a broken client fails instead of hanging.
func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// simClient is the common setup: one simulated host, one pool, one client.
func simClient(t testing.TB, opts windows.Options, edit func(*Config)) (*windows.Host, *Client) {
	t.Helper()
	key := newTestKey(t)
	h := startSim(t, key, opts)
	p := newTestPool(t, key, edit)
	return h, clientFor(t, p, h)
}

func countCommand(cmds []string, want string) int {
	n := 0
	for _, c := range cmds {
		if c == want {
			n++
		}
	}
	return n
}
