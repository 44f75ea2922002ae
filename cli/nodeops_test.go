package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/kubelet"
)

// nodeEnv is a namespace and nodes of the shared test server, for the headless node commands.
type nodeEnv struct {
	t    *testing.T
	ctx  context.Context
	kube kubernetes.Interface
	ns   string
}

func newNodeEnv(t *testing.T, ns string) *nodeEnv {
	t.Helper()
	ctx := context.Background()
	ns += "-" + strings.ToLower(rand.Text()[:5]) // unique per run: namespaces never finish deleting without a controller-manager
	e := &nodeEnv{t: t, ctx: ctx, kube: kubernetes.NewForConfigOrDie(srv.AdminConfig()), ns: ns}
	_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// No controller-manager runs: create the ServiceAccount that pod admission looks for.
	_, err = e.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { // no pod GC runs: leave no pod bound to a node name a later run reuses
		_ = e.kube.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{})
	})
	return e
}

func (e *nodeEnv) node(name string, windows bool) {
	e.t.Helper()
	os := "linux"
	if windows {
		os = "windows"
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{config.OSLabel: os}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.99"}}}}
	_, err := e.kube.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = e.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func (e *nodeEnv) pod(name, node, app string) {
	e.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{"app": app},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app, UID: types.UID("00000000-0000-0000-0000-00000000000" + app[:1]), Controller: ptr.To(true)}}}}
	p.Spec.NodeName = node
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/servercore:ltsc2022"}}
	created, err := e.kube.CoreV1().Pods(e.ns).Create(e.ctx, p, metav1.CreateOptions{})
	require.NoError(e.t, err)
	created.Status.Phase = corev1.PodRunning
	created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	_, err = e.kube.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, created, metav1.UpdateOptions{})
	require.NoError(e.t, err)
}

// blockingBudget creates a PodDisruptionBudget selecting app=APP with the status the disruption controller
// (which does not run here) would write for one healthy pod it must keep: no disruption allowed.
func (e *nodeEnv) blockingBudget(name, app string) {
	e.t.Helper()
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}}
	pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(1))
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	created, err := e.kube.PolicyV1().PodDisruptionBudgets(e.ns).Create(e.ctx, pdb, metav1.CreateOptions{})
	require.NoError(e.t, err)
	created.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: created.Generation, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	_, err = e.kube.PolicyV1().PodDisruptionBudgets(e.ns).UpdateStatus(e.ctx, created, metav1.UpdateOptions{})
	require.NoError(e.t, err)
}

func (e *nodeEnv) cordoned(name string) bool {
	e.t.Helper()
	n, err := e.kube.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
	require.NoError(e.t, err)
	return n.Spec.Unschedulable
}

func (e *nodeEnv) podsOn(node string) []string {
	e.t.Helper()
	l, err := e.kube.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	require.NoError(e.t, err)
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Name)
	}
	return out
}

// upHost is a host that is always up with its kubelet running, for the simulated kubelet.
type upHost struct{}

func (upHost) Up() bool                   { return true }
func (upHost) ServiceRunning(string) bool { return true }

// kubelets runs simulated kubelets for nodes until the test ends, so drained pods finish terminating.
func (e *nodeEnv) kubelets(nodes ...string) {
	hosts := map[string]kubelet.Host{}
	for _, n := range nodes {
		hosts[n] = upHost{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	go kubelet.New(e.kube, hosts, kubelet.Options{Interval: 50 * time.Millisecond}).Run(ctx)
}

func kubeconfigArgs(t *testing.T, args ...string) []string {
	return append([]string{"--kubeconfig", srv.AdminKubeconfig(), "--known-hosts", t.TempDir() + "/known_hosts", "--ssh-config", ""}, args...)
}

func TestCordonUncordonCommands(t *testing.T) {
	e := newNodeEnv(t, "cli-cordon")
	e.node("cli-lin-1", false)
	e.node("cli-win-1", true)

	code, out, errOut := runWmcon(t, kubeconfigArgs(t, "cordon", "cli-lin-1", "cli-win-1")...)
	require.Equal(t, 0, code, errOut)
	assert.True(t, e.cordoned("cli-lin-1"), "cordon works on Linux nodes too")
	assert.True(t, e.cordoned("cli-win-1"))
	assert.Contains(t, out, "cli-lin-1 [cordon] ✓ cordoned")
	assert.Contains(t, out, "cli-win-1 SUCCEEDED node cordoned")

	code, out, errOut = runWmcon(t, kubeconfigArgs(t, "uncordon", "cli-lin-1", "-o", "json")...)
	require.Equal(t, 0, code, errOut)
	assert.False(t, e.cordoned("cli-lin-1"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last event.Event
	for _, l := range lines {
		require.NoError(t, json.Unmarshal([]byte(l), &last), "every line is a JSON event: %q", l)
	}
	assert.Equal(t, event.Finished, last.Kind)
	assert.Equal(t, event.Succeeded, last.Outcome)
	assert.Equal(t, "uncordon", last.Action)

	code, out, errOut = runWmcon(t, kubeconfigArgs(t, "uncordon", "no-such-node")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `node "no-such-node" not found`)
	assert.Contains(t, out, "FAILED")

	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "--read-only", "cordon", "cli-lin-1")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--read-only")
	assert.False(t, e.cordoned("cli-lin-1"))

	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "cordon")...)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "name at least one node, or choose nodes with -l/--selector")
}

func TestDrainCommand(t *testing.T) {
	e := newNodeEnv(t, "cli-drain")
	e.node("cli-drain-1", true)
	e.node("cli-drain-2", false)
	e.kubelets("cli-drain-1", "cli-drain-2")
	e.pod("web-1", "cli-drain-1", "web")
	e.pod("web-2", "cli-drain-2", "web")

	code, out, errOut := runWmcon(t, kubeconfigArgs(t, "drain", "cli-drain-1", "--grace-period", "5")...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Empty(t, e.podsOn("cli-drain-1"))
	assert.Equal(t, []string{"web-2"}, e.podsOn("cli-drain-2"), "only that node's pods")
	assert.True(t, e.cordoned("cli-drain-1"))
	assert.Contains(t, out, "evicting pods (--ignore-daemonsets --delete-emptydir-data --force --grace-period=5 --timeout=10m0s)", "the default drain timeout applies headless too")
	assert.Contains(t, out, "1/1 evicted "+e.ns+"/web-1")
	assert.Contains(t, out, "wmcon uncordon cli-drain-1")

	// Bad flags are refused before anything changes.
	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "drain", "cli-drain-2", "--on-pdb", "disable-eviction")...)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "--yes-disable-eviction")
	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "drain", "cli-drain-2", "--on-pdb", "sometimes")...)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "use abort, wait or disable-eviction")
	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "drain", "cli-drain-2", "-o", "yaml")...)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "use text or json")
	assert.False(t, e.cordoned("cli-drain-2"))
}

func TestDrainCommandBlockedByBudget(t *testing.T) {
	e := newNodeEnv(t, "cli-pdb")
	e.node("cli-pdb-1", true)
	e.kubelets("cli-pdb-1")
	e.pod("sql-0", "cli-pdb-1", "sql")
	e.blockingBudget("sql-pdb", "sql")

	// The default answer for scripts is abort: exit 3, node left cordoned, and the output says how to finish.
	code, out, errOut := runWmcon(t, kubeconfigArgs(t, "drain", "cli-pdb-1")...)
	assert.Equal(t, ExitHalfDone, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "? cli-pdb-1: PodDisruptionBudget "+e.ns+"/sql-pdb blocks the drain of cli-pdb-1")
	assert.Contains(t, out, "pods "+e.ns+"/sql-0")
	assert.Contains(t, out, "→ abort")
	assert.Contains(t, errOut, "node left cordoned: run wmcon uncordon cli-pdb-1")
	assert.Contains(t, out+errOut, "run wmcon drain cli-pdb-1 --on-pdb disable-eviction --yes-disable-eviction", "the PDB hint names the flags")
	assert.NotContains(t, out+errOut, "press ", "headless output names commands, not console keys")
	assert.True(t, e.cordoned("cli-pdb-1"))
	assert.Equal(t, []string{"sql-0"}, e.podsOn("cli-pdb-1"))

	// With both flags the blocked pod is deleted instead.
	code, out, errOut = runWmcon(t, kubeconfigArgs(t, "drain", "cli-pdb-1", "--on-pdb", "disable-eviction", "--yes-disable-eviction")...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "→ disable-eviction")
	assert.Contains(t, out, "deleted "+e.ns+"/sql-0")
	assert.Empty(t, e.podsOn("cli-pdb-1"))
}
