package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/remote/winsim"
)

// A pool made before the cluster had its key logs in with the key handed to it later (the guided setup
// installs cloud-private-key and configures a host in one run).
func TestPoolUsesAKeyGivenLater(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, winsim.Options{})
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
