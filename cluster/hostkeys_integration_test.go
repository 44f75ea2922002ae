package cluster_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote"
)

func newHostKey(t *testing.T) ssh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	key, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	return key
}

func TestHostKeysArePinnedWhereWMCOPinsThem(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	_, err := kube.CoreV1().Nodes().Create(ctx, windowsNode("win-pin", "127.0.0.7"), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, "win-pin", metav1.DeleteOptions{}) })
	local := remote.NewKnownHostsStore(filepath.Join(t.TempDir(), "known_hosts"))
	store := &cluster.HostKeyStore{Kube: kube, Local: local, NodeFor: func(addr string) (string, bool) {
		return "win-pin", addr == "127.0.0.7"
	}}

	nodeKey := newHostKey(t)
	require.NoError(t, store.Pin(ctx, "127.0.0.7:22", nodeKey))
	n, err := kube.CoreV1().Nodes().Get(ctx, "win-pin", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, base64.StdEncoding.EncodeToString(nodeKey.Marshal()), n.Annotations[config.HostKeyAnnotation])
	assert.Equal(t, "ssh-ed25519", n.Annotations[config.HostKeyTypeAnnotation])
	got, found, err := store.Lookup(ctx, "127.0.0.7:22")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, nodeKey.Marshal(), got.Marshal())

	byohKey := newHostKey(t)
	require.NoError(t, store.Pin(ctx, "127.0.0.8:22", byohKey), "an address without a Node goes to the ConfigMap")
	cm, err := kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.HostKeysConfigMap, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, base64.StdEncoding.EncodeToString(byohKey.Marshal()), cm.Data["127.0.0.8"])
	assert.Equal(t, config.OperatorName, cm.Labels[config.HostKeysManagedByLabel])
	got, found, err = store.Lookup(ctx, "127.0.0.8:22")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, byohKey.Marshal(), got.Marshal())

	require.NoError(t, store.Forget(ctx, "win-pin", "127.0.0.7:22"))
	_, found, err = store.Lookup(ctx, "127.0.0.7:22")
	require.NoError(t, err)
	assert.False(t, found, "forgotten pins are gone")
}

func TestHostKeysFallBackToLocalWhenForbidden(t *testing.T) {
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	_, err := admin.CoreV1().Nodes().Create(ctx, windowsNode("win-ro", "127.0.0.9"), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(ctx, "win-ro", metav1.DeleteOptions{}) })
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "node-reader"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}}}}
	_, err = admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "node-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "node-reader"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "reader", APIGroup: "rbac.authorization.k8s.io"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoleBindings().Delete(ctx, "node-reader", metav1.DeleteOptions{})
		_ = admin.RbacV1().ClusterRoles().Delete(ctx, "node-reader", metav1.DeleteOptions{})
	})

	local := remote.NewKnownHostsStore(filepath.Join(t.TempDir(), "known_hosts"))
	store := &cluster.HostKeyStore{Kube: kubernetes.NewForConfigOrDie(srv.UserConfig("reader")), Local: local,
		NodeFor: func(addr string) (string, bool) { return "win-ro", addr == "127.0.0.9" }}
	key := newHostKey(t)
	require.NoError(t, store.Pin(ctx, "127.0.0.9:22", key))

	n, err := admin.CoreV1().Nodes().Get(ctx, "win-ro", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, n.Annotations[config.HostKeyAnnotation], "the reader may not annotate nodes")
	fromLocal, found, err := local.Lookup(ctx, "127.0.0.9:22")
	require.NoError(t, err)
	require.True(t, found, "the pin went to the local known_hosts file")
	assert.Equal(t, key.Marshal(), fromLocal.Marshal())
	got, found, err := store.Lookup(ctx, "127.0.0.9:22")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, key.Marshal(), got.Marshal())
}

// Hosts without Nodes pinned at once (byoh validate --ssh, a fleet's first connections) all land in the
// ConfigMap: a pin that loses the race to create or update it reads it again.
func TestHostKeysPinnedConcurrently(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	cms := kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	_ = cms.Delete(ctx, config.HostKeysConfigMap, metav1.DeleteOptions{})
	t.Cleanup(func() { _ = cms.Delete(context.Background(), config.HostKeysConfigMap, metav1.DeleteOptions{}) })
	store := &cluster.HostKeyStore{Kube: kube, Local: remote.NewKnownHostsStore(filepath.Join(t.TempDir(), "known_hosts")),
		NodeFor: func(string) (string, bool) { return "", false }}
	keys := map[string]ssh.PublicKey{}
	for i := range 8 {
		keys[fmt.Sprintf("127.0.3.%d", i+1)] = newHostKey(t)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	for addr, key := range keys {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- store.Pin(ctx, addr+":22", key) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	cm, err := cms.Get(ctx, config.HostKeysConfigMap, metav1.GetOptions{})
	require.NoError(t, err)
	for addr, key := range keys {
		assert.Equal(t, base64.StdEncoding.EncodeToString(key.Marshal()), cm.Data[addr], addr)
	}
}
