package ovn_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/ovn"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

func createNode(t *testing.T, kube kubernetes.Interface, name, os string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: os}}}
	_, err := kube.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
	require.NoError(t, err)
}

func subnetOf(t *testing.T, kube kubernetes.Interface, name string) string {
	t.Helper()
	n, err := kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return n.Annotations[config.HybridOverlaySubnet]
}

// The allocator gives each Windows Node its own /24 of the hybrid cluster network, keeps the subnets already
// given, and leaves Linux Nodes alone; hybrid-overlay-node creates the host's HNS networks only once its Node
// has its subnet, and with that subnet.
func TestHybridOverlaySubnetsComeFromTheNode(t *testing.T) {
	srv := kubeapi.Start(t)
	kube, err := kubernetes.NewForConfig(srv.AdminConfig())
	require.NoError(t, err)
	ctx := context.Background()

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	h, err := windows.Start(windows.Options{Addr: net.JoinHostPort("127.0.0.1", "0"), Hostname: "WIN-A", AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()},
		ServicePending: 20 * time.Millisecond, LogInterval: time.Hour, Programs: map[string]windows.Program{"hybrid-overlay-node.exe": ovn.HybridOverlayNode(kube)}})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	require.NoError(t, h.WriteFile(`C:\k\hybrid-overlay-node.exe`, []byte("MZ")))
	c, err := ssh.Dial("tcp", h.Addr(), &ssh.ClientConfig{User: "Administrator", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(h.HostKey()), Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	for _, cmd := range []string{`sc.exe create hybrid-overlay-node binPath='C:\k\hybrid-overlay-node.exe --node win-a' start=auto`, `sc.exe start hybrid-overlay-node`} {
		s, err := c.NewSession()
		require.NoError(t, err)
		out, _ := s.CombinedOutput(cmd)
		s.Close()
		require.NotContains(t, string(out), "FAILED", cmd)
	}
	require.Eventually(t, func() bool { return h.ServiceRunning("hybrid-overlay-node") }, 10*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // a few of its polls of a Node that does not exist yet
	_, ok := h.HNSNetworkInfo("OVNKubernetesHybridOverlayNetwork")
	assert.False(t, ok, "no HNS network before the Node has its subnet")

	createNode(t, kube, "linux-1", "linux")
	createNode(t, kube, "win-a", "windows")
	createNode(t, kube, "win-b", "windows")
	a := &ovn.SubnetAllocator{Kube: kube, Network: "127.140.0.0/23"}
	require.NoError(t, a.Reconcile(ctx))
	assert.Empty(t, subnetOf(t, kube, "linux-1"))
	first, second := subnetOf(t, kube, "win-a"), subnetOf(t, kube, "win-b")
	assert.ElementsMatch(t, []string{"127.140.0.0/24", "127.140.1.0/24"}, []string{first, second})
	require.NoError(t, a.Reconcile(ctx))
	assert.Equal(t, first, subnetOf(t, kube, "win-a"), "a subnet once given stays")
	createNode(t, kube, "win-c", "windows")
	assert.ErrorContains(t, a.Reconcile(ctx), "127.140.0.0/23 is full")

	require.Eventually(t, func() bool {
		n, ok := h.HNSNetworkInfo("OVNKubernetesHybridOverlayNetwork")
		return ok && n.Subnet == first
	}, 10*time.Second, 20*time.Millisecond, "the HNS network with the Node's subnet")
	_, ok = h.HNSNetworkInfo("BaseOVNKubernetesHybridOverlayNetwork")
	assert.True(t, ok)
}
