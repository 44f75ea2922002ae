package cluster_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
)

func newOps(t *testing.T) (*cluster.Ops, kubernetes.Interface) {
	t.Helper()
	clients, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	return cluster.NewOps(clients), clients.Kube
}

func setReady(t *testing.T, kube kubernetes.Interface, name string, status corev1.ConditionStatus) {
	t.Helper()
	ctx := context.Background()
	n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now()}}
	_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func TestOpsCordonUncordonAndNode(t *testing.T) {
	ctx := context.Background()
	ops, kube := newOps(t)
	_, err := kube.CoreV1().Nodes().Create(ctx, windowsNode("win-ops-cordon", "127.0.0.61"), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, "win-ops-cordon", metav1.DeleteOptions{}) })

	changed, err := ops.Cordon(ctx, "win-ops-cordon")
	require.NoError(t, err)
	assert.True(t, changed)
	changed, err = ops.Cordon(ctx, "win-ops-cordon")
	require.NoError(t, err)
	assert.False(t, changed, "already cordoned")
	n, err := ops.Node(ctx, "win-ops-cordon")
	require.NoError(t, err)
	assert.True(t, n.Unschedulable)
	assert.True(t, n.Windows)
	assert.Equal(t, "127.0.0.61", n.InternalIP)

	changed, err = ops.Uncordon(ctx, "win-ops-cordon")
	require.NoError(t, err)
	assert.True(t, changed)

	_, err = ops.Cordon(ctx, "no-such-node")
	var nf *cluster.NodeNotFoundError
	require.ErrorAs(t, err, &nf)
	assert.Contains(t, err.Error(), "oc get nodes")
}

func TestOpsWaitNodeFollowsTheWatch(t *testing.T) {
	ctx := context.Background()
	ops, kube := newOps(t)
	_, err := kube.CoreV1().Nodes().Create(ctx, windowsNode("win-ops-wait", "127.0.0.62"), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, "win-ops-wait", metav1.DeleteOptions{}) })
	setReady(t, kube, "win-ops-wait", corev1.ConditionFalse)

	ready := func(n model.NodeInfo) bool { return n.Status == model.NodeReady }
	got := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err := ops.WaitNode(wctx, "win-ops-wait", ready)
		got <- err
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-got:
		t.Fatalf("returned before the node was Ready: %v", err)
	default:
	}
	start := time.Now()
	setReady(t, kube, "win-ops-wait", corev1.ConditionTrue)
	select {
	case err := <-got:
		require.NoError(t, err)
		assert.Less(t, time.Since(start), 2*time.Second, "a watch sees the change at once")
	case <-time.After(10 * time.Second):
		t.Fatal("WaitNode did not see the node turn Ready")
	}

	// Bounded by ctx: the error says how the node still is.
	setReady(t, kube, "win-ops-wait", corev1.ConditionFalse)
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	last, err := ops.WaitNode(wctx, "win-ops-wait", ready)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), err)
	assert.Contains(t, err.Error(), "win-ops-wait is still NotReady, schedulable")
	assert.Equal(t, model.NodeNotReady, last.Status)

	// A deleted node ends the wait.
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = kube.CoreV1().Nodes().Delete(ctx, "win-ops-wait", metav1.DeleteOptions{})
	}()
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	_, err = ops.WaitNode(dctx, "win-ops-wait", ready)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was deleted")
}

func TestOpsPlatformWithoutInfrastructure(t *testing.T) {
	ops, _ := newOps(t)
	p, err := ops.Platform(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "", p, "no Infrastructure object: platform unknown, not an error")
	assert.Equal(t, "", cluster.NewOps(cluster.Clients{}).WhoAmI(context.Background()), "no REST config (demo): unknown")
	assert.Equal(t, "wmcon-test-admin", ops.WhoAmI(context.Background()), "the API server says who we are")
}

func TestOpsDrainReportsTheBlockingBudgetAndTimesOut(t *testing.T) {
	ctx := context.Background()
	ops, kube := newOps(t)
	const node = "win-ops-drain"
	ns := "ops-drain-" + strings.ToLower(rand.Text()[:5]) // namespaces never finish deleting without a controller-manager
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{})
	})
	_, err = kube.CoreV1().Nodes().Create(ctx, windowsNode(node, "127.0.0.63"), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}) })

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sql-0", Namespace: ns, Labels: map[string]string{"app": "sql"}}}
	pod.Spec.NodeName = node
	pod.Spec.Containers = []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/servercore:ltsc2022"}}
	created, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	created.Status.Phase = corev1.PodRunning
	created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	_, err = kube.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "sql-pdb", Namespace: ns}}
	pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(1))
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sql"}}
	cpdb, err := kube.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{})
	require.NoError(t, err)
	cpdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: cpdb.Generation, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	_, err = kube.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, cpdb, metav1.UpdateOptions{})
	require.NoError(t, err)

	choices := request.DefaultDrainOptions()
	assert.Equal(t, "--ignore-daemonsets --delete-emptydir-data --force --timeout=10m0s", choices.String(), "the documented procedure's flags, with the default drain timeout")
	opts := cluster.DrainOptions{DrainChoices: cluster.DrainChoices(choices)}
	opts.Timeout = 1500 * time.Millisecond
	ops.DrainRetryDelay = 100 * time.Millisecond
	var events []cluster.DrainEvent
	err = ops.Drain(ctx, node, opts, func(e cluster.DrainEvent) { events = append(events, e) }) // no OnBlocked: wait
	require.Error(t, err)
	assert.Contains(t, err.Error(), "timeout")

	var block *cluster.PDBBlock
	for _, e := range events {
		if e.Kind == cluster.DrainBlocked {
			block = e.Block
		}
	}
	require.NotNil(t, block, "the block was reported: %+v", events)
	assert.Equal(t, []string{ns + "/sql-0"}, block.Pods)
	require.Len(t, block.Budgets, 1)
	b := block.Budgets[0]
	assert.Equal(t, cluster.Budget{Namespace: ns, Name: "sql-pdb", DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1,
		Pods: []string{ns + "/sql-0"}}, b)
	assert.Contains(t, block.Reason, "sql-pdb", "the API server's refusal names the budget")
}
