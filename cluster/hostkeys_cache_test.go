package cluster_test

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote"
)

// A pin the watcher's cache holds is used without a request: reaching every host of a large fleet sent one
// GET per node. A node cached without a pin is still read from the server before a first use is trusted.
func TestHostKeyLookupReadsPinsFromTheCache(t *testing.T) {
	ctx := context.Background()
	cachedKey, serverKey := newHostKey(t), newHostKey(t)
	node := windowsNode("win-cached", "127.0.0.9")
	node.Annotations = map[string]string{config.HostKeyAnnotation: base64.StdEncoding.EncodeToString(serverKey.Marshal())}
	kube := fake.NewClientset(node)
	cached := map[string]map[string]string{
		"win-cached": {config.HostKeyAnnotation: base64.StdEncoding.EncodeToString(cachedKey.Marshal())},
	}
	store := &cluster.HostKeyStore{Kube: kube, Local: remote.NewKnownHostsStore(filepath.Join(t.TempDir(), "known_hosts")),
		NodeFor: func(addr string) (string, bool) { return "win-cached", addr == "127.0.0.9" },
		NodeAnnotations: func(n string) (map[string]string, bool) {
			a, ok := cached[n]
			return a, ok
		}}

	got, found, err := store.Lookup(ctx, "127.0.0.9:22")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, cachedKey.Marshal(), got.Marshal(), "the cached pin is used")
	assert.Empty(t, kube.Actions(), "no request for a pin the cache holds")

	cached["win-cached"] = map[string]string{} // cached, but without a pin: the server decides
	got, found, err = store.Lookup(ctx, "127.0.0.9:22")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, serverKey.Marshal(), got.Marshal(), "a node cached without a pin is read from the server")
	require.NotEmpty(t, kube.Actions())
	assert.Equal(t, "get", kube.Actions()[0].GetVerb())
}
