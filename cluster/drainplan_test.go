package cluster_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
)

// planEnv is a namespace and a Windows node on the real API server, removed when the test ends.
type planEnv struct {
	t    *testing.T
	kube kubernetes.Interface
	ns   string
	node string
}

func newPlanEnv(t *testing.T, kube kubernetes.Interface, node, ip string) *planEnv {
	ctx := context.Background()
	e := &planEnv{t: t, kube: kube, ns: "plan-" + strings.ToLower(rand.Text()[:5]), node: node}
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kube.CoreV1().ServiceAccounts(e.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kube.CoreV1().Pods(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{})
	})
	_, err = kube.CoreV1().Nodes().Create(ctx, windowsNode(node, ip), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}) })
	return e
}

// pod runs a pod on the node with app=APP, owned by owner when given.
func (e *planEnv) pod(name, app string, owner *metav1.OwnerReference) {
	e.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{"app": app}}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	p.Spec.NodeName = e.node
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/servercore:ltsc2022"}}
	_, err := e.kube.CoreV1().Pods(e.ns).Create(context.Background(), p, metav1.CreateOptions{})
	require.NoError(e.t, err)
}

// budget selects app=APP and, as the disruption controller would, allows `allowed` disruptions.
func (e *planEnv) budget(name, app string, allowed, healthy int32) {
	e.t.Helper()
	ctx := context.Background()
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}}
	pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(healthy - allowed))
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	c, err := e.kube.PolicyV1().PodDisruptionBudgets(e.ns).Create(ctx, pdb, metav1.CreateOptions{})
	require.NoError(e.t, err)
	c.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: c.Generation, DisruptionsAllowed: allowed,
		CurrentHealthy: healthy, DesiredHealthy: healthy - allowed, ExpectedPods: healthy}
	_, err = e.kube.PolicyV1().PodDisruptionBudgets(e.ns).UpdateStatus(ctx, c, metav1.UpdateOptions{})
	require.NoError(e.t, err)
}

// TestPlanDrainListsThePodsAndTheBudgetsThatWouldBlock: the plan of a drain is the drain library's own
// selection (DaemonSet pods skipped, unmanaged pods refused without force) with the budgets covering each
// pod and whether they would hold it up; reading it changes nothing.
func TestPlanDrainListsThePodsAndTheBudgetsThatWouldBlock(t *testing.T) {
	ctx := context.Background()
	ops, kube := newOps(t)
	e := newPlanEnv(t, kube, "win-plan-drain", "127.0.0.64")

	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: e.ns}}
	ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
	ds.Spec.Template.Labels = map[string]string{"app": "agent"}
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "agent"}}
	cds, err := kube.AppsV1().DaemonSets(e.ns).Create(ctx, ds, metav1.CreateOptions{})
	require.NoError(t, err)
	rs := &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9", UID: "web-7d9-uid", Controller: ptr.To(true)}
	e.pod("sql-0", "sql", rs)
	e.pod("web-a", "web", rs)
	e.pod("web-b", "web", rs)
	e.pod("agent-x", "agent", &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: cds.UID, Controller: ptr.To(true)})
	e.budget("sql-pdb", "sql", 0, 1)
	e.budget("web-pdb", "web", 1, 3) // one of the two web pods may go now: the second would wait

	plan, err := ops.PlanDrain(ctx, e.node, cluster.DrainChoices(request.DefaultDrainOptions()))
	require.NoError(t, err)
	assert.Equal(t, e.node, plan.Node)
	assert.False(t, plan.Cordoned)
	assert.Empty(t, plan.Blocker)
	assert.ElementsMatch(t, []string{e.ns + "/sql-0", e.ns + "/web-a", e.ns + "/web-b"}, plan.Pods, "DaemonSet pods stay")
	assert.Contains(t, plan.Skipped, "agent-x", "the drain library's warning names the skipped DaemonSet pod")
	require.Len(t, plan.Budgets, 2)
	assert.Equal(t, e.ns+"/sql-pdb", plan.Budgets[0].Name)
	assert.Equal(t, []string{e.ns + "/sql-0"}, plan.Budgets[0].Pods)
	assert.True(t, plan.Budgets[0].Blocks(), "0 disruptions allowed")
	assert.ElementsMatch(t, []string{e.ns + "/web-a", e.ns + "/web-b"}, plan.Budgets[1].Pods)
	assert.True(t, plan.Budgets[1].Blocks(), "1 disruption allowed for 2 pods here")
	assert.Len(t, plan.WouldBlock(), 2)

	// Nothing changed: the node is schedulable and every pod is still there.
	n, err := ops.Node(ctx, e.node)
	require.NoError(t, err)
	assert.False(t, n.Unschedulable)
	pods, err := kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, pods.Items, 4)

	// An unmanaged pod without --force: the plan says the drain could not start, naming it.
	e.pod("scratch", "scratch", nil)
	opts := cluster.DrainChoices(request.DefaultDrainOptions())
	opts.Force = false
	plan, err = ops.PlanDrain(ctx, e.node, opts)
	require.NoError(t, err)
	assert.Contains(t, plan.Blocker, "scratch")

	_, err = ops.PlanDrain(ctx, "no-such-node", opts)
	require.Error(t, err)
}
