package cluster_test

import (
	"context"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

func infraOf(p configv1.PlatformType) *configv1.Infrastructure {
	return &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Status: configv1.InfrastructureStatus{InfrastructureName: "demo-7xk2p", PlatformStatus: &configv1.PlatformStatus{Type: p}}}
}

// The MachineSet generated for each platform is accepted by the real MachineSet CRD, keeps a providerSpec that
// still decodes strictly once stored, and is then applied again, scaled and deleted through the API server.
func TestGeneratedMachineSetsOnTheRealCRD(t *testing.T) {
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ops := cluster.NewMachineSets(c)
	sets := c.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace)
	for _, p := range []configv1.PlatformType{configv1.AWSPlatformType, configv1.AzurePlatformType, configv1.VSpherePlatformType,
		configv1.GCPPlatformType, configv1.NutanixPlatformType} {
		tc := cluster.MachineSetCases(t)[p]
		t.Run(string(p), func(t *testing.T) {
			ms, err := cluster.GenerateMachineSet(infraOf(p), tc.Workers, tc.Req)
			require.NoError(t, err)
			before, err := ops.Get(ctx, ms.Name)
			require.NoError(t, err)
			require.Nil(t, before, "none of that name yet")
			require.NoError(t, ops.Create(ctx, ms), "the real CRD accepts the generated MachineSet")
			t.Cleanup(func() {
				if err := sets.Delete(context.Background(), ms.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("clean up MachineSet %s: %v", ms.Name, err)
				}
			})
			stored, err := sets.Get(ctx, ms.Name, metav1.GetOptions{})
			require.NoError(t, err)
			_, err = cluster.DecodeProviderSpec(p, stored.Spec.Template.Spec.ProviderSpec.Value.Raw)
			require.NoError(t, err, "the stored providerSpec decodes strictly")
			require.NoError(t, cluster.ValidateMachineSet(p, stored))
			require.Equal(t, config.WindowsOSID, stored.Spec.Template.Labels[config.MachineOSIDLabel])

			require.Error(t, ops.Create(ctx, ms), "a second create never replaces it")
			cur, err := ops.Get(ctx, ms.Name)
			require.NoError(t, err)
			require.True(t, cluster.IsWindowsMachineSet(cur))
			require.Empty(t, cluster.MachineSetChanges(cur, ms), "as generated")
			two := ms.DeepCopy()
			two.Spec.Replicas = ptr.To[int32](2)
			require.Equal(t, []string{"replicas: 1 → 2"}, cluster.MachineSetChanges(cur, two))
			require.NoError(t, ops.Replace(ctx, cur, two))
			err = ops.Replace(ctx, cur, ms)
			require.ErrorContains(t, err, "changed since wmcon read it", "a replace based on an old read is refused")

			was, err := ops.Scale(ctx, ms.Name, 3)
			require.NoError(t, err)
			require.Equal(t, int32(2), was)
			stored, err = sets.Get(ctx, ms.Name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, int32(3), *stored.Spec.Replicas)

			require.NoError(t, ops.Delete(ctx, ms.Name))
			_, err = sets.Get(ctx, ms.Name, metav1.GetOptions{})
			require.True(t, apierrors.IsNotFound(err), "deleted: %v", err)
		})
	}
}

// The nodes a MachineSet deletion takes with it are those of its Machines, read through the API server.
func TestMachineSetNodesOfReadsItsMachines(t *testing.T) {
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	machines := c.Machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	for i, node := range []string{"win-b", "win-a", ""} {
		m := &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "nodesof-" + string(rune('a'+i)), Namespace: config.MachineAPINamespace,
			Labels: map[string]string{config.MachineSetLabel: "nodesof-set"}}}
		created, err := machines.Create(ctx, m, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = machines.Delete(context.Background(), created.Name, metav1.DeleteOptions{}) })
		if node != "" {
			created.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node}
			_, err = machines.UpdateStatus(ctx, created, metav1.UpdateOptions{})
			require.NoError(t, err)
		}
	}
	nodes, err := cluster.NewMachineSets(c).NodesOf(ctx, "nodesof-set")
	require.NoError(t, err)
	require.Equal(t, []string{"win-a", "win-b"}, nodes, "sorted; a Machine without a node adds none")
}
