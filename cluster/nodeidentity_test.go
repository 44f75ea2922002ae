package cluster_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// seedAzure makes the test API server an OpenShift cluster on Azure, whose nodes run cloud-node-manager.
func seedAzure(t *testing.T, ctx context.Context, c cluster.Clients, apiURL string) {
	t.Helper()
	infras := c.Config.ConfigV1().Infrastructures()
	infra, err := infras.Create(ctx, &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: config.ClusterSingletonName}}, metav1.CreateOptions{})
	require.NoError(t, err)
	infra.Status = configv1.InfrastructureStatus{InfrastructureName: "azure-x1y2z", APIServerInternalURL: apiURL,
		ControlPlaneTopology: configv1.HighlyAvailableTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
		PlatformStatus: &configv1.PlatformStatus{Type: configv1.AzurePlatformType}}
	_, err = infras.UpdateStatus(ctx, infra, metav1.UpdateOptions{})
	require.NoError(t, err)
	_, err = c.Config.ConfigV1().Networks().Create(ctx, &configv1.Network{ObjectMeta: metav1.ObjectMeta{Name: config.ClusterSingletonName},
		Spec: configv1.NetworkSpec{ServiceNetwork: []string{"172.30.0.0/16"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// initializeWith removes the uninitialized taint of a Node with the credentials of a kubeconfig.
func initializeWith(ctx context.Context, kubeconfig []byte, node string) error {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"taints": []corev1.Taint{}}})
	_, err = kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, b, metav1.PatchOptions{})
	return err
}

// On Azure, cloud-node-manager runs with C:\k\wicd-kubeconfig. Standalone, wmcon makes its service account
// (namespace, ClusterRole with only what the manager needs, binding, long-lived token filled by the real
// token controller), nothing in a dry run, the same token on every run, and refuses to take over an object
// it did not create; the kubeconfig it writes may initialize a Node, which the node's own credentials may not.
// With WMCO installed it uses WMCO's node daemon's account and token secret, as WMCO does.
func TestCloudNodeManagerIdentity(t *testing.T) {
	s := kubeapi.Start(t, kubeapi.WithControllerManager())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clients, err := cluster.NewClients(s.AdminConfig())
	require.NoError(t, err)
	seedAzure(t, ctx, clients, s.Host())
	ops := cluster.NewOps(clients)
	kube := clients.Kube

	nf, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{DryRun: true})
	require.NoError(t, err)
	assert.NotEmpty(t, nf.Facts.WICDToken, "a placeholder for the plan")
	_, err = kube.CoreV1().Namespaces().Get(ctx, cluster.IdentityNamespace, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "a dry run creates nothing: %v", err)

	nf, err = ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, nf.Facts.WICDToken)
	assert.Contains(t, nf.Notes, "created the token secret "+cluster.IdentityNamespace+"/"+cluster.NodeManagerTokenSecret+" of service account "+cluster.NodeManagerAccount+" for cloud-node-manager")
	role, err := kube.RbacV1().ClusterRoles().Get(ctx, cluster.NodeManagerRole, metav1.GetOptions{})
	require.NoError(t, err)
	for _, r := range role.Rules {
		assert.NotContains(t, r.Resources, "secrets", "only what cloud-node-manager needs")
		assert.NotContains(t, r.Verbs, "delete")
	}
	again, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	assert.Equal(t, nf.Facts.WICDToken, again.Facts.WICDToken, "the same token on every run")
	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}})
	_, err = kube.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{})
	require.NoError(t, err)
	_, err = ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	role, err = kube.RbacV1().ClusterRoles().Get(ctx, cluster.NodeManagerRole, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Len(t, role.Rules, 3, "wmcon's own role is brought back to what cloud-node-manager needs")

	// What the kubeconfig's identity may do, and the node's own may not.
	const node = "win-azure-id"
	nodeKube, err := kubernetes.NewForConfig(s.UserConfig("system:node:"+node, "system:nodes"))
	require.NoError(t, err)
	_, err = nodeKube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule}}}},
		metav1.CreateOptions{})
	require.NoError(t, err)
	nodeKC, err := clientcmd.LoadFromFile(s.Kubeconfig("system:node:"+node, "system:nodes"))
	require.NoError(t, err)
	nodeKCBytes, err := clientcmd.Write(*nodeKC)
	require.NoError(t, err)
	err = initializeWith(ctx, nodeKCBytes, node)
	assert.True(t, apierrors.IsForbidden(err), "the node's own credentials may not: %v", err)
	wicd, err := nodeconfig.WICDKubeconfig(nf.Facts)
	require.NoError(t, err)
	require.NoError(t, initializeWith(ctx, wicd, node), "cloud-node-manager's may")
	cfg, err := clientcmd.RESTConfigFromKubeConfig(wicd)
	require.NoError(t, err)
	_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "and nothing more: %v", err)

	// An object of that name wmcon did not create is not taken over.
	require.NoError(t, kube.CoreV1().Secrets(cluster.IdentityNamespace).Delete(ctx, cluster.NodeManagerTokenSecret, metav1.DeleteOptions{}))
	require.NoError(t, kube.RbacV1().ClusterRoles().Delete(ctx, cluster.NodeManagerRole, metav1.DeleteOptions{}))
	_, err = kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: cluster.NodeManagerRole}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.ErrorContains(t, err, "ClusterRole "+cluster.NodeManagerRole+" exists and wmcon did not create it")

	// With WMCO installed: its node daemon's account, its token secret created as WMCO creates it.
	installOperatorOn(t, s, "11.0.0")
	_, err = kube.CoreV1().ServiceAccounts(config.OperatorNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: cluster.WICDAccount}}, metav1.CreateOptions{})
	require.NoError(t, err)
	withOperator, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	secret, err := kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, cluster.WICDAccount, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.SecretTypeServiceAccountToken, secret.Type)
	assert.Equal(t, cluster.WICDAccount, secret.Annotations[corev1.ServiceAccountNameKey])
	assert.Equal(t, string(secret.Data[corev1.ServiceAccountTokenKey]), withOperator.Facts.WICDToken)
}
