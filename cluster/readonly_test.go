package cluster

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestReadOnlyAllowsOnlyReadsAndReviews(t *testing.T) {
	for _, c := range []struct {
		method, path string
		ok           bool
	}{
		{http.MethodGet, "/api/v1/nodes", true},
		{http.MethodGet, "/api/v1/nodes?watch=true", true},
		{http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", true},
		{http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews", true},
		{http.MethodPatch, "/api/v1/nodes/n1", false},
		{http.MethodPut, "/api/v1/namespaces/x/configmaps/c", false},
		{http.MethodPost, "/api/v1/namespaces/x/pods/p/eviction", false},
		{http.MethodDelete, "/api/v1/namespaces/x/pods/p", false},
		{http.MethodPost, "/api/v1/namespaces/x/selfsubjectaccessreviews", false}, // not the review API
	} {
		assert.Equal(t, c.ok, readOnlyAllows(c.method, c.path), "%s %s", c.method, c.path)
	}
}

// TestReadOnlyDemoClientsRefuseWrites: the demo's fake clientsets get the same guard (the simulated
// kubelets' status updates aside).
func TestReadOnlyDemoClientsRefuseWrites(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	c, err := Clients{Kube: kube}.ReadOnly()
	require.NoError(t, err)
	_, err = NewOps(c).Cordon(ctx, "n1")
	var ro *ReadOnlyError
	require.ErrorAs(t, err, &ro)
	n, err := kube.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.False(t, n.Spec.Unschedulable)
	_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	assert.NoError(t, err, "the simulated kubelet still reports")
}
