package operator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/operator"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/testsupport/actiontest"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// TestWatchShowsTheOperatorsLogLinesAboutTheHost runs the operator's pod on a node of a real API server
// whose pods/log is proxied (through the egress proxy) to a simulated kubelet serving the container's log;
// configure --watch shows the operator's lines about this host, each once, and none about other hosts.
func TestWatchShowsTheOperatorsLogLinesAboutTheHost(t *testing.T) {
	np, err := kubeapi.NewNodeProxy()
	require.NoError(t, err)
	t.Cleanup(func() { np.Close() })
	s := kubeapi.Start(t, kubeapi.WithCRDs(), kubeapi.WithNodeProxy(np))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(s.AdminConfig())
	clients, err := cluster.NewClients(s.AdminConfig())
	require.NoError(t, err)
	ops := cluster.NewOps(clients)

	// The operator's pod runs on a Linux node whose kubelet serves the pod's container log.
	logs := kubelet.NewContainerLogs()
	ls, err := kubelet.StartLogServer("127.0.0.78:0", logs)
	require.NoError(t, err)
	t.Cleanup(func() { ls.Close() })
	fake, err := kubeapi.FakeNodeIP("127.0.0.78")
	require.NoError(t, err)
	require.NoError(t, np.Route(fmt.Sprintf("%s:%d", fake, ls.Port()), ls.Addr()))
	_, err = kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "master-0",
		Labels: map[string]string{corev1.LabelOSStable: "linux"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, kubelet.PublishEndpoint(ctx, kube, "master-0", ls.Port(), corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: fake}))
	ns := config.OperatorNamespace
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		require.True(t, apierrors.IsAlreadyExists(err), err)
	}
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		require.True(t, apierrors.IsAlreadyExists(err), err)
	}
	pod, err := kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "windows-machine-config-operator-7d9f8-x2k4p", Labels: map[string]string{"name": config.OperatorName}},
		Spec:       corev1.PodSpec{NodeName: "master-0", Containers: []corev1.Container{{Name: config.OperatorContainer, Image: "registry.example/wmco:test"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	pod.Status.Phase = corev1.PodRunning
	_, err = kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	require.NoError(t, err)

	const ip, node = "127.0.0.79", "win-watch-log"
	ours := `{"level":"info","ts":"2026-11-23T19:00:00Z","logger":"wc 127.0.0.79","msg":"transferring files"}`
	logs.Append(ns, pod.Name, config.OperatorContainer,
		`{"level":"info","ts":"2026-11-23T19:00:00Z","logger":"wc 127.0.0.9","msg":"transferring files"}`,
		ours,
		`{"level":"info","ts":"2026-11-23T19:00:00Z","logger":"wc 127.0.0.790","msg":"another host whose address starts alike"}`)

	rec := &actiontest.Recorder{}
	done := make(chan error, 1)
	go func() {
		done <- operator.WatchOperator(ctx, ops, operator.WatchOptions{Addr: ip, Version: "11.0.1", Interval: 50 * time.Millisecond}, rec)
	}()
	seen := func(s string) func() bool { return func() bool { return strings.Contains(rec.Dump(), s) } }
	require.Eventually(t, seen("operator: "+ours), 20*time.Second, 20*time.Millisecond, rec.Dump())

	// The node registers; a later line names it.
	n, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels: map[string]string{config.OSLabel: "windows"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	n, err = kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	configured := `{"level":"info","logger":"controller.windowsmachine","msg":"instance has been configured as a worker node","node":"win-watch-log"}`
	logs.Append(ns, pod.Name, config.OperatorContainer, configured)
	require.Eventually(t, seen("operator: "+configured), 20*time.Second, 20*time.Millisecond, rec.Dump())

	n.Annotations = map[string]string{config.VersionAnnotation: "11.0.1"}
	n, err = kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	select {
	case err := <-done:
		require.NoError(t, err, rec.Dump())
	case <-ctx.Done():
		t.Fatalf("the watch did not end:\n%s", rec.Dump())
	}
	out := rec.Dump()
	assert.Equal(t, event.Succeeded, rec.Final(t, ip).Outcome)
	assert.Equal(t, 1, strings.Count(out, "wc 127.0.0.79\""), "each line once:\n%s", out)
	assert.NotContains(t, out, "127.0.0.9", "a line about another host")
	assert.NotContains(t, out, "127.0.0.790", "a line about another host whose address starts alike")
}
