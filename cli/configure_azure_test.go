package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/sim/cloudprovider"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/serviceca"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// On Azure the Node is initialized by cloud-node-manager on the host, and only with an identity that may
// change the Node's taints: wmcon configures it as WMCO does, with C:\k\wicd-kubeconfig holding a service
// account's token (standalone: wmcon's own, in wmcon-system). The simulated manager uses that kubeconfig
// against the real API server, whose NodeRestriction refuses the node's own credentials: the Node loses its
// uninitialized taint and gets its providerID only when configure gave the manager WMCO's identity. The token
// is never printed; deconfigure removes the file. Without WMCO's TLS secret, windows_exporter still serves
// TLS as on WMCO's nodes, with the certificate service-ca issued for wmcon's Service.
func TestConfigureAzureHostAsWMCODoes(t *testing.T) {
	server := kubeapi.Start(t, kubeapi.WithControllerManager())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := cluster.NewClients(server.AdminConfig())
	require.NoError(t, err)
	seedOpenShiftAWS(t, ctx, c, server.AdminConfig().Host)
	infra, err := c.Config.ConfigV1().Infrastructures().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
	require.NoError(t, err)
	infra.Status.PlatformStatus = &configv1.PlatformStatus{Type: configv1.AzurePlatformType}
	_, err = c.Config.ConfigV1().Infrastructures().UpdateStatus(ctx, infra, metav1.UpdateOptions{})
	require.NoError(t, err)
	kube := kubernetes.NewForConfigOrDie(server.AdminConfig())
	auditLog := filepath.Join(t.TempDir(), "wmcon-audit.log")
	t.Setenv(actions.AuditEnv, auditLog)

	// OpenShift's service-ca issues windows_exporter's certificate for wmcon's Service (no WMCO here).
	ca := &serviceca.Controller{Kube: kube}
	caCtx, stopCA := context.WithCancel(ctx)
	caDone := make(chan struct{})
	go func() { ca.Run(caCtx, 100*time.Millisecond); close(caDone) }()
	t.Cleanup(func() { stopCA(); <-caDone })

	const ip, node = "127.0.0.86", "win-azure-86"
	const providerID = "azure:///subscriptions/s1/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/" + node
	manager := cloudprovider.NodeManager(cloudprovider.NodeManagerOptions{Find: func(n string) (cloudprovider.Instance, bool) {
		return cloudprovider.Instance{Name: n, ProviderID: providerID}, n == node
	}})
	b := newBareHosts(t)
	b.overlay(kube)
	azurePayload := filepath.Join(t.TempDir(), "payload")
	require.NoError(t, payload.WriteSynthetic(azurePayload, nodeconfig.RequiredPayload("Azure")))
	host := b.startOpts(node, ip, windows.Options{Platform: "Azure", Programs: map[string]windows.Program{
		"kubelet.exe": kubelet.Kubelet(kubelet.KubeletOptions{}), "azure-cloud-node-manager.exe": manager}})
	admin := server.Kubeconfig("wmcon-azure", "system:masters")
	// The simulated host takes Administrator, not Azure's default user capi.
	f, err := os.OpenFile(b.sshConfig, os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString("Host " + ip + "\n  User Administrator\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	code, out, errOut := runWmcon(t, b.args(admin, "configure", "--address", ip, "--payload", azurePayload,
		"--csr-timeout", "90s", "--ready-timeout", "90s")...)
	require.Equal(t, 0, code, "%s\n%s\nkubelet log:\n%s", out, errOut, kubeletLog(host))

	svc, ok := host.Service("cloud-node-manager")
	require.True(t, ok)
	assert.Contains(t, svc.BinaryPath, `--kubeconfig=C:\k\wicd-kubeconfig`, "WMCO's command line")
	require.Eventually(t, func() bool {
		n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return err == nil && n.Spec.ProviderID == providerID && !hasTaint(n, cloudprovider.TaintUninitialized)
	}, 30*time.Second, 100*time.Millisecond, "cloud-node-manager initialized the node with its service account")

	// windows_exporter runs WMCO's command line and serves TLS with the certificate service-ca issued.
	exp, ok := host.Service("windows_exporter")
	require.True(t, ok)
	assert.Contains(t, exp.BinaryPath, "--web.config.file "+nodeconfig.ExporterWebConfigPath)
	require.Eventually(t, host.ExporterTLS, 10*time.Second, 50*time.Millisecond, "the exporter serves TLS")
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(ca.CA()))
	conn, err := tls.Dial("tcp", host.ExporterAddr(), &tls.Config{RootCAs: roots,
		ServerName: cluster.ExporterService + "." + cluster.IdentityNamespace + ".svc"})
	require.NoError(t, err, "its certificate is service-ca's for wmcon's Service")
	require.NoError(t, conn.Close())

	secret, err := kube.CoreV1().Secrets(cluster.IdentityNamespace).Get(ctx, cluster.NodeManagerTokenSecret, metav1.GetOptions{})
	require.NoError(t, err)
	token := string(secret.Data[corev1.ServiceAccountTokenKey])
	require.NotEmpty(t, token)
	kc, err := host.ReadFile(nodeconfig.WICDKubeconfigPath)
	require.NoError(t, err)
	assert.Contains(t, string(kc), token, "the kubeconfig holds the service account's token")
	assert.NotContains(t, out+errOut, token, "the token is never printed")
	audit, err := os.ReadFile(auditLog)
	require.NoError(t, err)
	assert.Contains(t, string(audit), "configure")
	assert.NotContains(t, string(audit), token, "nor audited")

	code, out, errOut = runWmcon(t, b.args(admin, "deconfigure", node)...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.False(t, host.Exists(nodeconfig.WICDKubeconfigPath), "deconfigure removes the kubeconfig")
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
