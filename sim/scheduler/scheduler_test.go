package scheduler

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var windowsTaint = corev1.Taint{Key: "os", Value: "Windows", Effect: corev1.TaintEffectNoSchedule}

func node(name string, ready bool, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
}

func TestFit(t *testing.T) {
	win := node("win", true, map[string]string{"kubernetes.io/os": "windows"}, windowsTaint)
	tolerating := corev1.Toleration{Key: "os", Operator: corev1.TolerationOpEqual, Value: "Windows", Effect: corev1.TaintEffectNoSchedule}
	cordoned := win.DeepCopy()
	cordoned.Spec.Unschedulable = true
	for _, tc := range []struct {
		name string
		node *corev1.Node
		pod  corev1.PodSpec
		want string
	}{
		{"fits", win, corev1.PodSpec{Tolerations: []corev1.Toleration{tolerating}, NodeSelector: map[string]string{"kubernetes.io/os": "windows"}}, ""},
		{"taint", win, corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/os": "windows"}}, "node(s) had untolerated taint {os: Windows}"},
		{"selector", win, corev1.PodSpec{Tolerations: []corev1.Toleration{tolerating}, NodeSelector: map[string]string{"kubernetes.io/os": "linux"}},
			"node(s) didn't match Pod's node affinity/selector"},
		{"cordoned", cordoned, corev1.PodSpec{Tolerations: []corev1.Toleration{tolerating}}, "node(s) were unschedulable"},
		{"not ready", node("w2", false, nil), corev1.PodSpec{}, "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"},
		{"tolerate all", win, corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Fit(&corev1.Pod{Spec: tc.pod}, tc.node))
		})
	}
}

func TestFailedSchedulingMessage(t *testing.T) {
	got := FailedSchedulingMessage(4, map[string]int{"node(s) had untolerated taint {os: Windows}": 1, "node(s) didn't match Pod's node affinity/selector": 3})
	assert.Equal(t, "0/4 nodes are available: 1 node(s) had untolerated taint {os: Windows}, 3 node(s) didn't match Pod's node affinity/selector. "+
		"preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.", got)
}

// The fake clientset records the binding; an unschedulable pod gets one event per distinct message.
func TestReconcileBindsOrReports(t *testing.T) {
	ctx := context.Background()
	good := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "good", Namespace: "a"},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/os": "windows"},
			Tolerations: []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpExists}}}}
	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "a"}}
	kube := fake.NewClientset(node("win", true, map[string]string{"kubernetes.io/os": "windows"}, windowsTaint), good, bad)
	s := New(kube)
	require.NoError(t, s.Reconcile(ctx))
	require.NoError(t, s.Reconcile(ctx))
	var bound []string
	for _, a := range kube.Actions() {
		if a.GetVerb() == "create" && a.GetSubresource() == "binding" {
			bound = append(bound, a.(k8stesting.CreateAction).GetObject().(*corev1.Binding).Name)
		}
	}
	assert.Contains(t, bound, "good")
	assert.NotContains(t, bound, "bad")
	evs, err := kube.CoreV1().Events("a").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var failed int
	for _, e := range evs.Items {
		if e.Reason == "FailedScheduling" && e.InvolvedObject.Name == "bad" {
			failed++
		}
	}
	assert.Equal(t, 1, failed, "one event per distinct message, as the scheduler's event recorder aggregates them")
	p, err := kube.CoreV1().Pods("a").Get(ctx, "bad", metav1.GetOptions{})
	require.NoError(t, err)
	require.Len(t, p.Status.Conditions, 1)
	assert.Equal(t, corev1.PodReasonUnschedulable, p.Status.Conditions[0].Reason)
}
