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
	"github.com/wmcon/wmcon/testsupport/actiontest"
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

// A watch on one CSR replays what changed since the list it follows, as the API server's watches do: the
// kubelet lists its CSR, then watches it, and a certificate issued in between would otherwise leave it
// waiting forever (the fake clientset's watches replay nothing unless given the list's version).
func TestDemoControlPlaneWatchReplaysWhatChangedSinceTheList(t *testing.T) {
	kube := fake.NewClientset()
	dp, err := kubelet.NewDemoControlPlane(kube, "https://api-int.demo.example.com:6443", "t", kubeapi.NodeBootstrapperUser)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	csrs := kube.CertificatesV1().CertificateSigningRequests()
	created, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Request: actiontest.CSRPEM(t, "system:node:win-a", nil, nil),
			Usages:  []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	approve(t, ctx, kube, created)
	listed, err := csrs.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + created.Name})
	require.NoError(t, err)
	go dp.Run(ctx)
	poll(t, "the CSR signed", 10*time.Second, func(ctx context.Context) bool {
		got, err := csrs.Get(ctx, created.Name, metav1.GetOptions{})
		return err == nil && len(got.Status.Certificate) > 0
	})

	w, err := csrs.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + created.Name, ResourceVersion: listed.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()
	select {
	case e := <-w.ResultChan():
		got, ok := e.Object.(*certificatesv1.CertificateSigningRequest)
		require.True(t, ok, "event %v", e.Type)
		assert.Equal(t, created.Name, got.Name)
		assert.NotEmpty(t, got.Status.Certificate, "the watch replays the issued certificate")
	case <-time.After(5 * time.Second):
		t.Fatal("a watch started after the certificate was issued never saw it")
	}
}
