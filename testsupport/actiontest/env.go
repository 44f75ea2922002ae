// Package actiontest holds what the tests of the actions' feature packages share: a real API server per test
// binary (Main), a namespace of its own per test (Env), simulated Windows hosts over real SSH (Hosts,
// LogHosts), a Sink that records what an action reports (Recorder), and seeded clusters for the doctor and
// the setup (DoctorCluster). The wmcon binary never links it.
package actiontest

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/session"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// Server is the real etcd + kube-apiserver that the tests of one test binary share (Main starts it).
var Server *kubeapi.Server

// Env is a test's cluster: clients of the real API server, wmcon's node operations, a namespace of its own.
type Env struct {
	T       *testing.T
	Ctx     context.Context
	Kube    kubernetes.Interface
	Clients cluster.Clients
	Ops     *cluster.Ops
	NS      string
}

func NewEnv(t *testing.T) *Env {
	t.Helper()
	clients, err := cluster.NewClients(Server.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	e := &Env{T: t, Ctx: ctx, Kube: clients.Kube, Clients: clients, Ops: cluster.NewOps(clients), NS: "t-" + DNS(t.Name()) + "-" + strings.ToLower(rand.Text()[:5])}
	_, err = e.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.NS}}, metav1.CreateOptions{})
	require.NoError(t, err)
	e.Ops.DrainRetryDelay = 100 * time.Millisecond // PodDisruptionBudget retries, fast
	// No controller-manager runs: create the ServiceAccount that pod admission looks for, and remove the pods
	// at the end ourselves (no namespace or pod GC controller would), so a later run's drain does not find
	// them bound to a node of the same name.
	_, err = e.Kube.CoreV1().ServiceAccounts(e.NS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = e.Kube.CoreV1().Pods(e.NS).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{})
	})
	return e
}

func DNS(s string) string {
	b := []byte{}
	for _, c := range []byte(s) {
		switch {
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b = append(b, c)
		default:
			b = append(b, '-')
		}
	}
	if len(b) > 50 {
		b = b[len(b)-50:]
	}
	return string(b)
}

// Node registers a Node, Windows or Linux, Ready, on address ip.
func (e *Env) Node(name, ip string, windows bool) {
	e.T.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{config.OSLabel: "linux"}}}
	if windows {
		n.Labels = map[string]string{config.OSLabel: "windows", config.WindowsBuildLabel: "10.0.20348"}
	}
	created, err := e.Kube.CoreV1().Nodes().Create(e.Ctx, n, metav1.CreateOptions{})
	require.NoError(e.T, err)
	e.T.Cleanup(func() { _ = e.Kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	// The OVN stand-in annotates a new Windows Node with its subnet meanwhile: on a conflict, read it again.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		now := metav1.Now()
		created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
		created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now}}
		_, err := e.Kube.CoreV1().Nodes().UpdateStatus(e.Ctx, created, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if latest, getErr := e.Kube.CoreV1().Nodes().Get(e.Ctx, name, metav1.GetOptions{}); getErr == nil {
				created = latest
			}
		}
		return err
	})
	require.NoError(e.T, err)
}

// Pod runs a Ready pod on node, owned by a ReplicaSet (or by owner when given), with labels app=<app>.
func (e *Env) Pod(name, node, app string, owner *metav1.OwnerReference) *corev1.Pod {
	e.T.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.NS, Labels: map[string]string{"app": app}}}
	if owner == nil {
		owner = &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-rs", UID: types.UID(fmt.Sprintf("0a0a0a0a-0000-0000-0000-%012d", len(app))), Controller: ptr.To(true)}
	}
	p.OwnerReferences = []metav1.OwnerReference{*owner}
	p.Spec.NodeName = node
	p.Spec.AutomountServiceAccountToken = ptr.To(false)
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/servercore:ltsc2022"}}
	created, err := e.Kube.CoreV1().Pods(e.NS).Create(e.Ctx, p, metav1.CreateOptions{})
	require.NoError(e.T, err)
	created.Status.Phase = corev1.PodRunning
	created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	created, err = e.Kube.CoreV1().Pods(e.NS).UpdateStatus(e.Ctx, created, metav1.UpdateOptions{})
	require.NoError(e.T, err)
	return created
}

// DaemonSet creates a real DaemonSet (the drain helper looks it up) and returns a controller reference to it.
func (e *Env) DaemonSet(name string) *metav1.OwnerReference {
	e.T.Helper()
	labels := map[string]string{"app": name}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.NS}}
	ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	ds.Spec.Template.Labels = labels
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/servercore:ltsc2022"}}
	created, err := e.Kube.AppsV1().DaemonSets(e.NS).Create(e.Ctx, ds, metav1.CreateOptions{})
	require.NoError(e.T, err)
	return &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: name, UID: created.UID, Controller: ptr.To(true)}
}

// BlockingPDB creates a PodDisruptionBudget over app=<app> that allows no disruption, with the status the
// disruption controller would write (no controller-manager runs here), so the API server refuses evictions.
func (e *Env) BlockingPDB(name, app string) {
	e.T.Helper()
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.NS}}
	pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(1))
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	created, err := e.Kube.PolicyV1().PodDisruptionBudgets(e.NS).Create(e.Ctx, pdb, metav1.CreateOptions{})
	require.NoError(e.T, err)
	created.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: created.Generation, DisruptionsAllowed: 0,
		CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	_, err = e.Kube.PolicyV1().PodDisruptionBudgets(e.NS).UpdateStatus(e.Ctx, created, metav1.UpdateOptions{})
	require.NoError(e.T, err)
}

// PodsOn lists the names of the pods of the test's namespace bound to node.
func (e *Env) PodsOn(node string) []string {
	e.T.Helper()
	l, err := e.Kube.CoreV1().Pods(e.NS).List(e.Ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	require.NoError(e.T, err)
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Name)
	}
	return out
}

func (e *Env) NodeInfo(name string) model.NodeInfo {
	e.T.Helper()
	n, err := e.Ops.Node(e.Ctx, name)
	require.NoError(e.T, err)
	return n
}

func (e *Env) Hosts() *Hosts {
	e.T.Helper()
	return e.HostsWith(kubelet.Options{Interval: 50 * time.Millisecond, Grace: 300 * time.Millisecond})
}

// HostsWith is hosts with simulated kubelets tuned by opts (for example kubelets that report late).
func (e *Env) HostsWith(opts kubelet.Options) *Hosts {
	t := e.T
	t.Helper()
	signer, pool := NewTestPool(t)
	k := kubelet.New(e.Kube, nil, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() { k.Run(ctx); close(done) }()
	return &Hosts{T: t, Signer: signer, Pool: pool, Kubelets: k, Sims: map[string]*windows.Host{}, Kube: e.Kube,
		Resolver: &session.PoolResolver{Pool: pool, Addrs: map[string]string{}}}
}

// WatchedBackends are backends whose snapshot is a real watcher's over the test's API server.
func (e *Env) WatchedBackends() actions.Backends {
	e.T.Helper()
	w := cluster.NewWatcher(e.Clients, cluster.Target{Server: Server.AdminConfig().Host, Context: "test"}, cluster.WatcherOptions{Coalesce: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	e.T.Cleanup(cancel)
	go w.Run(ctx)
	snapshot := func(ctx context.Context) (*model.Snapshot, error) {
		for {
			if s := w.Current(); s != nil && s.Resources[model.ResNodes].Availability == model.Available {
				return s, nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return actions.Backends{Cluster: e.Ops, Snapshot: snapshot, Configure: &actions.ConfigureBackends{Cluster: e.Ops}}
}

// WindowsMachine backs node with a Running Windows Machine of MachineSet ms.
func (e *Env) WindowsMachine(ms, node, ip string) {
	e.T.Helper()
	machines := e.Clients.Machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	m, err := machines.Create(e.Ctx, &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels: map[string]string{config.MachineOSIDLabel: config.WindowsOSID, config.MachineSetLabel: ms}}}, metav1.CreateOptions{})
	require.NoError(e.T, err)
	e.T.Cleanup(func() { _ = machines.Delete(context.Background(), node, metav1.DeleteOptions{}) })
	m.Status.Phase = ptr.To("Running")
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node}
	m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	_, err = machines.UpdateStatus(e.Ctx, m, metav1.UpdateOptions{})
	require.NoError(e.T, err)
}

func (e *Env) PatchNode(name, patch string) {
	e.T.Helper()
	_, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(e.T, err)
}

// Main starts one real API server (etcd and kube-apiserver) for a test binary, as Server, runs its tests
// and stops it: a feature package's TestMain.
func Main(m *testing.M) { kubeapi.Main(m, &Server) }
