package session

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

func TestPoolResolverTargets(t *testing.T) {
	users := func(addr string) (string, bool) { return "byoh-admin", addr == "127.0.0.9" }
	r := &PoolResolver{Platform: "Azure", Users: users}

	got, err := r.Target(model.NodeInfo{Name: "win-a", Windows: true, InternalIP: "127.0.0.5", InternalDNS: "win-a.internal"})
	require.NoError(t, err)
	assert.Equal(t, remote.Target{Node: "win-a", Addr: "127.0.0.5", Platform: "Azure"}, got,
		"a bare address lets ~/.ssh/config choose the port; the pool defaults to 22")

	got, err = r.Target(model.NodeInfo{Name: "byoh", Windows: true, BYOH: true, InternalIP: "127.0.0.9"})
	require.NoError(t, err)
	assert.Equal(t, "byoh-admin", got.User, "a BYOH node logs in as its windows-instances user")

	got, err = r.Target(model.NodeInfo{Name: "dns-only", Windows: true, InternalDNS: "win-b.internal"})
	require.NoError(t, err)
	assert.Equal(t, "win-b.internal", got.Addr)

	r.Port, r.Addrs = 2222, map[string]string{"sim": "127.0.0.3:40001"}
	got, _ = r.Target(model.NodeInfo{Name: "win-a", Windows: true, InternalIP: "127.0.0.5"})
	assert.Equal(t, "127.0.0.5:2222", got.Addr)
	got, _ = r.Target(model.NodeInfo{Name: "sim", Windows: true, InternalIP: "127.0.0.6"})
	assert.Equal(t, "127.0.0.3:40001", got.Addr, "an override (the demo's simulated hosts) wins")

	_, err = r.Target(model.NodeInfo{Name: "linux-1", InternalIP: "127.0.0.7"})
	assert.ErrorContains(t, err, "linux-1 is not a Windows node")
	_, err = r.Target(model.NodeInfo{Name: "no-addr", Windows: true})
	assert.ErrorContains(t, err, "has no InternalIP or InternalDNS")
}
