package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// TestConfigureApprovesOnlyTheKubeletsOwnCSR: against the real kube-apiserver and kube-controller-manager
// (which signs what is approved, and approves nothing), with the honest simulated kubelet.
//   - An attacker holding the bootstrap token (every configured host has it) posts, before configure, a
//     client CSR for the host's node name from a key of its own: wmcon never approves it, and approves the
//     kubelet's, whose key it reads from the kubelet's certificate directory (issue 22, item 2).
//   - configure → deconfigure → configure: the first life's approved client and serving CSRs do not count
//     for the new kubelet; its own are approved and it joins (issue 22, item 3).
func TestConfigureApprovesOnlyTheKubeletsOwnCSR(t *testing.T) {
	server := kubeapi.Start(t, kubeapi.WithControllerManager())
	t.Setenv(actions.AuditEnv, filepath.Join(t.TempDir(), "wmcon-audit.log"))
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(server.AdminConfig())
	b := newBareHosts(t)
	b.overlay(kube)
	const node, ip = "win-cfg-csr", "127.0.0.89"
	host := b.start(node, ip)
	admin := server.Kubeconfig("wmcon-csr", "system:masters")
	configure := func() (int, string) {
		t.Helper()
		code, out, errOut := runWmcon(t, b.args(admin, "configure", "--address", ip, "--payload", b.payloadDir,
			"--csr-timeout", "60s", "--ready-timeout", "60s")...)
		return code, out + errOut
	}

	attacker := postAttackerCSR(t, server, node, "csr-attacker-")
	code, out := configure()
	require.Equal(t, 0, code, "%s\nkubelet log:\n%s", out, kubeletLog(host))
	assert.Contains(t, out, "not approving client CSR "+attacker+": signed with key")
	got, err := kube.CertificatesV1().CertificateSigningRequests().Get(ctx, attacker, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.Status.Conditions, "the attacker's CSR is neither approved nor denied by wmcon")
	assert.Empty(t, got.Status.Certificate, "and so never signed")
	client1, serving1 := approvedNames(t, out)
	assertKubeletsKey(t, kube, host, client1)

	// deconfigure then configure again: a new kubelet with a new key; the approved CSRs of the first
	// stay in the cluster (the controller manager's cleaner removes them only after an hour). Their
	// generated names sort anywhere, so two more stale ones are injected that sort first: an approved
	// client CSR of another key, and an approved serving CSR the node made before.
	code, out2, errOut := runWmcon(t, b.args(admin, "deconfigure", node)...)
	require.Equal(t, 0, code, "%s\n%s", out2, errOut)
	staleClient := postAttackerCSR(t, server, node, "csr-0-stale-client-")
	approveCSR(t, kube, staleClient)
	staleServing := postStaleServingCSR(t, server, node, ip)
	approveCSR(t, kube, staleServing)
	time.Sleep(1100 * time.Millisecond) // CSR times are whole seconds: the new kubelet's come at least one later
	code, out = configure()
	require.Equal(t, 0, code, "the second life converges:\n%s\nkubelet log:\n%s", out, kubeletLog(host))
	client2, serving2 := approvedNames(t, out)
	assert.NotEqual(t, client1, client2, "the first life's client CSR does not count")
	assert.NotEqual(t, serving1, serving2, "nor its serving CSR")
	assertKubeletsKey(t, kube, host, client2)
	require.Eventually(t, func() bool { return host.Exists(nodeconfig.KubeletCertDir + "kubelet-server-current.pem") },
		20*time.Second, 100*time.Millisecond, "the new kubelet got its serving certificate: its own serving CSR was the one approved")
	assert.NotContains(t, out, "not approving client CSR "+client1, "an approved CSR is not reported as refused")
	for _, stale := range []string{staleClient, staleServing} {
		assert.NotEqual(t, stale, client2)
		assert.NotEqual(t, stale, serving2)
	}
}

func approveCSR(t *testing.T, kube kubernetes.Interface, name string) {
	t.Helper()
	csr, err := kube.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "EarlierLife", Message: "approved for an earlier kubelet"})
	_, err = kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(context.Background(), name, csr, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// postStaleServingCSR posts, as the node itself (impersonated), a serving CSR for its name and address,
// as an earlier kubelet on this node name did.
func postStaleServingCSR(t *testing.T, server *kubeapi.Server, node, ip string) string {
	t.Helper()
	cfg := server.AdminConfig()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	asNode, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:  pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}},
		DNSNames: []string{node}, IPAddresses: []net.IP{net.ParseIP(ip)}}, key)
	require.NoError(t, err)
	csr, err := asNode.CertificatesV1().CertificateSigningRequests().Create(context.Background(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-0-stale-serving-" + node},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeletServingSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return csr.Name
}

// postAttackerCSR posts, with the bootstrap token, a kubelet client CSR for node from a key only the
// attacker holds, named prefix+node, and returns its name.
func postAttackerCSR(t *testing.T, server *kubeapi.Server, node, prefix string) string {
	t.Helper()
	boot, err := kubernetes.NewForConfig(&rest.Config{Host: server.Host(), BearerToken: server.BootstrapToken(),
		TLSClientConfig: rest.TLSClientConfig{CAData: server.CACert()}})
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}}, key)
	require.NoError(t, err)
	// The name sorts before the kubelet's node-csr-…: listed first, as in the probe.
	csr, err := boot.CertificatesV1().CertificateSigningRequests().Create(context.Background(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: prefix + node},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return csr.Name
}

var approvedCSR = regexp.MustCompile(`approved (client|serving) CSR (\S+)`)

// approvedNames reads the names of the client and serving CSRs a configure run reports approved.
func approvedNames(t *testing.T, out string) (client, serving string) {
	t.Helper()
	for _, m := range approvedCSR.FindAllStringSubmatch(out, -1) {
		if m[1] == "client" {
			client = m[2]
		} else {
			serving = m[2]
		}
	}
	require.NotEmpty(t, client, out)
	require.NotEmpty(t, serving, out)
	return client, serving
}

// assertKubeletsKey checks that the approved client CSR carries the public key of the certificate the
// host's kubelet now uses.
func assertKubeletsKey(t *testing.T, kube kubernetes.Interface, host *windows.Host, name string) {
	t.Helper()
	csr, err := kube.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	block, _ := pem.Decode(csr.Spec.Request)
	require.NotNil(t, block)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	require.NoError(t, err)
	want, err := x509.MarshalPKIXPublicKey(req.PublicKey)
	require.NoError(t, err)
	pair, err := host.ReadFile(nodeconfig.KubeletClientCurrent)
	require.NoError(t, err)
	got, err := remote.PublicHalf(pair)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "CSR %s is signed with the key of the kubelet's certificate", name)
	assert.False(t, host.Exists(nodeconfig.KubeletClientKeyTmp), "the kubelet removed its temporary key once issued")
}
