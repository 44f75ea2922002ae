package demo_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote/sshkey"
	"github.com/wmcon/wmcon/sim/demo"
	"github.com/wmcon/wmcon/sim/windows"
)

func TestFreshDemoHasNoWindowsYet(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "byoh_ed25519")
	d, err := demo.New(demo.Options{Fresh: true, Step: 20 * time.Millisecond, BYOHKeyFile: keyFile})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go d.Run(ctx)
	kube := d.Clients.Kube

	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, nodes.Items, 6, "three Linux masters and three workers")
	for _, n := range nodes.Items {
		assert.Equal(t, "linux", n.Labels[config.OSLabel])
	}
	sets, err := d.Clients.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, sets.Items, 1)
	assert.Empty(t, sets.Items[0].Spec.Template.Labels[config.MachineOSIDLabel], "the Linux workers' MachineSet only")
	machines, err := d.Clients.Machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, machines.Items, 3, "a worker Machine to copy settings from")
	for _, s := range []struct{ ns, name string }{{config.OperatorNamespace, config.PrivateKeySecret}, {config.MachineAPINamespace, config.UserDataSecret}} {
		_, err := kube.CoreV1().Secrets(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "no %s yet", s.name)
	}
	_, err = kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err))
	_, err = kube.AppsV1().Deployments(config.OperatorNamespace).Get(ctx, config.OperatorName, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err))

	// WMCO is not installed, and installing it through OLM progresses to Succeeded.
	o := cluster.NewOLM(d.Clients)
	st, err := o.State(ctx)
	require.NoError(t, err)
	require.False(t, st.Installed())
	opts, err := cluster.InstallOptions{}.Defaults()
	require.NoError(t, err)
	_, err = o.EnsureNamespace(ctx)
	require.NoError(t, err)
	_, err = o.EnsureOperatorGroup(ctx)
	require.NoError(t, err)
	_, _, err = o.EnsureSubscription(ctx, opts)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := o.State(ctx)
		return err == nil && st.Installed() && st.DeploymentAvailable()
	}, 20*time.Second, 20*time.Millisecond, "the OLM stand-in installs WMCO")

	// The installed operator's stand-in writes windows-user-data from cloud-private-key.
	_, err = kube.CoreV1().Secrets(config.OperatorNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: config.PrivateKeySecret, Namespace: config.OperatorNamespace},
		Data:       map[string][]byte{config.PrivateKeySecretKey: d.KeyPEM}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		s, err := kube.CoreV1().Secrets(config.MachineAPINamespace).Get(ctx, config.UserDataSecret, metav1.GetOptions{})
		if err != nil {
			return false
		}
		pub, err := sshkey.FindInUserData(string(s.Data[config.UserDataSecretKey]))
		return err == nil && sshkey.AuthorizedKey(pub) == sshkey.AuthorizedKey(d.PrivateKey.PublicKey())
	}, 20*time.Second, 20*time.Millisecond, "windows-user-data carries the key")

	// The bare hosts accept the BYOH key kept in the key file, and only the hosts listed are bare.
	assert.Equal(t, []string{"127.0.0.7", "127.0.0.8"}, d.BareHosts())
	pem, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	fi, err := os.Stat(keyFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	signer, err := ssh.ParsePrivateKey(pem)
	require.NoError(t, err)
	for _, ip := range d.BareHosts() {
		h := d.BareHost(ip)
		c, err := ssh.Dial("tcp", d.HostAddrs()[ip], &ssh.ClientConfig{User: config.DefaultSSHUser, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
			HostKeyCallback: ssh.FixedHostKey(h.HostKey()), Timeout: 5 * time.Second})
		require.NoError(t, err, "host %s", ip)
		_ = c.Close()
	}

	// A second fresh demo reuses the key file: separate wmcon runs can pass it with --key.
	d2, err := demo.New(demo.Options{Fresh: true, Step: time.Hour, BYOHKeyFile: keyFile})
	require.NoError(t, err)
	t.Cleanup(d2.Close)
	assert.Equal(t, pem, d2.KeyPEM)
}

// The default demo keeps everything it had.
func TestDefaultDemoIsNotFresh(t *testing.T) {
	d, err := demo.New(demo.Options{Step: time.Hour})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	assert.Equal(t, []string{demo.BareHostIP}, d.BareHosts())
	st, err := cluster.NewOLM(d.Clients).State(context.Background())
	require.NoError(t, err)
	assert.True(t, st.Installed())
}

// On the fresh demo a Windows MachineSet's Machine becomes a simulated Windows Server that the user data's
// key logs in to; scaling to 0 takes it away.
func TestFreshDemoProvisionsWindowsMachines(t *testing.T) {
	d, err := demo.New(demo.Options{Fresh: true, Step: 20 * time.Millisecond, BYOHKeyFile: filepath.Join(t.TempDir(), "k")})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go d.Run(ctx)
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(d.PrivateKey.PublicKey())))
	_, err = d.Clients.Kube.CoreV1().Secrets(config.MachineAPINamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: config.UserDataSecret, Namespace: config.MachineAPINamespace},
		Data:       map[string][]byte{config.UserDataSecretKey: []byte("<powershell>\nSet-Content -Path $p -Value '" + key + "'\n</powershell>\n<persist>true</persist>\n")}},
		metav1.CreateOptions{})
	require.NoError(t, err)
	linux, err := d.Clients.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	ms := linux.Items[0].DeepCopy()
	ms.ObjectMeta = metav1.ObjectMeta{Name: "demo-7xk2p-winworker-us-east-1a", Namespace: config.MachineAPINamespace}
	ms.Spec.Selector.MatchLabels[config.MachineSetLabel] = ms.Name
	ms.Spec.Template.Labels[config.MachineSetLabel] = ms.Name
	ms.Spec.Template.Labels[config.MachineOSIDLabel] = config.WindowsOSID
	ms.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(`{"kind":"AWSMachineProviderConfig","placement":{"availabilityZone":"us-east-1a"},"userDataSecret":{"name":"windows-user-data"}}`)
	_, err = d.Clients.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).Create(ctx, ms, metav1.CreateOptions{})
	require.NoError(t, err)

	require.Eventually(t, func() bool { _, ok := d.HostAddrs()["127.0.0.20"]; return ok }, 20*time.Second, 20*time.Millisecond,
		"the Machine's instance runs at the first address")
	var host *windows.Host // the MachineSet copies the Linux one's replicas: pick the instance at .20
	for _, h := range d.Machines.Hosts() {
		if strings.HasPrefix(h.Addr(), "127.0.0.20:") {
			host = h
		}
	}
	require.NotNil(t, host)
	machines, err := d.Clients.Machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx,
		metav1.ListOptions{LabelSelector: config.MachineSetLabel + "=" + ms.Name})
	require.NoError(t, err)
	require.NotEmpty(t, machines.Items)
	for _, m := range machines.Items {
		assert.WithinDuration(t, time.Now(), m.CreationTimestamp.Time, time.Minute, "dated as the API server does: its AGE shows")
		assert.NotEmpty(t, m.UID)
	}
	c, err := ssh.Dial("tcp", d.HostAddrs()["127.0.0.20"], &ssh.ClientConfig{User: config.DefaultSSHUser,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(d.PrivateKey)}, HostKeyCallback: ssh.FixedHostKey(host.HostKey()), Timeout: 5 * time.Second})
	require.NoError(t, err)
	_ = c.Close()

	ms, err = d.Clients.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).Get(ctx, ms.Name, metav1.GetOptions{})
	require.NoError(t, err)
	zero := int32(0)
	ms.Spec.Replicas = &zero
	_, err = d.Clients.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).Update(ctx, ms, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(d.Machines.Hosts()) == 0 }, 20*time.Second, 20*time.Millisecond, "scaled to 0, the instance goes")
}
