package operatorsim_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/olmsim"
	"github.com/wmcon/wmcon/cluster/operatorsim"
	"github.com/wmcon/wmcon/cluster/testserver"
	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote/sshkey"
)

func newKeyPEM(t *testing.T) ([]byte, ssh.PublicKey) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	s, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	return pem.EncodeToMemory(block), s.PublicKey()
}

func userDataKey(t *testing.T, ctx context.Context, c cluster.Clients) (ssh.PublicKey, bool) {
	t.Helper()
	s, err := c.Kube.CoreV1().Secrets(config.MachineAPINamespace).Get(ctx, config.UserDataSecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	require.NoError(t, err)
	pub, err := sshkey.FindInUserData(string(s.Data[config.UserDataSecretKey]))
	require.NoError(t, err)
	return pub, true
}

// WMCO's secret controller, on the real API server with OLM's CRDs: nothing before the operator is
// installed, then windows-user-data carrying cloud-private-key's public key, kept in step when it changes.
func TestOperatorKeepsUserDataInStepWithTheKey(t *testing.T) {
	srv := testserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	op := &operatorsim.Operator{Clients: c, Platform: "AWS"}
	keyPEM, pub := newKeyPEM(t)
	_, err = c.Kube.CoreV1().Secrets(config.OperatorNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: config.PrivateKeySecret, Namespace: config.OperatorNamespace},
		Data:       map[string][]byte{config.PrivateKeySecretKey: keyPEM}}, metav1.CreateOptions{})
	require.NoError(t, err)

	require.NoError(t, op.Reconcile(ctx))
	_, ok := userDataKey(t, ctx, c)
	assert.False(t, ok, "no operator installed: no user data")

	sim := olmsim.New(c, olmsim.Options{Catalogs: []olmsim.Catalog{{Name: cluster.DefaultCatalogSource, Channels: []string{"stable"}, DefaultChannel: "stable", Version: "11.0.1"}}})
	require.NoError(t, sim.Seed(ctx))
	o := cluster.NewOLM(c)
	opts, err := cluster.InstallOptions{}.Defaults()
	require.NoError(t, err)
	_, err = o.EnsureOperatorGroup(ctx)
	require.NoError(t, err)
	_, _, err = o.EnsureSubscription(ctx, opts)
	require.NoError(t, err)
	for i := 0; i < 10; i++ {
		require.NoError(t, sim.Reconcile(ctx))
	}

	require.NoError(t, op.Reconcile(ctx))
	got, ok := userDataKey(t, ctx, c)
	require.True(t, ok, "the installed operator writes the user data")
	assert.Equal(t, sshkey.AuthorizedKey(pub), sshkey.AuthorizedKey(got))
	s, err := c.Kube.CoreV1().Secrets(config.MachineAPINamespace).Get(ctx, config.UserDataSecret, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, string(userdata.ForKey(pub, "AWS")), string(s.Data[config.UserDataSecretKey]), "the shared renderer's script, for the operator's platform")

	newPEM, newPub := newKeyPEM(t)
	sec, err := c.Kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, config.PrivateKeySecret, metav1.GetOptions{})
	require.NoError(t, err)
	sec.Data[config.PrivateKeySecretKey] = newPEM
	_, err = c.Kube.CoreV1().Secrets(config.OperatorNamespace).Update(ctx, sec, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, op.Reconcile(ctx))
	got, _ = userDataKey(t, ctx, c)
	assert.Equal(t, sshkey.AuthorizedKey(newPub), sshkey.AuthorizedKey(got), "a new key is followed")
}
