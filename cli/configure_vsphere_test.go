package cli

import (
	"context"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// On vSphere, a Machine's Windows image comes up as WIN-…; as WMCO does, configure renames the computer to
// the Machine's name and restarts it before configuring it, and the node joins under the Machine's name in its
// fully qualified form (vSphere's HOSTNAME_OVERRIDE). A dry run renames nothing and says it would.
func TestConfigureVSphereMachineTakesTheMachinesName(t *testing.T) {
	server := kubeapi.Start(t, kubeapi.WithControllerManager())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := cluster.NewClients(server.AdminConfig())
	require.NoError(t, err)
	seedOpenShiftAWS(t, ctx, c, server.AdminConfig().Host)
	onVSphere(t, ctx, c)
	kube := kubernetes.NewForConfigOrDie(server.AdminConfig())

	const ip, machine = "127.0.0.86", "winvs-x7k2p"
	windowsMachine(t, ctx, c, machine, ip)
	b := newBareHosts(t)
	b.overlay(kube)
	host := b.startOpts("WIN-Q8R2T5M1K0D", ip, windows.Options{Platform: "VSphere", DNSSuffix: "winsim.test",
		RebootDowntime: 200 * time.Millisecond, Programs: map[string]windows.Program{"kubelet.exe": kubelet.Kubelet(kubelet.KubeletOptions{})}})
	admin := server.Kubeconfig("wmcon-vsphere", "system:masters")
	const want = machine + ".winsim.test"

	code, out, errOut := runWmcon(t, b.args(admin, "configure", "--address", ip, "--payload", b.payloadDir, "--dry-run")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "plan for "+want+" ("+ip+")")
	assert.Contains(t, out, "the computer win-q8r2t5m1k0d would be renamed "+machine)
	assert.Equal(t, "WIN-Q8R2T5M1K0D", host.Hostname(), "a dry run renames nothing")
	assert.Equal(t, 0, host.Reboots())

	code, out, errOut = runWmcon(t, b.args(admin, "configure", "--address", ip, "--payload", b.payloadDir,
		"--csr-timeout", "90s", "--ready-timeout", "90s")...)
	require.Equal(t, 0, code, "%s\n%s\nkubelet log:\n%s", out, errOut, kubeletLog(host))
	assert.Equal(t, machine, host.Hostname())
	assert.Equal(t, 1, host.Reboots(), "restarted once, for the name")
	n, err := kube.CoreV1().Nodes().Get(ctx, want, metav1.GetOptions{})
	require.NoError(t, err, "the node is named after the Machine")
	assert.True(t, nodeReady(n))
	_, err = kube.CoreV1().Nodes().Get(ctx, "win-q8r2t5m1k0d.winsim.test", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "no node under the image's generated name")

	code, out, errOut = runWmcon(t, b.args(admin, "configure", "--address", ip, "--payload", b.payloadDir)...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "already configured: nothing changed")
	assert.Equal(t, 1, host.Reboots(), "a host with its Machine's name is not renamed again")

	// A host that joined under its computer's own name (before wmcon renamed Machines) keeps it: a new name
	// would register a second Node.
	const ip2, machine2, joined = "127.0.0.87", "winvs-m4n5b", "win-j2k3l4m5n6p.winsim.test"
	windowsMachine(t, ctx, c, machine2, ip2)
	host2 := b.startOpts("WIN-J2K3L4M5N6P", ip2, windows.Options{Platform: "VSphere", DNSSuffix: "winsim.test"})
	_, err = kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: joined}}, metav1.CreateOptions{})
	require.NoError(t, err)
	code, out, errOut = runWmcon(t, b.args(admin, "configure", "--address", ip2, "--payload", b.payloadDir, "--dry-run")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "plan for "+joined+" ("+ip2+")")
	assert.Contains(t, out, "node "+joined+" exists: its computer keeps the name")
	assert.NotContains(t, out, "would be renamed")
	assert.Equal(t, "WIN-J2K3L4M5N6P", host2.Hostname())
}

// onVSphere makes the seeded cluster a vSphere one.
func onVSphere(t *testing.T, ctx context.Context, c cluster.Clients) {
	t.Helper()
	infra, err := c.Config.ConfigV1().Infrastructures().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
	require.NoError(t, err)
	infra.Status.PlatformStatus = &configv1.PlatformStatus{Type: configv1.VSpherePlatformType}
	_, err = c.Config.ConfigV1().Infrastructures().UpdateStatus(ctx, infra, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// windowsMachine adds a provisioned Windows Machine at ip that WMCO is told to leave alone (the ignore label),
// so wmcon configures its host.
func windowsMachine(t *testing.T, ctx context.Context, c cluster.Clients, name, ip string) {
	t.Helper()
	machines := c.Machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	m, err := machines.Create(ctx, &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: config.MachineAPINamespace,
		Labels: map[string]string{config.MachineOSIDLabel: config.WindowsOSID, config.IgnoreLabel: "true"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	m.Status.Phase = ptrTo("Provisioned")
	m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	_, err = machines.UpdateStatus(ctx, m, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func ptrTo[T any](v T) *T { return &v }
