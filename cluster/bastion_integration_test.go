package cluster_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
)

func TestFindBastionService(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	_, found, err := cluster.FindBastion(ctx, kube)
	require.NoError(t, err)
	assert.False(t, found, "no bastion yet")

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift-ssh-bastion"}}
	_, err = kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	require.NoError(t, err)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ssh-bastion", Namespace: ns.Name, Labels: map[string]string{"run": "ssh-bastion"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"run": "ssh-bastion"},
			Ports: []corev1.ServicePort{{Name: "ssh", Port: 22}}}}
	svc, err = kube.CoreV1().Services(ns.Name).Create(ctx, svc, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Services(ns.Name).Delete(ctx, "ssh-bastion", metav1.DeleteOptions{}) })
	// The address is only a name the test writes into the status; nothing dials it.
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: "bastion.example.invalid"}}
	_, err = kube.CoreV1().Services(ns.Name).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	require.NoError(t, err)

	addr, found, err := cluster.FindBastion(ctx, kube)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "bastion.example.invalid:22", addr)
}
