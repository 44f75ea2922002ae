package cloudprovider_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wmcon/wmcon/sim/cloudprovider"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// The simulated cloud-node-manager initializes its Node with the credentials of its --kubeconfig, against the
// real API server: with the node's own (C:\k\kubeconfig) NodeRestriction refuses the taint's removal, the
// manager logs the refusal and the Node stays uninitialized; with a service account allowed to update Nodes
// (what WMCO writes to C:\k\wicd-kubeconfig) it gets its providerID and loses the taint.
func TestCloudNodeManagerUsesTheCredentialsItIsGiven(t *testing.T) {
	srv := kubeapi.Start(t)
	ctx := context.Background()
	admin, err := kubernetes.NewForConfig(srv.AdminConfig())
	require.NoError(t, err)
	const name, providerID = "win-azure-a", "azure:///subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/win-azure-a"
	_, err = admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: cloudprovider.TaintUninitialized, Value: "true", Effect: corev1.TaintEffectNoSchedule}}}},
		metav1.CreateOptions{})
	require.NoError(t, err)

	find := func(node string) (cloudprovider.Instance, bool) {
		return cloudprovider.Instance{Name: node, ProviderID: providerID}, node == name
	}
	var mu sync.Mutex
	var refusals []string
	onError := func(_ string, err error) { mu.Lock(); refusals = append(refusals, err.Error()); mu.Unlock() }
	h, run := startManagerHost(t, cloudprovider.NodeManagerOptions{Find: find, OnError: onError})
	nodeKC, err := os.ReadFile(srv.Kubeconfig("system:node:"+name, "system:nodes"))
	require.NoError(t, err)
	require.NoError(t, h.WriteFile(`C:\k\kubeconfig`, nodeKC))
	require.NoError(t, h.WriteFile(`C:\k\wicd-kubeconfig`, serviceAccountKubeconfig(t, srv, admin)))

	run(`sc.exe create cloud-node-manager binPath='C:\k\azure-cloud-node-manager.exe --windows-service --node-name=` + name + ` --wait-routes=false --kubeconfig=C:\k\kubeconfig' start=auto`)
	run(`sc.exe start cloud-node-manager`)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(refusals) > 0 && strings.Contains(refusals[len(refusals)-1], "is not allowed to modify taints")
	}, 10*time.Second, 20*time.Millisecond, "the node's credentials are refused by the API server")
	assert.True(t, h.ServiceRunning("cloud-node-manager"), "it keeps trying, as the real one does")
	n, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, hasTaint(n, cloudprovider.TaintUninitialized), "the Node stays uninitialized")

	run(`sc.exe stop cloud-node-manager`)
	require.Eventually(t, func() bool { st, _ := h.Service("cloud-node-manager"); return st.State == windows.StateStopped }, 10*time.Second, 20*time.Millisecond)
	run(`sc.exe delete cloud-node-manager`)
	run(`sc.exe create cloud-node-manager binPath='C:\k\azure-cloud-node-manager.exe --windows-service --node-name=` + name + ` --wait-routes=false --kubeconfig=C:\k\wicd-kubeconfig' start=auto`)
	run(`sc.exe start cloud-node-manager`)
	info, _ := h.Service("cloud-node-manager")
	require.Contains(t, info.BinaryPath, `C:\k\wicd-kubeconfig`)
	require.Eventually(t, func() bool {
		n, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && !hasTaint(n, cloudprovider.TaintUninitialized) && n.Spec.ProviderID == providerID
	}, 10*time.Second, 20*time.Millisecond, "initialized with the service account's credentials")
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// serviceAccountKubeconfig makes a service account allowed to update Nodes and returns a kubeconfig with its
// token, as WMCO's WICD kubeconfig is.
func serviceAccountKubeconfig(t *testing.T, srv *kubeapi.Server, admin kubernetes.Interface) []byte {
	t.Helper()
	ctx := context.Background()
	const ns, sa = "kube-system", "test-cloud-node-manager"
	_, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: sa},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "patch", "update"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: sa},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require.NoError(t, err)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.Host(), CertificateAuthorityData: srv.AdminConfig().CAData}
	kc.AuthInfos["wicd"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "wicd"}
	kc.CurrentContext = "c"
	b, err := clientcmd.Write(*kc)
	require.NoError(t, err)
	return b
}

// startManagerHost starts a simulated host whose azure-cloud-node-manager.exe is the simulated manager, and
// returns it with a function that runs a command on it over SSH.
func startManagerHost(t *testing.T, opts cloudprovider.NodeManagerOptions) (*windows.Host, func(string)) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	h, err := windows.Start(windows.Options{Addr: net.JoinHostPort("127.0.0.1", "0"), Hostname: "WIN-AZURE-A", AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()},
		ServicePending: 20 * time.Millisecond, LogInterval: time.Hour,
		Programs: map[string]windows.Program{"azure-cloud-node-manager.exe": cloudprovider.NodeManager(opts)}})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	require.NoError(t, h.WriteFile(`C:\k\azure-cloud-node-manager.exe`, []byte("MZ")))
	c, err := ssh.Dial("tcp", h.Addr(), &ssh.ClientConfig{User: "Administrator", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(h.HostKey()), Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return h, func(cmd string) {
		s, err := c.NewSession()
		require.NoError(t, err)
		defer s.Close()
		out, _ := s.CombinedOutput(cmd)
		require.NotContains(t, string(out), "FAILED", cmd)
	}
}
