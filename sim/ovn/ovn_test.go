package ovn_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/ovn"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// server is the real API server and controller manager (whose signer signs approved CSRs) the tests share.
var server *kubeapi.Server

func TestMain(m *testing.M) { kubeapi.Main(m, &server, kubeapi.WithControllerManager()) }

func createNode(t *testing.T, kube kubernetes.Interface, name, os string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: os}}}
	_, err := kube.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func subnetOf(t *testing.T, kube kubernetes.Interface, name string) string {
	t.Helper()
	n, err := kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return n.Annotations[config.HybridOverlaySubnet]
}

func admin(t *testing.T) kubernetes.Interface {
	t.Helper()
	kube, err := kubernetes.NewForConfig(server.AdminConfig())
	require.NoError(t, err)
	return kube
}

// hybridOverlayFlags are WMCO's: the kubelet's kubeconfig to bootstrap with, its own certificate in C:\k\cni\config.
const hybridOverlayFlags = `--bootstrap-kubeconfig=C:\k\kubeconfig --cert-dir=C:\k\cni\config --cert-duration=24h --logfile C:\var\log\hybrid-overlay\hybrid-overlay.log`

// ovnHost starts a host whose hybrid-overlay-node service runs with args, after writing files.
func ovnHost(t *testing.T, name, args string, opts ovn.NodeOptions, files map[string][]byte) *windows.Host {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	h, err := windows.Start(windows.Options{Addr: net.JoinHostPort("127.0.0.1", "0"), Hostname: name, AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()},
		ServicePending: 20 * time.Millisecond, LogInterval: time.Hour, Programs: map[string]windows.Program{"hybrid-overlay-node.exe": ovn.HybridOverlayNode(opts)}})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	files[`C:\k\hybrid-overlay-node.exe`] = []byte("MZ")
	files[`C:\k\cni\config\.keep`] = nil
	files[`C:\var\log\hybrid-overlay\.keep`] = nil
	for path, data := range files {
		require.NoError(t, h.WriteFile(path, data))
	}
	c, err := ssh.Dial("tcp", h.Addr(), &ssh.ClientConfig{User: "Administrator", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(h.HostKey()), Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	for _, cmd := range []string{`sc.exe create hybrid-overlay-node binPath='C:\k\hybrid-overlay-node.exe ` + args + `' start=auto`, `sc.exe start hybrid-overlay-node`} {
		s, err := c.NewSession()
		require.NoError(t, err)
		out, _ := s.CombinedOutput(cmd)
		s.Close()
		require.NotContains(t, string(out), "FAILED", cmd)
	}
	return h
}

// kubeconfig is a kubeconfig with cfg's server, CA and credentials embedded.
func kubeconfig(t *testing.T, cfg *rest.Config) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "x"
	data, err := clientcmd.Write(*kc)
	require.NoError(t, err)
	return data
}

// kubeletKubeconfig is the kubelet's C:\k\kubeconfig after its TLS bootstrap: the node's own credentials.
func kubeletKubeconfig(t *testing.T, node string) map[string][]byte {
	return map[string][]byte{`C:\k\kubeconfig`: kubeconfig(t, server.UserConfig("system:node:"+node, "system:nodes"))}
}

// runIdentity plays network-node-identity (with or without the group's access to Nodes) until the test ends.
func runIdentity(t *testing.T, kube kubernetes.Interface, grant bool) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	id := ovn.NodeIdentity{Kube: kube}
	if grant {
		require.NoError(t, id.GrantNodeAccess(ctx))
		t.Cleanup(func() {
			_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), "wmcon-sim-ovn-node", metav1.DeleteOptions{})
			_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), "wmcon-sim-ovn-node", metav1.DeleteOptions{})
		})
	}
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_ = id.Decide(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

func serviceLog(h *windows.Host) string {
	b, _ := h.ReadFile(`C:\var\log\hybrid-overlay\hybrid-overlay.log`)
	return string(b)
}

// stopsWith waits for the service to stop and its log to hold why.
func stopsWith(t *testing.T, h *windows.Host, why string) {
	t.Helper()
	require.Eventually(t, func() bool { return !h.ServiceRunning("hybrid-overlay-node") && strings.Contains(serviceLog(h), why) },
		20*time.Second, 50*time.Millisecond, "hybrid-overlay-node stops with %q", why)
}

// The allocator gives each Windows Node its own /24 of the hybrid cluster network, keeps the subnets already
// given, and leaves Linux Nodes alone; hybrid-overlay-node, with WMCO's flags, gets its own certificate
// (requested with the kubelet's credentials, approved by network-node-identity, signed by the controller
// manager) and creates the host's HNS networks only once its Node has its subnet, and with that subnet.
func TestHybridOverlaySubnetsComeFromTheNode(t *testing.T) {
	kube := admin(t)
	ctx := context.Background()
	runIdentity(t, kube, true)
	h := ovnHost(t, "WIN-A", "--node win-a "+hybridOverlayFlags, ovn.NodeOptions{}, kubeletKubeconfig(t, "win-a"))
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

	// Its own certificate: requested by the node, for system:ovn-node:win-a in system:ovn-nodes, for 24h, and
	// stored where WMCO's node daemon prunes them.
	var own *certificatesv1.CertificateSigningRequest
	list, err := kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for i, c := range list.Items {
		if c.Spec.SignerName == certificatesv1.KubeAPIServerClientSignerName && c.Spec.Username == "system:node:win-a" {
			own = &list.Items[i]
		}
	}
	require.NotNil(t, own, "a kube-apiserver-client CSR made with the kubelet's credentials")
	require.NotNil(t, own.Spec.ExpirationSeconds)
	assert.Equal(t, int32(24*3600), *own.Spec.ExpirationSeconds)
	block, _ := pem.Decode(own.Spec.Request)
	require.NotNil(t, block)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	require.NoError(t, err)
	assert.Equal(t, "system:ovn-node:win-a", req.Subject.CommonName)
	assert.Equal(t, []string{"system:ovn-nodes"}, req.Subject.Organization)
	var stamped []string
	for _, f := range h.List(`C:\k\cni\config`) {
		if strings.HasPrefix(f, "ovnkube-client-") && f != "ovnkube-client-current.pem" {
			stamped = append(stamped, f)
		}
	}
	assert.Len(t, stamped, 1, "ovnkube-client-<time>.pem")
	assert.True(t, h.Exists(`C:\k\cni\config\ovnkube-client-current.pem`))
}

// hybrid-overlay-node fails as the real one does without its certificate: no --bootstrap-kubeconfig (no
// in-cluster configuration either), a missing file, credentials that are not the node's (network-node-identity
// denies), nobody approving in time; and with its certificate but without the group's access to Nodes it is
// refused: it reads the Node as system:ovn-node:<node>, not as the kubelet.
func TestHybridOverlayNodeNeedsItsOwnCertificate(t *testing.T) {
	kube := admin(t)
	createNode(t, kube, "win-f", "windows")

	h := ovnHost(t, "WIN-F1", "--node win-f --cert-dir=C:\\k\\cni\\config --logfile C:\\var\\log\\hybrid-overlay\\hybrid-overlay.log", ovn.NodeOptions{}, kubeletKubeconfig(t, "win-f"))
	stopsWith(t, h, "unable to load in-cluster configuration")

	h = ovnHost(t, "WIN-F2", "--node win-f "+hybridOverlayFlags, ovn.NodeOptions{}, map[string][]byte{})
	stopsWith(t, h, `open C:\\k\\kubeconfig: The system cannot find the file specified.`)

	waitShort := ovn.NodeOptions{CertWait: 2 * time.Second}
	h = ovnHost(t, "WIN-F3", "--node win-f "+hybridOverlayFlags, waitShort, kubeletKubeconfig(t, "win-f"))
	stopsWith(t, h, "certificate was not signed")
	assert.False(t, h.Exists(`C:\k\cni\config\ovnkube-client-current.pem`))

	runIdentity(t, kube, false)
	other := map[string][]byte{`C:\k\kubeconfig`: kubeconfig(t, server.UserConfig("system:node:win-other", "system:nodes"))}
	h = ovnHost(t, "WIN-F4", "--node win-f "+hybridOverlayFlags, waitShort, other)
	stopsWith(t, h, "certificate was not signed")

	h = ovnHost(t, "WIN-F5", "--node win-f "+hybridOverlayFlags, ovn.NodeOptions{}, kubeletKubeconfig(t, "win-f"))
	stopsWith(t, h, `User \"system:ovn-node:win-f\" cannot get resource \"nodes\"`)
	assert.True(t, h.Exists(`C:\k\cni\config\ovnkube-client-current.pem`), "it had its certificate")
}
