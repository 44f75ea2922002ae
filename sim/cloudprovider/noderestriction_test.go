package cloudprovider_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/sim/cloudprovider"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// What a node's own credentials (system:node:<name>, the identity in C:\k\kubeconfig) may not do to its Node,
// asked of the real API server with NodeRestriction enabled, as on OpenShift: it cannot remove the cloud
// provider's uninitialized taint, which is cloud-node-manager's job, nor label itself outside the kubelet's
// labels. That is why WMCO runs cloud-node-manager with another identity (C:\k\wicd-kubeconfig).
func TestNodeCredentialsCannotInitializeTheirNode(t *testing.T) {
	srv := kubeapi.Start(t)
	ctx := context.Background()
	const name = "win-restricted"
	node, err := kubernetes.NewForConfig(srv.UserConfig("system:node:"+name, "system:nodes"))
	require.NoError(t, err)
	// The kubelet registers its Node with the taint (NodeRestriction allows taints at creation).
	_, err = node.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: cloudprovider.TaintUninitialized, Value: "true", Effect: corev1.TaintEffectNoSchedule}}}},
		metav1.CreateOptions{})
	require.NoError(t, err)

	patch := func(spec map[string]any) error {
		b, err := json.Marshal(spec)
		require.NoError(t, err)
		_, err = node.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{})
		return err
	}
	err = patch(map[string]any{"spec": map[string]any{"taints": []corev1.Taint{}}})
	require.Error(t, err, "a node removed its own uninitialized taint")
	assert.True(t, apierrors.IsForbidden(err), "%v", err)
	assert.Contains(t, err.Error(), "is not allowed to modify taints")

	err = patch(map[string]any{"metadata": map[string]any{"labels": map[string]string{"node-role.kubernetes.io/worker": ""}}})
	require.Error(t, err, "a node gave itself a role label")
	assert.True(t, apierrors.IsForbidden(err), "%v", err)

	// The same patch by an identity RBAC allows (cloud-node-manager's) goes through.
	admin, err := kubernetes.NewForConfig(srv.AdminConfig())
	require.NoError(t, err)
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"taints": []corev1.Taint{}, "providerID": "azure:///subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/" + name}})
	_, err = admin.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{})
	require.NoError(t, err)
}
