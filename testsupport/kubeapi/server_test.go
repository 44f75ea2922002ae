package kubeapi_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	machineclient "github.com/openshift/client-go/machine/clientset/versioned"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

var srv *kubeapi.Server

func TestMain(m *testing.M) { kubeapi.Main(m, &srv) }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestCRDsEstablished(t *testing.T) {
	ctx := testContext(t)
	client, err := apiextensionsclient.NewForConfig(srv.AdminConfig())
	require.NoError(t, err)
	for _, name := range kubeapi.AllCRDs {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, string(name), metav1.GetOptions{})
		require.NoError(t, err, name)
		require.True(t, established(crd), "%s not Established: %+v", name, crd.Status.Conditions)
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

func TestNamespacesCreated(t *testing.T) {
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	for _, ns := range []string{config.OperatorNamespace, config.MachineAPINamespace, config.OpenShiftConfigNS} {
		_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		require.NoError(t, err, ns)
	}
}

func TestMachineSetRoundTrip(t *testing.T) {
	ctx := testContext(t)
	client, err := machineclient.NewForConfig(srv.AdminConfig())
	require.NoError(t, err)
	replicas := int32(2)
	want := &machinev1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "winworker-roundtrip",
			Namespace: config.MachineAPINamespace,
			Labels:    map[string]string{config.MachineSetClusterLabel: "test-abc12"},
		},
		Spec: machinev1beta1.MachineSetSpec{
			Replicas: &replicas,
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{config.MachineSetLabel: "winworker-roundtrip"}},
			Template: machinev1beta1.MachineTemplateSpec{
				ObjectMeta: machinev1beta1.ObjectMeta{Labels: map[string]string{
					config.MachineSetLabel:  "winworker-roundtrip",
					config.MachineOSIDLabel: config.WindowsOSID,
				}},
			},
		},
	}
	sets := client.MachineV1beta1().MachineSets(config.MachineAPINamespace)
	_, err = sets.Create(ctx, want, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sets.Delete(context.Background(), want.Name, metav1.DeleteOptions{}) })

	got, err := sets.Get(ctx, want.Name, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(2), *got.Spec.Replicas)
	require.Equal(t, config.WindowsOSID, got.Spec.Template.Labels[config.MachineOSIDLabel])
	require.Equal(t, "test-abc12", got.Labels[config.MachineSetClusterLabel])
}

func TestNonAdminIsForbiddenToListSecrets(t *testing.T) {
	ctx := testContext(t)
	user := kubernetes.NewForConfigOrDie(srv.UserConfig("alice", "developers"))
	_, err := user.CoreV1().Secrets(config.OperatorNamespace).List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "want Forbidden, got %v", err)

	// Granting the right through RBAC lets the same user in: the server authenticated alice and RBAC
	// decided, rather than the request failing for some other reason.
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	grantSecretReader(t, ctx, admin, config.OperatorNamespace, "developers")
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := user.CoreV1().Secrets(config.OperatorNamespace).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	require.NoError(t, err, "alice still cannot list secrets after the RoleBinding")
}

func grantSecretReader(t *testing.T, ctx context.Context, admin kubernetes.Interface, ns, group string) {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "secret-reader", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}},
	}
	_, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err)
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "secret-reader", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}},
	}
	_, err = admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.RbacV1().RoleBindings(ns).Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
		_ = admin.RbacV1().Roles(ns).Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
}

func TestKubeconfigFileWorks(t *testing.T) {
	ctx := testContext(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", srv.AdminKubeconfig())
	require.NoError(t, err)
	version, err := kubernetes.NewForConfigOrDie(cfg).Discovery().ServerVersion()
	require.NoError(t, err)
	require.Equal(t, kubeapi.KubernetesVersion, version.GitVersion)

	cfg, err = clientcmd.BuildConfigFromFlags("", srv.Kubeconfig("bob"))
	require.NoError(t, err)
	_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Secrets(config.OperatorNamespace).List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "want Forbidden for bob, got %v", err)
}

// TestRestartKeepsData restarts the shared server's kube-apiserver; tests in this package do not run in
// parallel, so no other test sees it down.
func TestRestartKeepsData(t *testing.T) {
	ctx := testContext(t)
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "survives-restart", Namespace: config.OperatorNamespace},
		Data:       map[string]string{"127.0.0.5": "username=Administrator"},
	}
	_, err := admin.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.CoreV1().ConfigMaps(cm.Namespace).Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
	})
	hostBefore := srv.Host()

	require.NoError(t, srv.StopAPIServer())
	_, err = admin.CoreV1().ConfigMaps(cm.Namespace).Get(ctx, cm.Name, metav1.GetOptions{})
	require.Error(t, err, "the API server should be unreachable while stopped")
	require.NoError(t, srv.StartAPIServer())

	require.Equal(t, hostBefore, srv.Host())
	got, err := admin.CoreV1().ConfigMaps(cm.Namespace).Get(ctx, cm.Name, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, cm.Data, got.Data)
}

// The test API server allocates Service cluster IPs from a loopback range, so no address it hands out —
// not even the kubernetes Service's — leaves loopback, and a Service created by a test gets one too.
func TestServiceClusterIPsAreLoopback(t *testing.T) {
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	svc, err := client.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "loopback-ip"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = client.CoreV1().Services("default").Delete(context.Background(), svc.Name, metav1.DeleteOptions{})
	})
	ips := svc.Spec.ClusterIPs
	var kubernetesSvc *corev1.Service
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		kubernetesSvc, err = client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		return err == nil, nil
	}), "the kubernetes Service: %v", err)
	ips = append(ips, kubernetesSvc.Spec.ClusterIPs...)
	require.Len(t, ips, 2)
	for _, ip := range ips {
		addr, err := netip.ParseAddr(ip)
		require.NoError(t, err)
		require.True(t, addr.IsLoopback(), "cluster IP %s", ip)
	}
}
