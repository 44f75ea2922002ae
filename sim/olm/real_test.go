package olm_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/sim/olm"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// The stand-in's objects must be ones the real API server accepts with OLM's own CRDs.
func TestInstallProgressesOnRealAPIServer(t *testing.T) {
	srv := kubeapi.Start(t, kubeapi.WithCRDs(kubeapi.OLMCRDs...))
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sim := olm.New(c, olm.Options{Catalogs: []olm.Catalog{{Name: cluster.DefaultCatalogSource, Channels: []string{"stable"}, DefaultChannel: "stable", Version: "11.0.1"}}})
	require.NoError(t, sim.Seed(ctx))
	o := cluster.NewOLM(c)
	opts, err := cluster.InstallOptions{}.Defaults()
	require.NoError(t, err)
	_, err = o.EnsureNamespace(ctx)
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
