package operator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/operator"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// TestWatchFollowsTheOperator plays what WMCO does with a Windows Machine on the real API server — the
// Machine provisions, the node registers, its CSR is approved, the version annotation is set, the node turns
// Ready — and checks that configure --watch reports each change and ends when the node is configured.
func TestWatchFollowsTheOperator(t *testing.T) {
	e := actiontest.NewEnv(t)
	const node, ip, version = "win-watch-a", "127.0.0.76", "11.0.1"
	machines := e.Clients.Machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	m, err := machines.Create(e.Ctx, &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "winworker-watch",
		Labels: map[string]string{config.MachineOSIDLabel: config.WindowsOSID}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = machines.Delete(context.Background(), m.Name, metav1.DeleteOptions{}) })
	m.Status.Phase = ptr.To("Provisioning")
	m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	m, err = machines.UpdateStatus(e.Ctx, m, metav1.UpdateOptions{})
	require.NoError(t, err)

	owner, err := e.Ops.WMCOOwner(e.Ctx, ip, "")
	require.NoError(t, err)
	assert.Contains(t, owner, "Machine "+config.MachineAPINamespace+"/winworker-watch", "the operator owns the host")

	rec := &actiontest.Recorder{}
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(e.Ctx, time.Minute)
	defer cancel()
	go func() {
		done <- operator.WatchOperator(ctx, e.Ops, operator.WatchOptions{Addr: ip, Version: version, Interval: 50 * time.Millisecond}, rec)
	}()
	seen := func(s string) func() bool { return func() bool { return strings.Contains(rec.Dump(), s) } }
	require.Eventually(t, seen("phase Provisioning"), 10*time.Second, 20*time.Millisecond, rec.Dump())

	// The operator's progress, step by step.
	m.Status.Phase = ptr.To("Provisioned")
	m, err = machines.UpdateStatus(e.Ctx, m, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, seen("phase Provisioned"), 10*time.Second, 20*time.Millisecond, rec.Dump())

	n, err := e.Kube.CoreV1().Nodes().Create(e.Ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels: map[string]string{config.OSLabel: "windows"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady"}}
	n, err = e.Kube.CoreV1().Nodes().UpdateStatus(e.Ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	m.Status.Phase = ptr.To("Running")
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node}
	_, err = machines.UpdateStatus(e.Ctx, m, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, seen("node "+node+" registered"), 10*time.Second, 20*time.Millisecond, rec.Dump())

	actiontest.PostCSR(t, e.Ctx, e.Kube, "csr-"+node+"-watch", certificatesv1.KubeAPIServerClientKubeletSignerName,
		actiontest.CSRPEM(t, "system:node:"+node, nil, nil), certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
	require.Eventually(t, seen("client CSR csr-"+node+"-watch: Pending"), 10*time.Second, 20*time.Millisecond, rec.Dump())

	n.Annotations = map[string]string{config.VersionAnnotation: version}
	n, err = e.Kube.CoreV1().Nodes().Update(e.Ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, seen("version annotation: "+version), 10*time.Second, 20*time.Millisecond, rec.Dump())
	select {
	case err := <-done:
		t.Fatalf("the watch ended before the node was Ready: %v\n%s", err, rec.Dump())
	default:
	}

	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	_, err = e.Kube.CoreV1().Nodes().UpdateStatus(e.Ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	select {
	case err := <-done:
		require.NoError(t, err, rec.Dump())
	case <-ctx.Done():
		t.Fatalf("the watch did not end once the node was Ready:\n%s", rec.Dump())
	}
	assert.Equal(t, event.Succeeded, rec.Final(t, ip).Outcome)
	assert.Contains(t, rec.Dump(), "node Ready")
}
