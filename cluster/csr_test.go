package cluster_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

func newKey(t *testing.T) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return key
}

func publicDER(t *testing.T, key *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	require.NoError(t, err)
	return der
}

func requestPEM(t *testing.T, key *ecdsa.PrivateKey, cn string, ips ...net.IP) []byte {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}}, IPAddresses: ips}, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// csrObject is a CSR as the API server stores it, for the policy's pure checks.
func csrObject(t *testing.T, key *ecdsa.PrivateKey, signer, user string, created time.Time, approved bool, ips ...net.IP) *certificatesv1.CertificateSigningRequest {
	usage := certificatesv1.UsageClientAuth
	if signer == certificatesv1.KubeletServingSignerName {
		usage = certificatesv1.UsageServerAuth
	}
	c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-x", CreationTimestamp: metav1.NewTime(created)},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Username: user, Request: requestPEM(t, key, "system:node:win-a", ips...),
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, usage}}}
	if approved {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	}
	return c
}

// The policy's rules on the key and on time, one CSR at a time: a client CSR counts only when it is
// signed with the key the host's kubelet generated and (when still to be approved) was made after that
// key was written; a serving CSR only when made no earlier than the running kubelet's client CSR.
func TestCSRPolicyKeyAndTime(t *testing.T) {
	kubelet, other := newKey(t), newKey(t)
	written := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	p := cluster.CSRPolicy{NodeName: "win-a", BootstrapIdentity: cluster.NodeBootstrapperIdentity, Names: []string{"win-a"},
		IPs: []string{"127.0.0.61"}, ClientKey: publicDER(t, kubelet), KeyWritten: written, ServingSince: written.Add(time.Minute)}
	client, serving := certificatesv1.KubeAPIServerClientKubeletSignerName, certificatesv1.KubeletServingSignerName
	node := "system:node:win-a"
	ip := net.ParseIP("127.0.0.61")
	for _, tc := range []struct {
		name   string
		csr    *certificatesv1.CertificateSigningRequest
		policy func(*cluster.CSRPolicy)
		ok     bool
		reason string
	}{
		{name: "the kubelet's client CSR", csr: csrObject(t, kubelet, client, cluster.NodeBootstrapperIdentity, written.Add(time.Second), false), ok: true},
		{name: "made with the bootstrap token and another key (the attack)", csr: csrObject(t, other, client, cluster.NodeBootstrapperIdentity, written.Add(time.Second), false),
			reason: "not with the key this host's kubelet generated"},
		{name: "an approved client CSR of an earlier kubelet (another key)", csr: csrObject(t, other, client, cluster.NodeBootstrapperIdentity, written.Add(-time.Hour), true),
			reason: "not with the key this host's kubelet generated"},
		{name: "a pending client CSR made before the key was written", csr: csrObject(t, kubelet, client, cluster.NodeBootstrapperIdentity, written.Add(-cluster.CSRClockSkew-time.Second), false),
			reason: "before this host's kubelet wrote its key"},
		{name: "within the clock skew allowed", csr: csrObject(t, kubelet, client, cluster.NodeBootstrapperIdentity, written.Add(-cluster.CSRClockSkew), false), ok: true},
		{name: "an approved one of this key made earlier (a kubelet asking again with its certificate's key)",
			csr: csrObject(t, kubelet, client, cluster.NodeBootstrapperIdentity, written.Add(-time.Hour), true), ok: true},
		{name: "no key read from the host", csr: csrObject(t, kubelet, client, cluster.NodeBootstrapperIdentity, written, false),
			policy: func(p *cluster.CSRPolicy) { p.ClientKey = nil }, reason: "has generated no key yet"},
		{name: "the running kubelet's serving CSR", csr: csrObject(t, other, serving, node, written.Add(time.Minute), false, ip), ok: true},
		{name: "an earlier kubelet's approved serving CSR", csr: csrObject(t, other, serving, node, written.Add(time.Minute-time.Second), true, ip),
			reason: "before the client CSR of the kubelet running now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := p
			if tc.policy != nil {
				tc.policy(&p)
			}
			_, ok, reason := p.Check(tc.csr)
			assert.Equal(t, tc.ok, ok, reason)
			assert.Contains(t, reason, tc.reason)
		})
	}
}

// bootstrapClient is what a host holding the bootstrap token can do: post CSRs as the node-bootstrapper.
func bootstrapClient(t *testing.T) kubernetes.Interface {
	cfg := &rest.Config{Host: srv.Host(), BearerToken: srv.BootstrapToken(), TLSClientConfig: rest.TLSClientConfig{CAData: srv.CACert()}}
	c, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return c
}

func postClientCSR(t *testing.T, c kubernetes.Interface, name string, key *ecdsa.PrivateKey, node string, usages ...certificatesv1.KeyUsage) {
	t.Helper()
	_, err := c.CertificatesV1().CertificateSigningRequests().Create(context.Background(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: requestPEM(t, key, "system:node:"+node),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName, Usages: usages},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = bootstrapAdmin(t).CertificatesV1().CertificateSigningRequests().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func bootstrapAdmin(t *testing.T) kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(srv.AdminConfig())
}

func csrApproved(t *testing.T, name string) bool {
	c, err := bootstrapAdmin(t).CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	for _, cond := range c.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

// Against the real API server: a client CSR posted with the bootstrap token for this host's node name but
// another key (an attacker holding the token) and the approved CSR of an earlier kubelet are never
// approved nor counted; the kubelet's own is approved once it appears; two CSRs signed with the kubelet's
// key get no approval at all, and the error names both.
func TestApproveCSRApprovesOnlyTheKubeletsOwn(t *testing.T) {
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ops := cluster.NewOps(c)
	boot := bootstrapClient(t)
	const node = "win-csr-own"
	kubelet, attacker, earlier := newKey(t), newKey(t), newKey(t)
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}

	postClientCSR(t, boot, "csr-own-earlier", earlier, node, usages...)
	earlierCSR, err := bootstrapAdmin(t).CertificatesV1().CertificateSigningRequests().Get(context.Background(), "csr-own-earlier", metav1.GetOptions{})
	require.NoError(t, err)
	earlierCSR.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved,
		Status: corev1.ConditionTrue, Reason: "Test", Message: "the previous life's"}}
	_, err = bootstrapAdmin(t).CertificatesV1().CertificateSigningRequests().UpdateApproval(context.Background(), earlierCSR.Name, earlierCSR, metav1.UpdateOptions{})
	require.NoError(t, err)
	postClientCSR(t, boot, "csr-own-attacker", attacker, node, usages...)

	p := cluster.CSRPolicy{NodeName: node, BootstrapIdentity: kubeapi.NodeBootstrapperUser, Names: []string{node},
		ClientKey: publicDER(t, kubelet), KeyWritten: time.Now()}
	var refused []cluster.CSRDecision
	report := func(d cluster.CSRDecision) { refused = append(refused, d) }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_, err = ops.ApproveCSR(ctx, p, cluster.ClientCSR, report)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "neither the attacker's nor the earlier kubelet's CSR is this kubelet's")
	assert.False(t, csrApproved(t, "csr-own-attacker"))
	reasons := map[string][]string{} // the server is shared: other tests' CSRs are reported too
	for _, d := range refused {
		reasons[d.Name] = append(reasons[d.Name], d.Reason)
	}
	require.Len(t, reasons["csr-own-attacker"], 1, "the pending foreign CSR is reported, once")
	assert.Contains(t, reasons["csr-own-attacker"][0], "not with the key this host's kubelet generated")
	assert.NotContains(t, reasons, "csr-own-earlier", "an approved CSR is not news")

	postClientCSR(t, boot, "csr-own-kubelet", kubelet, node, usages...)
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ref, err := ops.ApproveCSR(ctx, p, cluster.ClientCSR, report)
	require.NoError(t, err)
	assert.Equal(t, "csr-own-kubelet", ref.Name)
	assert.False(t, ref.Created.IsZero())
	assert.True(t, csrApproved(t, "csr-own-kubelet"))
	assert.False(t, csrApproved(t, "csr-own-attacker"))

	// Two pending CSRs signed with the kubelet's key: wmcon cannot tell which the kubelet waits on.
	const node2 = "win-csr-twice"
	twice := newKey(t)
	postClientCSR(t, boot, "csr-twice-a", twice, node2, usages...)
	postClientCSR(t, boot, "csr-twice-b", twice, node2, append(usages, certificatesv1.UsageKeyEncipherment)...)
	p2 := cluster.CSRPolicy{NodeName: node2, BootstrapIdentity: kubeapi.NodeBootstrapperUser, ClientKey: publicDER(t, twice), KeyWritten: time.Now()}
	_, err = ops.ApproveCSR(ctx, p2, cluster.ClientCSR, report)
	var several *cluster.SeveralCSRsError
	require.True(t, errors.As(err, &several), "%v", err)
	assert.Equal(t, []string{"csr-twice-a", "csr-twice-b"}, several.Names)
	assert.Contains(t, err.Error(), "approves none")
	assert.False(t, csrApproved(t, "csr-twice-a"))
	assert.False(t, csrApproved(t, "csr-twice-b"))
}
