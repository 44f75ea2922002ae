package cluster_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

// TestNodeDetailRealServer: the pods the API server schedules on the node (its field selector) and no
// others, the node's events, and its YAML without managedFields and with sensitive annotations masked.
func TestNodeDetailRealServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-detail", Labels: map[string]string{config.OSLabel: "windows"},
		Annotations: map[string]string{
			config.UsernameAnnotation:   "encrypted-user-blob",
			"example.com/api-token":     "s3cr3t-token-value",
			"example.com/note":          "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----",
			config.VersionAnnotation:    "10.20.0-bc9a7b1",
			config.PubKeyHashAnnotation: "abc123",
		}},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}
	_, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(context.Background(), "win-detail", metav1.DeleteOptions{}) })
	ns := "node-detail-" + strings.ToLower(rand.Text()[:5])
	_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, p := range []struct{ name, node string }{{"web-1", "win-detail"}, {"web-0", "win-detail"}, {"elsewhere", "win-other"}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: ns},
			Spec: corev1.PodSpec{NodeName: p.node, AutomountServiceAccountToken: new(bool), Containers: []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/servercore:ltsc2022"}}}}
		_, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = kube.CoreV1().Pods(ns).Delete(context.Background(), p.name, *metav1.NewDeleteOptions(0))
		})
	}
	ev := nodeEvent("default", "ev-detail", "Node", "", "win-detail", "Warning", "NodeNotReady", time.Now().Add(-time.Minute).Truncate(time.Second))
	_, err = kube.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kube.CoreV1().Events("default").Delete(context.Background(), "ev-detail", metav1.DeleteOptions{})
	})

	d, err := cluster.NodeDetail(ctx, kube, "win-detail")
	require.NoError(t, err)
	require.Len(t, d.Pods, 2, "only the pods on this node: %+v", d.Pods)
	assert.Equal(t, "web-0", d.Pods[0].Name, "by name")
	assert.Equal(t, ns, d.Pods[0].Namespace)
	assert.Equal(t, 1, d.Pods[0].Total)
	assert.Empty(t, d.PodsErr)
	require.Len(t, d.Events, 1)
	assert.Equal(t, "NodeNotReady", d.Events[0].Reason)

	assert.Contains(t, d.YAML, "kind: Node")
	assert.Contains(t, d.YAML, "name: win-detail")
	assert.Contains(t, d.YAML, "cpu: \"4\"")
	assert.Contains(t, d.YAML, config.VersionAnnotation+": 10.20.0-bc9a7b1", "ordinary annotations are shown")
	assert.NotContains(t, d.YAML, "managedFields")
	for _, secret := range []string{"encrypted-user-blob", "s3cr3t-token-value", "PRIVATE KEY", "b3Blbn"} {
		assert.NotContains(t, d.YAML, secret)
	}
	assert.Contains(t, d.YAML, "example.com/api-token: "+cluster.Masked)

	_, err = cluster.NodeDetail(ctx, kube, "win-nowhere")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read node win-nowhere")
}
