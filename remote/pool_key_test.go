package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
)

// A pool made before the cluster had its key logs in with the key handed to it later (the guided setup
// installs cloud-private-key and configures a host in one run).
func TestPoolUsesAKeyGivenLater(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	p := newTestPool(t, newTestKey(t), nil) // another key: the host refuses it
	ctx := testCtx(t)
	_, err := clientFor(t, p, h).Hostname(ctx)
	require.Error(t, err, "the host authorises only its own key")

	p.UseKeyPEM(key.pem, "cloud-private-key")
	c, err := p.Client(Target{Node: "winworker-b", Addr: h.Addr()})
	require.NoError(t, err)
	name, err := c.Hostname(ctx)
	require.NoError(t, err)
	assert.NotEmpty(t, name)
}

// A pool given LoadKeyPEM asks for the key only when it first logs in, once, and logs in with it; a pool
// that is never used never asks (the console's start does not read cloud-private-key).
func TestPoolLoadsItsKeyOnFirstLogin(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	loads := 0
	load := func() ([]byte, string) { loads++; return key.pem, "cloud-private-key" }
	unused := newTestPool(t, testKey{}, func(c *Config) { c.Auth = Auth{LoadKeyPEM: load} })
	_, err := unused.Client(Target{Node: "winworker-a", Addr: h.Addr()})
	require.NoError(t, err)
	assert.Zero(t, loads, "a client that has not logged in has not asked for the key")

	p := newTestPool(t, testKey{}, func(c *Config) { c.Auth = Auth{LoadKeyPEM: load} })
	ctx := testCtx(t)
	for range 2 {
		c, err := p.Client(Target{Node: "winworker-a", Addr: h.Addr()})
		require.NoError(t, err)
		name, err := c.Hostname(ctx)
		require.NoError(t, err)
		assert.NotEmpty(t, name)
	}
	assert.Equal(t, 1, loads, "the key is read once, by the first login")
}

// A key handed over with UseKeyPEM before the first login wins over the one LoadKeyPEM would read.
func TestPoolKeyGivenBeforeFirstLoginWinsOverLoad(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	stale := newTestKey(t)
	loads := 0
	p := newTestPool(t, testKey{}, func(c *Config) {
		c.Auth = Auth{LoadKeyPEM: func() ([]byte, string) { loads++; return stale.pem, "cloud-private-key" }}
	})
	p.UseKeyPEM(key.pem, "cloud-private-key")
	name, err := clientFor(t, p, h).Hostname(testCtx(t))
	require.NoError(t, err)
	assert.NotEmpty(t, name)
	assert.Zero(t, loads)
}
