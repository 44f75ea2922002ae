package operator_test

import (
	"context"
	"sync"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/operator"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/olm"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// olmMu serialises the tests that install WMCO: its namespace is fixed, so they share it on the one server.
var olmMu sync.Mutex

var stableCatalog = olm.Catalog{Name: cluster.DefaultCatalogSource, Channels: []string{"stable"}, DefaultChannel: "stable", Version: "11.0.1"}

// olmEnv empties WMCO's namespace of OLM objects on the shared server, seeds the catalogs and runs an OLM
// stand-in in the background until the test ends, then empties the namespace again.
func olmEnv(t *testing.T, opts olm.Options) (*actiontest.Env, *cluster.OLM) {
	t.Helper()
	olmMu.Lock()
	t.Cleanup(olmMu.Unlock)
	e := actiontest.NewEnv(t)
	clean := func() {
		ctx := context.Background()
		del := func(gvr schema.GroupVersionResource, ns string) {
			_ = e.Clients.Dynamic.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		}
		for _, gvr := range []schema.GroupVersionResource{cluster.SubscriptionResource, cluster.InstallPlanResource, cluster.CSVResource, cluster.OperatorGroupResource} {
			del(gvr, config.OperatorNamespace)
		}
		del(cluster.CatalogSourceResource, cluster.MarketplaceNamespace)
		del(cluster.PackageManifestResource, cluster.MarketplaceNamespace)
		_ = e.Kube.AppsV1().Deployments(config.OperatorNamespace).Delete(ctx, cluster.OperatorDeploymentKey, metav1.DeleteOptions{})
	}
	clean()
	sim := olm.New(e.Clients, opts)
	sim.OnError = func(err error) { t.Logf("OLM stand-in: %v", err) }
	require.NoError(t, sim.Seed(e.Ctx))
	ctx, cancel := context.WithCancel(e.Ctx)
	done := make(chan struct{})
	go func() { defer close(done); sim.Run(ctx, 60*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done; clean() })
	return e, cluster.NewOLM(e.Clients)
}

func install(t *testing.T, e *actiontest.Env, o *cluster.OLM, opts cluster.InstallOptions, answer func(event.Question) string) (*actiontest.Recorder, error) {
	rec := &actiontest.Recorder{Answer: answer}
	err := operator.InstallOperator(e.Ctx, o, operator.OperatorInstall{Options: opts, Wait: true, Poll: 10 * time.Millisecond, Timeout: time.Minute}, rec)
	return rec, err
}

func TestInstallOperatorFreshThenIdempotent(t *testing.T) {
	e, o := olmEnv(t, olm.Options{Catalogs: []olm.Catalog{stableCatalog}})
	rec, err := install(t, e, o, cluster.InstallOptions{}, nil)
	require.NoError(t, err, rec.Dump())
	f := rec.Final(t, config.OperatorName)
	require.Equal(t, event.Succeeded, f.Outcome, rec.Dump())
	require.Contains(t, f.Message, "WMCO 11.0.1 installed")
	require.Equal(t, []string{"catalog", "namespace", "operatorgroup", "subscription", "installplan", "csv", "deployment"}, rec.Steps(config.OperatorName))
	// The CSV went through its phases and the user saw them.
	require.Contains(t, rec.Dump(), "is Installing")

	st, err := o.State(e.Ctx)
	require.NoError(t, err)
	require.True(t, st.Installed())
	require.Equal(t, []string{config.OperatorNamespace}, st.OperatorGroup.Spec.TargetNamespaces)
	require.Equal(t, operatorsv1alpha1.ApprovalAutomatic, st.Subscription.Spec.InstallPlanApproval)
	ns, err := e.Kube.CoreV1().Namespaces().Get(e.Ctx, config.OperatorNamespace, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "true", ns.Labels[cluster.ClusterMonitoringKey])

	// Again: nothing changes.
	before := st.Subscription.ResourceVersion
	rec, err = install(t, e, o, cluster.InstallOptions{}, nil)
	require.NoError(t, err)
	require.Contains(t, rec.Final(t, config.OperatorName).Message, "nothing changed")
	require.Empty(t, rec.Steps(config.OperatorName))
	st, err = o.State(e.Ctx)
	require.NoError(t, err)
	require.Equal(t, before, st.Subscription.ResourceVersion)

	// Uninstall after confirmation removes the Subscription and the CSV.
	urec := &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceUninstall }}
	require.NoError(t, operator.UninstallOperator(e.Ctx, o, urec))
	require.Contains(t, urec.Dump(), "deleted Subscription "+config.OperatorName)
	require.Contains(t, urec.Dump(), "deleted ClusterServiceVersion windows-machine-config-operator.v11.0.1")
	st, err = o.State(e.Ctx)
	require.NoError(t, err)
	require.Nil(t, st.Subscription)
}

func TestUninstallNeedsConfirmation(t *testing.T) {
	e, o := olmEnv(t, olm.Options{Catalogs: []olm.Catalog{stableCatalog}})
	_, err := install(t, e, o, cluster.InstallOptions{}, nil)
	require.NoError(t, err)
	rec := &actiontest.Recorder{} // first choice: keep
	require.NoError(t, operator.UninstallOperator(e.Ctx, o, rec))
	require.Equal(t, event.Cancelled, rec.Final(t, config.OperatorName).Outcome)
	st, err := o.State(e.Ctx)
	require.NoError(t, err)
	require.True(t, st.Installed())
}

func TestInstallOperatorManualApproval(t *testing.T) {
	e, o := olmEnv(t, olm.Options{Catalogs: []olm.Catalog{stableCatalog}})
	// Left waiting: the plan stays unapproved and the action says how to approve it.
	rec, err := install(t, e, o, cluster.InstallOptions{Approval: operatorsv1alpha1.ApprovalManual}, nil)
	require.Error(t, err)
	f := rec.Final(t, config.OperatorName)
	require.Equal(t, event.Failed, f.Outcome)
	require.Contains(t, f.Hint, "--approve")
	st, err := o.State(e.Ctx)
	require.NoError(t, err)
	require.NotNil(t, st.InstallPlan)
	require.False(t, st.InstallPlan.Spec.Approved)
	require.Nil(t, st.CSV)

	// Approved: the install goes through.
	rec, err = install(t, e, o, cluster.InstallOptions{Approval: operatorsv1alpha1.ApprovalManual}, func(event.Question) string { return event.ChoiceApprove })
	require.NoError(t, err, rec.Dump())
	require.Len(t, rec.Asked(), 1)
	require.Contains(t, rec.Asked()[0].Title, "waits for approval")
	require.Equal(t, event.Succeeded, rec.Final(t, config.OperatorName).Outcome)
}

func TestInstallOperatorFailures(t *testing.T) {
	t.Run("no such catalog", func(t *testing.T) {
		e, o := olmEnv(t, olm.Options{Catalogs: []olm.Catalog{stableCatalog}})
		rec, err := install(t, e, o, cluster.InstallOptions{Source: "nope"}, nil)
		require.ErrorContains(t, err, `no CatalogSource "nope"`)
		require.ErrorContains(t, err, "there are: redhat-operators")
		require.Equal(t, event.Failed, rec.Final(t, config.OperatorName).Outcome)
		st, err := o.State(e.Ctx)
		require.NoError(t, err)
		require.Nil(t, st.Subscription, "nothing was created")
	})
	t.Run("no such channel", func(t *testing.T) {
		e, o := olmEnv(t, olm.Options{Catalogs: []olm.Catalog{stableCatalog}})
		_, err := install(t, e, o, cluster.InstallOptions{Channel: "preview"}, nil)
		require.ErrorContains(t, err, `on channels stable, not "preview"`)
	})
	t.Run("package not in catalog", func(t *testing.T) {
		e, o := olmEnv(t, olm.Options{Catalogs: []olm.Catalog{stableCatalog,
			{Name: "community-operators", Channels: []string{"stable"}, DefaultChannel: "stable", Version: "10.19.0"}}})
		// A CatalogSource exists but offers no WMCO: delete its PackageManifest.
		require.NoError(t, e.Clients.Dynamic.Resource(cluster.PackageManifestResource).Namespace(cluster.MarketplaceNamespace).
			Delete(e.Ctx, config.OperatorName+"-community-operators", metav1.DeleteOptions{}))
		_, err := install(t, e, o, cluster.InstallOptions{Source: "community-operators"}, nil)
		require.ErrorContains(t, err, "does not offer the package windows-machine-config-operator (catalogs that do: redhat-operators)")
	})
	t.Run("failed CSV", func(t *testing.T) {
		e, o := olmEnv(t, olm.Options{Catalogs: []olm.Catalog{stableCatalog},
			FailReason: operatorsv1alpha1.CSVReasonComponentFailed, FailMessage: "install timeout: deployment windows-machine-config-operator not ready"})
		rec, err := install(t, e, o, cluster.InstallOptions{}, nil)
		require.ErrorContains(t, err, "CSV windows-machine-config-operator.v11.0.1 failed: InstallComponentFailed: install timeout")
		f := rec.Final(t, config.OperatorName)
		require.Contains(t, f.Hint, "oc describe csv")
	})
	t.Run("resolution failed", func(t *testing.T) {
		e, o := olmEnv(t, olm.Options{Catalogs: []olm.Catalog{stableCatalog}})
		// A Subscription made elsewhere for a channel the catalog lacks: OLM reports ResolutionFailed.
		_, _, err := o.EnsureSubscription(e.Ctx, cluster.InstallOptions{Channel: "beta", Approval: operatorsv1alpha1.ApprovalAutomatic,
			Source: cluster.DefaultCatalogSource, SourceNamespace: cluster.MarketplaceNamespace})
		require.NoError(t, err)
		_, err = install(t, e, o, cluster.InstallOptions{}, nil)
		require.ErrorContains(t, err, "ResolutionFailed: no operators found in channel beta")
	})
}
