package demo_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/demo"
	"github.com/wmcon/wmcon/config"
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
