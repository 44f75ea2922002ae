package operator_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/remote/sshkey"
	"github.com/wmcon/wmcon/sim/olm"
	"github.com/wmcon/wmcon/sim/operator"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
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
	srv := kubeapi.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	op := &operator.Operator{Clients: c, Platform: "AWS"}
	keyPEM, pub := newKeyPEM(t)
	_, err = c.Kube.CoreV1().Secrets(config.OperatorNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: config.PrivateKeySecret, Namespace: config.OperatorNamespace},
		Data:       map[string][]byte{config.PrivateKeySecretKey: keyPEM}}, metav1.CreateOptions{})
	require.NoError(t, err)

	require.NoError(t, op.Reconcile(ctx))
	_, ok := userDataKey(t, ctx, c)
	assert.False(t, ok, "no operator installed: no user data")

	installOperator(t, ctx, c)

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

// WMCO's BYOH controller on a host its key does not open: the login is refused as a real host refuses it,
// nothing is configured (no node), the failure is reported, and the host is not tried again before Retry.
func TestOperatorDoesNotConfigureAHostItsKeyDoesNotOpen(t *testing.T) {
	srv := kubeapi.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	keyPEM, _ := newKeyPEM(t)
	_, otherPub := newKeyPEM(t)
	host, err := windows.Start(windows.Options{Addr: "127.0.0.141:0", AuthorizedKeys: []ssh.PublicKey{otherPub}})
	require.NoError(t, err)
	defer host.Close()
	var mu sync.Mutex
	var failures []string
	op := &operator.Operator{Clients: c, Platform: "AWS", OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, err.Error())
	}, Nodes: &operator.NodeOptions{Retry: time.Hour,
		Host:    func(addr string) *windows.Host { return map[string]*windows.Host{"127.0.0.141": host}[addr] },
		Payload: func(context.Context) (*payload.Payload, error) { return nil, errors.New("not reached") }}}
	_, err = c.Kube.CoreV1().Secrets(config.OperatorNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: config.PrivateKeySecret, Namespace: config.OperatorNamespace},
		Data:       map[string][]byte{config.PrivateKeySecretKey: keyPEM}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: config.BYOHConfigMap, Namespace: config.OperatorNamespace},
		Data:       map[string]string{"127.0.0.141": "username=Administrator"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	installOperator(t, ctx, c)

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { op.Run(runCtx, 20*time.Millisecond); close(done) }()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(failures) > 0
	}, 30*time.Second, 50*time.Millisecond, "the refused login is reported")
	time.Sleep(300 * time.Millisecond) // fifteen more passes: none may try the host again within Retry
	stop()
	<-done // Run returns only once its configurations have ended
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, failures, 1, "tried once, not again before Retry: %v", failures)
	assert.Contains(t, failures[0], "refused key login")
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, nodes.Items, "nothing configured")
}

// installOperator installs WMCO through the OLM stand-in, as OLM would.
func installOperator(t *testing.T, ctx context.Context, c cluster.Clients) {
	t.Helper()
	sim := olm.New(c, olm.Options{Catalogs: []olm.Catalog{{Name: cluster.DefaultCatalogSource, Channels: []string{"stable"}, DefaultChannel: "stable", Version: "11.0.1"}}})
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
	st, err := o.State(ctx)
	require.NoError(t, err)
	require.True(t, st.Installed())
}

// Installed, the operator publishes its node contract as WMCO does: the immutable ConfigMap
// windows-services-<its version>, generated for the cluster, which wmcon reads back as the contract.
func TestOperatorPublishesItsServicesContract(t *testing.T) {
	srv := kubeapi.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	keyPEM, _ := newKeyPEM(t)
	_, err = c.Kube.CoreV1().Secrets(config.OperatorNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: config.PrivateKeySecret, Namespace: config.OperatorNamespace},
		Data:       map[string][]byte{config.PrivateKeySecretKey: keyPEM}}, metav1.CreateOptions{})
	require.NoError(t, err)
	op := &operator.Operator{Clients: c, Platform: "AWS"}
	require.NoError(t, op.Reconcile(ctx))
	_, err = c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, "windows-services-11.0.1", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "not installed: nothing published")

	installOperator(t, ctx, c)
	require.NoError(t, op.Reconcile(ctx))
	cm, err := c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, "windows-services-11.0.1", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, cm.Immutable)
	assert.True(t, *cm.Immutable)
	d, version, err := cluster.NewOps(c).OperatorServicesContract(ctx)
	require.NoError(t, err)
	assert.Equal(t, "11.0.1", version)
	nf, err := cluster.NewOps(c).ReadNodeFacts(ctx, cluster.NodeFactsOptions{DryRun: true})
	require.NoError(t, err)
	in := nf.Facts.ContractInputs()
	in.Platform = "AWS"
	want, err := nodeconfig.Contract(in)
	require.NoError(t, err)
	assert.Equal(t, want, d, "the contract for the cluster's facts")
	require.NoError(t, op.Reconcile(ctx), "published once; the next pass leaves it")
}

// WMCO's BYOH controller parses the whole windows-instances ConfigMap before it configures any host: one
// invalid entry stalls every host, and the operator's log says why; once the entry is fixed the hosts are
// configured (here: tried, with a key the host refuses).
func TestOperatorStallsOnAnInvalidWindowsInstancesEntry(t *testing.T) {
	srv := kubeapi.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	keyPEM, _ := newKeyPEM(t)
	_, otherPub := newKeyPEM(t)
	host, err := windows.Start(windows.Options{Addr: "127.0.0.142:0", AuthorizedKeys: []ssh.PublicKey{otherPub}})
	require.NoError(t, err)
	defer host.Close()
	var mu sync.Mutex
	var failures, logs []string
	op := &operator.Operator{Clients: c, Platform: "AWS", OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, err.Error())
	}, Nodes: &operator.NodeOptions{Retry: time.Hour,
		Host:    func(addr string) *windows.Host { return map[string]*windows.Host{"127.0.0.142": host}[addr] },
		Payload: func(context.Context) (*payload.Payload, error) { return nil, errors.New("not reached") },
		Log:     func(l string) { mu.Lock(); defer mu.Unlock(); logs = append(logs, l) }}}
	_, err = c.Kube.CoreV1().Secrets(config.OperatorNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: config.PrivateKeySecret, Namespace: config.OperatorNamespace},
		Data:       map[string][]byte{config.PrivateKeySecretKey: keyPEM}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cms := c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	_, err = cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: config.BYOHConfigMap, Namespace: config.OperatorNamespace},
		Data:       map[string]string{"127.0.0.142": "username=Administrator", "127.0.0.143": "Administrator"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	installOperator(t, ctx, c)

	for range 5 {
		require.NoError(t, op.Reconcile(ctx))
	}
	mu.Lock()
	assert.Empty(t, failures, "no host tried while an entry is invalid")
	stalls := 0
	for _, l := range logs {
		if strings.Contains(l, "no instance is configured until it is fixed") && strings.Contains(l, `"127.0.0.143"`) {
			stalls++
		}
	}
	assert.Equal(t, 1, stalls, "said once, naming the bad entry: %v", logs)
	mu.Unlock()

	cm, err := cms.Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
	require.NoError(t, err)
	cm.Data["127.0.0.143"] = "username=Administrator"
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { op.Run(runCtx, 20*time.Millisecond); close(done) }()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(failures) > 0
	}, 30*time.Second, 50*time.Millisecond, "the valid host is tried once the ConfigMap is fixed")
	stop()
	<-done
}
