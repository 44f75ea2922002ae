package kubelet

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestLifecycleTaintsAnUnreachableNode: with Lifecycle, a node whose kubelet went silent gets the
// unreachable NoSchedule and NoExecute taints (its own taints kept) and a NodeNotReady event dated when it
// turned Unknown; back to Ready, the taints go and a NodeReady event follows. Without Lifecycle nothing is
// tainted (a real controller manager does it there).
func TestLifecycleTaintsAnUnreachableNode(t *testing.T) {
	own := corev1.Taint{Key: "os", Value: "Windows", Effect: corev1.TaintEffectNoSchedule}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{own}}}
	kube := fake.NewClientset(node)
	h := &fakeHost{}
	h.up.Store(true)
	h.kubelet.Store(true)
	now := time.Unix(1000, 0)
	k := New(kube, map[string]Host{"win-1": h}, Options{Grace: 10 * time.Second, Now: func() time.Time { return now }, Lifecycle: true})
	ctx := context.Background()
	get := func() *corev1.Node {
		n, err := kube.CoreV1().Nodes().Get(ctx, "win-1", metav1.GetOptions{})
		require.NoError(t, err)
		return n
	}
	events := func() []corev1.Event {
		l, err := kube.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		return l.Items
	}

	k.tick(ctx)
	assert.Equal(t, []corev1.Taint{own}, get().Spec.Taints, "a Ready node is not tainted")
	assert.Empty(t, events(), "nothing changed: no event")

	h.kubelet.Store(false)
	now = now.Add(11 * time.Second)
	k.tick(ctx)
	n := get()
	require.Len(t, n.Spec.Taints, 3)
	assert.Equal(t, own, n.Spec.Taints[0])
	for i, effect := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
		assert.Equal(t, TaintUnreachable, n.Spec.Taints[i+1].Key)
		assert.Equal(t, effect, n.Spec.Taints[i+1].Effect)
	}
	ev := events()
	require.Len(t, ev, 1)
	assert.Equal(t, "NodeNotReady", ev[0].Reason)
	assert.Equal(t, "Node win-1 status is now: NodeNotReady", ev[0].Message)
	assert.Equal(t, corev1.ObjectReference{Kind: "Node", Name: "win-1", UID: "win-1"}, ev[0].InvolvedObject)
	assert.Equal(t, "node-controller", ev[0].Source.Component)
	assert.True(t, ev[0].LastTimestamp.Time.Equal(now), "dated when Ready turned Unknown")

	now = now.Add(time.Second)
	k.tick(ctx)
	assert.Len(t, events(), 1, "still unreachable: no second event")

	h.kubelet.Store(true)
	now = now.Add(time.Second)
	k.tick(ctx)
	assert.Equal(t, []corev1.Taint{own}, get().Spec.Taints, "Ready again: the unreachable taints go")
	ev = events()
	require.Len(t, ev, 2)
	assert.ElementsMatch(t, []string{"NodeNotReady", "NodeReady"}, []string{ev[0].Reason, ev[1].Reason})

	plain := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-2"}})
	off := &fakeHost{}
	p := New(plain, map[string]Host{"win-2": off}, Options{Grace: time.Second, Now: func() time.Time { return now }})
	p.tick(ctx)
	n, err := plain.CoreV1().Nodes().Get(ctx, "win-2", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, n.Spec.Taints, "without Lifecycle the controller manager's part is left to it")
}
