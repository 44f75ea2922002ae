package kubeapi_test

import (
	"testing"

	configclient "github.com/openshift/client-go/config/clientset/versioned"
	machineclient "github.com/openshift/client-go/machine/clientset/versioned"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// TestCRDSubsetAndChanges runs a server of its own with only the MachineSet CRD and no WMCO namespaces,
// then adds and removes CRDs while it runs.
func TestCRDSubsetAndChanges(t *testing.T) {
	ctx := testContext(t)
	s := kubeapi.Start(t, kubeapi.WithCRDs(kubeapi.MachineSets), kubeapi.WithNamespaces())
	admin := kubernetes.NewForConfigOrDie(s.AdminConfig())
	machines := machineclient.NewForConfigOrDie(s.AdminConfig())
	configs := configclient.NewForConfigOrDie(s.AdminConfig())

	_, err := machines.MachineV1beta1().MachineSets(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	_, err = admin.Discovery().ServerResourcesForGroupVersion("config.openshift.io/v1")
	require.True(t, apierrors.IsNotFound(err), "config.openshift.io should be absent, got %v", err)
	_, err = admin.CoreV1().Namespaces().Get(ctx, config.MachineAPINamespace, metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "no namespaces were asked for, got %v", err)

	s.InstallCRDs(t, kubeapi.ImageDigestMirrorSets)
	_, err = configs.ConfigV1().ImageDigestMirrorSets().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)

	s.DeleteCRDs(t, kubeapi.MachineSets)
	_, err = machines.MachineV1beta1().MachineSets(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsNotFound(err), "MachineSets should be gone, got %v", err)
}
