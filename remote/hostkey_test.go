package remote

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/sim/windows"
)

func newSigner(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	s, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	return s
}

func TestKnownHostsStorePinLookupForget(t *testing.T) {
	ctx := context.Background()
	s := NewKnownHostsStore(filepath.Join(t.TempDir(), "sub", "known_hosts"))
	_, found, err := s.Lookup(ctx, "127.0.0.5:22")
	require.NoError(t, err)
	assert.False(t, found, "a missing file pins nothing")

	a, b := newSigner(t).PublicKey(), newSigner(t).PublicKey()
	require.NoError(t, s.Pin(ctx, "127.0.0.5:22", a))
	require.NoError(t, s.Pin(ctx, "127.0.0.2:2222", b))
	got, found, err := s.Lookup(ctx, "127.0.0.5:22")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, a.Marshal(), got.Marshal())
	got, found, _ = s.Lookup(ctx, "127.0.0.2:2222")
	require.True(t, found)
	assert.Equal(t, b.Marshal(), got.Marshal())
	_, found, _ = s.Lookup(ctx, "127.0.0.2:22")
	assert.False(t, found, "the port is part of the pin")

	require.NoError(t, s.Forget(ctx, "127.0.0.5:22"))
	_, found, _ = s.Lookup(ctx, "127.0.0.5:22")
	assert.False(t, found)
	_, found, _ = s.Lookup(ctx, "127.0.0.2:2222")
	assert.True(t, found, "forgetting one host keeps the others")
}

func TestHostKeyIsPinnedOnFirstUseAndAChangeIsRefused(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	p := newTestPool(t, key, nil)
	c := clientFor(t, p, h)
	ctx := testCtx(t)
	_, err := c.Hostname(ctx)
	require.NoError(t, err)
	pinned, found, err := p.cfg.HostKeys.Lookup(ctx, h.Addr())
	require.NoError(t, err)
	require.True(t, found, "first use pins the key")
	assert.Equal(t, h.HostKey().Marshal(), pinned.Marshal())

	attacker := newSigner(t)
	h.SetHostKey(attacker)
	h.DropConnections()
	_, err = c.Hostname(ctx)
	var mismatch *HostKeyMismatchError
	require.ErrorAs(t, err, &mismatch)
	assert.Equal(t, h.Addr(), mismatch.Host)
	assert.Equal(t, ssh.FingerprintSHA256(pinned), mismatch.Expected)
	assert.Equal(t, ssh.FingerprintSHA256(attacker.PublicKey()), mismatch.Got)
	assert.Contains(t, err.Error(), "wmcon hostkey forget winworker-a")

	// A fresh pool with the same store refuses it too: the pin is persistent.
	p2, err := NewPool(p.cfg)
	require.NoError(t, err)
	defer p2.Close()
	c2, _ := p2.Client(Target{Node: "winworker-a", Addr: h.Addr()})
	_, err = c2.Hostname(ctx)
	require.ErrorAs(t, err, &mismatch)
}

func TestNoHostKeyStoreIsRefused(t *testing.T) {
	_, err := NewPool(Config{Auth: Auth{KeyPEM: newTestKey(t).pem}})
	assert.ErrorContains(t, err, "host key")
}

// TestPinsNeverDependOnTheWorkingDirectory: with HOME unset the pin file is still an absolute path (the
// account's home), a relative known_hosts path is refused rather than written where wmcon happens to run,
// and a host whose pin cannot be kept is not connected to.
func TestPinsNeverDependOnTheWorkingDirectory(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "relative/config")
	p, err := DefaultKnownHostsPath()
	if err == nil {
		assert.True(t, filepath.IsAbs(p), "the default pin file %q is absolute", p)
	} else {
		assert.ErrorContains(t, err, "HOME")
	}

	ctx := context.Background()
	rel := NewKnownHostsStore(filepath.Join(".config", "wmcon", "known_hosts"))
	err = rel.Pin(ctx, "127.0.0.5:22", newSigner(t).PublicKey())
	var noPin *NoPinStoreError
	require.ErrorAs(t, err, &noPin, "a relative pin file is refused")
	assert.ErrorContains(t, err, "--known-hosts")
	_, statErr := os.Stat(".config")
	assert.True(t, os.IsNotExist(statErr), "nothing was written under the working directory")

	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	pool := newTestPool(t, key, func(c *Config) {
		c.HostKeys = &KnownHostsStore{Unavailable: errors.New("no home directory")}
	})
	_, err = clientFor(t, pool, h).Hostname(testCtx(t))
	require.ErrorAs(t, err, &noPin, "no connection to a host whose key cannot be pinned")
	assert.ErrorContains(t, err, "no home directory")
}
