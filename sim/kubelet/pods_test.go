package kubelet

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

func boundPod(name, node string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"}}
	p.Spec.NodeName = node
	p.Spec.AutomountServiceAccountToken = new(bool)
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/servercore:ltsc2022"}}
	return p
}

func gone(ctx context.Context, kube kubernetes.Interface, ns, name string) bool {
	_, err := kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

// A real API server keeps a deleted pod bound to a node Terminating until that node's kubelet confirms.
func TestKubeletFinishesPodDeletionOnARealServer(t *testing.T) {
	srv := kubeapi.Start(t, kubeapi.WithNamespaces("apps"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	_, err := kube.CoreV1().ServiceAccounts("apps").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, n := range []string{"win-1", "win-2"} {
		_, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	up, down := &fakeHost{}, &fakeHost{}
	up.up.Store(true)
	up.kubelet.Store(true)
	k := New(kube, map[string]Host{"win-1": up, "win-2": down}, Options{Interval: 50 * time.Millisecond, Grace: time.Hour})
	go k.Run(ctx)

	for _, p := range []*corev1.Pod{boundPod("a", "win-1"), boundPod("b", "win-2")} {
		_, err := kube.CoreV1().Pods("apps").Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	time.Sleep(200 * time.Millisecond) // the informers list the pods
	require.NoError(t, kube.CoreV1().Pods("apps").Delete(ctx, "a", metav1.DeleteOptions{}))
	require.NoError(t, kube.CoreV1().Pods("apps").Delete(ctx, "b", metav1.DeleteOptions{}))

	require.Eventually(t, func() bool { return gone(ctx, kube, "apps", "a") }, 10*time.Second, 20*time.Millisecond,
		"the live node's kubelet finishes the deletion")
	time.Sleep(300 * time.Millisecond)
	b, err := kube.CoreV1().Pods("apps").Get(ctx, "b", metav1.GetOptions{})
	require.NoError(t, err, "a pod on a node whose host is down stays Terminating")
	assert.NotNil(t, b.DeletionTimestamp)

	down.up.Store(true)
	down.kubelet.Store(true)
	require.Eventually(t, func() bool { return gone(ctx, kube, "apps", "b") }, 10*time.Second, 20*time.Millisecond,
		"once the host is back its kubelet finishes the deletion")

	// A node added later gets its kubelet's pod watch too.
	_, err = kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-3"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	k.Add("win-3", up)
	_, err = kube.CoreV1().Pods("apps").Create(ctx, boundPod("c", "win-3"), metav1.CreateOptions{})
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, kube.CoreV1().Pods("apps").Delete(ctx, "c", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return gone(ctx, kube, "apps", "c") }, 10*time.Second, 20*time.Millisecond)
}

// Fake clientsets ignore field selectors: a kubelet must still only touch its own node's pods.
func TestKubeletTouchesOnlyItsNodesPods(t *testing.T) {
	now := metav1.Now()
	mine, other := boundPod("mine", "win-1"), boundPod("other", "linux-1")
	mine.DeletionTimestamp, other.DeletionTimestamp = &now, &now
	mine.Finalizers, other.Finalizers = []string{"x"}, []string{"x"} // so the fake accepts a deletionTimestamp
	kube := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}}, mine, other)
	h := &fakeHost{}
	h.up.Store(true)
	h.kubelet.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go New(kube, map[string]Host{"win-1": h}, Options{Interval: 20 * time.Millisecond}).Run(ctx)
	require.Eventually(t, func() bool { return gone(ctx, kube, "apps", "mine") }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	assert.False(t, gone(ctx, kube, "apps", "other"), "another node's pod is not this kubelet's business")
}
