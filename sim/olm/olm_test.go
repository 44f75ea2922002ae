package olm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/olm"
)

// FakeClients are the demo's kind of clients with OLM's list kinds registered.
func FakeClients() cluster.Clients {
	kinds := map[schema.GroupVersionResource]string{}
	for gvr, kind := range olm.ListKinds {
		kinds[gvr] = kind
	}
	kube := kubefake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.OperatorNamespace}})
	return cluster.Clients{Kube: kube, Dynamic: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds)}
}

func TestInstallProgressesOnFakeClients(t *testing.T) {
	ctx := context.Background()
	c := FakeClients()
	sim := olm.New(c, olm.Options{Catalogs: []olm.Catalog{{Name: cluster.DefaultCatalogSource, Channels: []string{"stable"}, DefaultChannel: "stable", Version: "11.0.1"}}})
	require.NoError(t, sim.Seed(ctx))
	o := cluster.NewOLM(c)
	opts, err := cluster.InstallOptions{}.Defaults()
	require.NoError(t, err)
	_, err = o.CheckCatalog(ctx, opts)
	require.NoError(t, err)
	_, err = o.EnsureOperatorGroup(ctx)
	require.NoError(t, err)
	_, _, err = o.EnsureSubscription(ctx, opts)
	require.NoError(t, err)
	var phases []string
	for i := 0; i < 10; i++ {
		require.NoError(t, sim.Reconcile(ctx))
		st, err := o.State(ctx)
		require.NoError(t, err)
		if st.CSV != nil {
			phases = append(phases, string(st.CSV.Status.Phase))
		}
		if st.Installed() {
			require.True(t, st.DeploymentAvailable())
			break
		}
	}
	require.Equal(t, []string{"Pending", "InstallReady", "Installing", "Succeeded"}, phases)
}
