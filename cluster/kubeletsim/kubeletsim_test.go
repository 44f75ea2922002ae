package kubeletsim

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

type fakeHost struct{ up, kubelet atomic.Bool }

func (h *fakeHost) Up() bool                     { return h.up.Load() }
func (h *fakeHost) ServiceRunning(s string) bool { return s == "kubelet" && h.kubelet.Load() }

func readyStatus(t *testing.T, kube *fake.Clientset, name string) corev1.ConditionStatus {
	t.Helper()
	n, err := kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	if i := readyIndex(n); i >= 0 {
		return n.Status.Conditions[i].Status
	}
	return ""
}

func TestNodeFollowsItsHost(t *testing.T) {
	kube := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}})
	h := &fakeHost{}
	h.up.Store(true)
	h.kubelet.Store(true)
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	k := New(kube, map[string]Host{"win-1": h}, Options{Grace: 10 * time.Second, Now: clock})
	ctx := context.Background()

	k.tick(ctx)
	require.Equal(t, corev1.ConditionTrue, readyStatus(t, kube, "win-1"), "a running kubelet makes the node Ready")

	h.kubelet.Store(false)
	now = now.Add(5 * time.Second)
	k.tick(ctx)
	require.Equal(t, corev1.ConditionTrue, readyStatus(t, kube, "win-1"), "still within the grace period")

	now = now.Add(6 * time.Second)
	k.tick(ctx)
	require.Equal(t, corev1.ConditionUnknown, readyStatus(t, kube, "win-1"), "silence past the grace period")

	h.kubelet.Store(true)
	h.up.Store(false)
	now = now.Add(time.Second)
	k.tick(ctx)
	require.Equal(t, corev1.ConditionUnknown, readyStatus(t, kube, "win-1"), "a host that is down cannot post")

	h.up.Store(true)
	k.tick(ctx)
	require.Equal(t, corev1.ConditionTrue, readyStatus(t, kube, "win-1"), "back up with its kubelet")
}

func TestSteadyNodeIsNotRewritten(t *testing.T) {
	kube := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}})
	h := &fakeHost{}
	h.up.Store(true)
	h.kubelet.Store(true)
	k := New(kube, map[string]Host{"win-1": h}, Options{})
	k.tick(context.Background())
	writes := 0
	for _, a := range kube.Actions() {
		if a.GetVerb() == "update" {
			writes++
		}
	}
	k.tick(context.Background())
	k.tick(context.Background())
	after := 0
	for _, a := range kube.Actions() {
		if a.GetVerb() == "update" {
			after++
		}
	}
	require.Equal(t, 1, writes)
	require.Equal(t, writes, after, "no writes while nothing changes")
}
