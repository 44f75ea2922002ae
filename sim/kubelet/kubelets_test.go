package kubelet

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
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
		if a.GetVerb() == "patch" {
			writes++
		}
	}
	k.tick(context.Background())
	k.tick(context.Background())
	after := 0
	for _, a := range kube.Actions() {
		if a.GetVerb() == "patch" {
			after++
		}
	}
	require.Equal(t, 1, writes)
	require.Equal(t, writes, after, "no writes while nothing changes")
}

// procHost is a host that tells its kubelet's process ID.
type procHost struct {
	fakeHost
	pid atomic.Int32
}

func (h *procHost) ServicePID(string) int { return int(h.pid.Load()) }

// A new kubelet process posts its status at once (a fresh heartbeat), as a starting kubelet does, even when
// the node stays Ready; a post the API server refused is made again on the next tick.
func TestRestartedKubeletPostsAFreshHeartbeat(t *testing.T) {
	kube := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}})
	h := &procHost{}
	h.up.Store(true)
	h.kubelet.Store(true)
	h.pid.Store(1000)
	now := time.Unix(1000, 0)
	k := New(kube, map[string]Host{"win-1": h}, Options{Grace: time.Minute, Now: func() time.Time { return now }})
	ctx := context.Background()
	k.tick(ctx)
	heartbeat := func() time.Time {
		n, err := kube.CoreV1().Nodes().Get(ctx, "win-1", metav1.GetOptions{})
		require.NoError(t, err)
		return n.Status.Conditions[readyIndex(n)].LastHeartbeatTime.Time
	}
	require.Equal(t, now, heartbeat())

	now = now.Add(3 * time.Second)
	k.tick(ctx)
	require.Equal(t, time.Unix(1000, 0), heartbeat(), "the same process: nothing to post")

	h.pid.Store(1004) // restarted within a tick: never seen stopped
	conflicts := 1
	kube.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(corev1.Resource("nodes"), "win-1", errors.New("changed"))
		}
		return false, nil, nil
	})
	k.tick(ctx)
	require.Equal(t, time.Unix(1000, 0), heartbeat(), "the post the server refused")
	now = now.Add(time.Second)
	k.tick(ctx)
	require.Equal(t, now, heartbeat(), "the new process's post, retried")
}

// TestStatusPostKeepsWhatOthersWroteMeanwhile: an annotation written between the kubelet's read of its
// Node and its status post survives the post (the demo's fake clientset would let a whole-object update
// undo it; a real kubelet patches its status).
func TestStatusPostKeepsWhatOthersWroteMeanwhile(t *testing.T) {
	kube := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}})
	h := &fakeHost{}
	h.up.Store(true)
	h.kubelet.Store(true)
	gvr := corev1.SchemeGroupVersion.WithResource("nodes")
	kube.PrependReactor("get", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj, err := kube.Tracker().Get(gvr, "", "win-1")
		if err != nil {
			return true, nil, err
		}
		read := obj.(*corev1.Node).DeepCopy()
		written := read.DeepCopy() // another writer annotates the node right after this read
		written.Annotations = map[string]string{"windowsmachineconfig.openshift.io/version": "11.0.1"}
		return true, read, kube.Tracker().Update(gvr, written, "")
	})
	New(kube, map[string]Host{"win-1": h}, Options{}).tick(context.Background())
	n, err := kube.Tracker().Get(gvr, "", "win-1")
	require.NoError(t, err)
	node := n.(*corev1.Node)
	require.Equal(t, "11.0.1", node.Annotations["windowsmachineconfig.openshift.io/version"], "the other writer's annotation is kept")
	require.Equal(t, corev1.ConditionTrue, node.Status.Conditions[readyIndex(node)].Status)
}
