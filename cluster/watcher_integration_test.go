package cluster_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	machineclient "github.com/openshift/client-go/machine/clientset/versioned"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// srv is one real etcd + kube-apiserver shared by this package's tests.
var srv *kubeapi.Server

func TestMain(m *testing.M) { kubeapi.Main(m, &srv) }

// startWatcher runs a watcher with cfg's identity until the test ends.
func startWatcher(t *testing.T, cfg *rest.Config) *cluster.Watcher {
	t.Helper()
	clients, err := cluster.NewClients(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w := cluster.NewWatcher(clients, cluster.Target{Server: cfg.Host, Context: "test"}, cluster.WatcherOptions{Coalesce: 10 * time.Millisecond})
	go w.Run(ctx)
	return w
}

// waitFor reads snapshots until ok accepts one; a bounded wait so a broken watcher fails the test.
func waitFor(t *testing.T, w *cluster.Watcher, what string, ok func(*model.Snapshot) bool) *model.Snapshot {
	t.Helper()
	return waitWithin(t, w, 30*time.Second, what, ok)
}

// waitWithin is waitFor with its own limit (benchmarks with thousands of nodes need longer).
func waitWithin(tb testing.TB, w *cluster.Watcher, limit time.Duration, what string, ok func(*model.Snapshot) bool) *model.Snapshot {
	tb.Helper()
	if s := w.Current(); s != nil && ok(s) {
		return s
	}
	deadline := time.After(limit)
	for {
		select {
		case s := <-w.Snapshots():
			if ok(s) {
				return s
			}
		case <-deadline:
			s := w.Current()
			if s == nil {
				tb.Fatalf("timed out waiting until %s: no snapshot", what)
			}
			tb.Fatalf("timed out waiting until %s; last snapshot: %d nodes, %d MachineSets, resources %+v, connection %+v",
				what, len(s.Nodes), len(s.MachineSets), s.Resources, s.Connection)
		}
	}
}

func available(rs ...model.Resource) func(*model.Snapshot) bool {
	return func(s *model.Snapshot) bool {
		for _, r := range rs {
			if s.Resources[r].Availability != model.Available {
				return false
			}
		}
		return true
	}
}

func windowsNode(name, ip string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{config.OSLabel: "windows", config.WindowsBuildLabel: "10.0.20348"},
			Annotations: map[string]string{config.VersionAnnotation: "11.0.1-abc"}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}},
	}
}

func windowsMachineSet(name string) *machinev1beta1.MachineSet {
	ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: config.MachineAPINamespace}}
	ms.Spec.Replicas = ptr.To[int32](2)
	sel := map[string]string{config.MachineSetLabel: name}
	ms.Spec.Selector.MatchLabels = sel
	ms.Spec.Template.ObjectMeta.Labels = map[string]string{config.MachineSetLabel: name, config.MachineOSIDLabel: config.WindowsOSID}
	return ms
}

func TestObjectsAppearChangeAndDisappear(t *testing.T) {
	ctx := context.Background()
	cfg := srv.AdminConfig()
	kube := kubernetes.NewForConfigOrDie(cfg)
	machines := machineclient.NewForConfigOrDie(cfg)
	conf := configclient.NewForConfigOrDie(cfg)
	w := startWatcher(t, cfg)
	waitFor(t, w, "nodes, MachineSets and mirrors are watched", available(model.ResNodes, model.ResMachineSets, model.ResIDMS))

	_, err := kube.CoreV1().Nodes().Create(ctx, windowsNode("win-appear", "127.0.0.2"), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, "win-appear", metav1.DeleteOptions{}) })
	_, err = machines.MachineV1beta1().MachineSets(config.MachineAPINamespace).Create(ctx, windowsMachineSet("winworker-a"), metav1.CreateOptions{})
	require.NoError(t, err)
	idms := &configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "mirrors"}}
	idms.Spec.ImageDigestMirrors = []configv1.ImageDigestMirrors{{Source: "mcr.microsoft.com/oss/kubernetes/pause", Mirrors: []configv1.ImageMirror{"quay.io/me/oss/kubernetes/pause"}}}
	_, err = conf.ConfigV1().ImageDigestMirrorSets().Create(ctx, idms, metav1.CreateOptions{})
	require.NoError(t, err)

	s := waitFor(t, w, "the node, MachineSet and mirror appear", func(s *model.Snapshot) bool {
		_, node := s.Node("win-appear")
		return node && len(s.MachineSets) == 1 && len(s.Mirrors) == 1
	})
	n, _ := s.Node("win-appear")
	assert.True(t, n.Windows)
	assert.Equal(t, "127.0.0.2", n.InternalIP)
	assert.True(t, s.MachineSets[0].Windows)
	assert.Equal(t, int32(2), s.MachineSets[0].Desired)
	assert.Equal(t, []string{"quay.io/me/oss/kubernetes/pause"}, s.Mirrors[0].Mirrors)

	node, err := kube.CoreV1().Nodes().Get(ctx, "win-appear", metav1.GetOptions{})
	require.NoError(t, err)
	node.Spec.Unschedulable = true
	_, err = kube.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
	require.NoError(t, err)
	waitFor(t, w, "the cordon shows", func(s *model.Snapshot) bool {
		n, ok := s.Node("win-appear")
		return ok && n.Unschedulable
	})

	require.NoError(t, kube.CoreV1().Nodes().Delete(ctx, "win-appear", metav1.DeleteOptions{}))
	require.NoError(t, machines.MachineV1beta1().MachineSets(config.MachineAPINamespace).Delete(ctx, "winworker-a", metav1.DeleteOptions{}))
	require.NoError(t, conf.ConfigV1().ImageDigestMirrorSets().Delete(ctx, "mirrors", metav1.DeleteOptions{}))
	waitFor(t, w, "the objects disappear", func(s *model.Snapshot) bool {
		_, node := s.Node("win-appear")
		return !node && len(s.MachineSets) == 0 && len(s.Mirrors) == 0
	})
}

func TestForbiddenResourceSaysWhatIsDenied(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	// The viewer may read nodes and the WMCO namespace, but not MachineSets.
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "wmcon-viewer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "secrets", "configmaps"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
	}}
	_, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err)
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "wmcon-viewer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "wmcon-viewer"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "viewer", APIGroup: "rbac.authorization.k8s.io"}}}
	_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, "wmcon-viewer", metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(ctx, "wmcon-viewer", metav1.DeleteOptions{})
	})

	w := startWatcher(t, srv.UserConfig("viewer"))
	s := waitFor(t, w, "MachineSets are forbidden and nodes available", func(s *model.Snapshot) bool {
		return s.Resources[model.ResMachineSets].Availability == model.Forbidden && available(model.ResNodes, model.ResIDMS)(s)
	})
	msg := s.Resources[model.ResMachineSets].Message
	assert.Contains(t, msg, `"viewer"`)
	assert.Contains(t, msg, "machinesets")
	assert.Contains(t, msg, "list")
	assert.True(t, s.Connection.Connected, "a forbidden resource is not a lost connection")
}

func TestMissingCRDSaysNotAvailable(t *testing.T) {
	plain := kubeapi.Start(t, kubeapi.WithCRDs(kubeapi.Infrastructures, kubeapi.ClusterVersions))
	w := startWatcher(t, plain.AdminConfig())
	s := waitFor(t, w, "nodes are available", available(model.ResNodes, model.ResInfrastructure))
	for _, r := range []model.Resource{model.ResMachineSets, model.ResMachines, model.ResIDMS, model.ResITMS, model.ResCSV} {
		assert.Equal(t, model.NotInstalled, s.Resources[r].Availability, r)
		assert.Contains(t, s.Resources[r].Message, "not available on this cluster", r)
	}
}

// countingTransport counts LIST requests: GETs of a collection that are not watches.
type countingTransport struct {
	next  http.RoundTripper
	lists atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.URL.Query().Get("watch") != "true" && isCollection(r.URL.Path) {
		c.lists.Add(1)
	}
	return c.next.RoundTrip(r)
}

// isCollection says whether an API path names a collection (/api/v1/nodes, /apis/g/v/namespaces/n/r)
// rather than one object or a discovery document.
func isCollection(path string) bool {
	var rest []string
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return false
	}
	return len(rest) == 1 || len(rest) == 3 && rest[0] == "namespaces"
}

func TestIdleConsoleMakesNoListRequests(t *testing.T) {
	cfg := srv.AdminConfig()
	counter := &countingTransport{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	w := startWatcher(t, cfg)
	waitFor(t, w, "everything is synced", func(s *model.Snapshot) bool {
		for _, st := range s.Resources {
			if st.Availability != model.Available {
				return false
			}
		}
		return true
	})
	initial := counter.lists.Load()
	time.Sleep(3 * time.Second) // idle: informers only hold their watches open
	assert.Equal(t, initial, counter.lists.Load(), "list requests while idle")
}

func TestSurvivesAPIServerRestart(t *testing.T) {
	ctx := context.Background()
	w := startWatcher(t, srv.AdminConfig())
	waitFor(t, w, "nodes are watched", available(model.ResNodes))

	require.NoError(t, srv.StopAPIServer())
	s := waitFor(t, w, "the connection is reported lost", func(s *model.Snapshot) bool { return !s.Connection.Connected })
	assert.NotEmpty(t, s.Connection.LastError)

	require.NoError(t, srv.StartAPIServer())
	waitFor(t, w, "the connection is back", func(s *model.Snapshot) bool { return s.Connection.Connected })

	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	_, err := kube.CoreV1().Nodes().Create(ctx, windowsNode("win-after-restart", "127.0.0.9"), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, "win-after-restart", metav1.DeleteOptions{}) })
	waitFor(t, w, "a node created after the restart appears", func(s *model.Snapshot) bool {
		_, ok := s.Node("win-after-restart")
		return ok
	})
}
