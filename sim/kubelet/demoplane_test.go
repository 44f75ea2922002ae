package kubelet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// The demo's stand-in control plane lets the same honest kubelet join a fake clientset: it checks the
// bootstrap credentials and signs only approved CSRs.
func TestDemoControlPlane(t *testing.T) {
	const url = "https://api-int.demo.example.com:6443"
	kube := fake.NewClientset()
	dp, err := kubelet.NewDemoControlPlane(kube, url, "demo-bootstrap-token", kubeapi.NodeBootstrapperUser)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go dp.Run(ctx)
	opts := kubelet.KubeletOptions{HeartbeatInterval: 200 * time.Millisecond, Connect: dp.Connect}

	bad := startWinHostWith(t, "127.0.0.51", opts)
	bad.configure(t, bootstrapFiles{server: url, token: "wrong", ca: dp.CACert()})
	poll(t, "the kubelet with a wrong token to give up", 10*time.Second, func(context.Context) bool {
		info, _ := bad.Service("kubelet")
		return info.Crashes > 0
	})
	assert.Contains(t, bad.kubeletLog(), "Unauthorized")

	w := startWinHostWith(t, "127.0.0.52", opts)
	node := strings.ToLower(w.Hostname())
	w.configure(t, bootstrapFiles{server: url, token: "demo-bootstrap-token", ca: dp.CACert()})
	var csr *certificatesv1.CertificateSigningRequest
	poll(t, "the client CSR", 10*time.Second, func(ctx context.Context) bool {
		csr = csrOf(ctx, kube, kubeapi.NodeBootstrapperUser, certificatesv1.KubeAPIServerClientKubeletSignerName)
		return csr != nil
	})
	time.Sleep(500 * time.Millisecond)
	got, err := kube.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.Status.Certificate, "the stand-in signs only approved CSRs")
	approve(t, ctx, kube, got)
	poll(t, "the Node registered, not Ready without its CNI network", 20*time.Second, func(ctx context.Context) bool {
		return readyConditionOf(ctx, kube, node).Message == kubelet.NetworkNotReadyMessage
	})
	w.writeCNIConfig(t)
	poll(t, "the Node Ready", 20*time.Second, func(ctx context.Context) bool {
		return readyStatusOf(ctx, kube, node) == corev1.ConditionTrue
	})
	poll(t, "the serving CSR", 10*time.Second, func(ctx context.Context) bool {
		return csrOf(ctx, kube, "system:node:"+node, certificatesv1.KubeletServingSignerName) != nil
	})
}
