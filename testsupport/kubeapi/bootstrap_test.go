package kubeapi_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// tokenClient is a client that authenticates with a bearer token only, as a bootstrap kubeconfig does.
func tokenClient(t *testing.T, s *kubeapi.Server, token string) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: s.Host(), BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: s.CACert()}}
	return kubernetes.NewForConfigOrDie(cfg)
}

func whoAmI(t *testing.T, ctx context.Context, c kubernetes.Interface) authenticationv1.UserInfo {
	t.Helper()
	r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	require.NoError(t, err)
	return r.Status.UserInfo
}

// nodeClientCSR is the CSR a kubelet posts for its client certificate.
func nodeClientCSR(t *testing.T, node string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}}, key)
	require.NoError(t, err)
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
}

func TestNodeBootstrapperTokenMayOnlyPostCSRs(t *testing.T) {
	ctx := testContext(t)
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	secret, err := admin.CoreV1().Secrets(kubeapi.NodeBootstrapperNamespace).Get(ctx, kubeapi.NodeBootstrapperSecret, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, corev1.SecretTypeServiceAccountToken, secret.Type)
	require.Equal(t, srv.BootstrapToken(), string(secret.Data["token"]))
	require.Equal(t, srv.CACert(), secret.Data["ca.crt"])

	boot := tokenClient(t, srv, string(secret.Data["token"]))
	require.Equal(t, kubeapi.NodeBootstrapperUser, whoAmI(t, ctx, boot).Username)
	csr, err := boot.CertificatesV1().CertificateSigningRequests().Create(ctx, nodeClientCSR(t, "win-a"), metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), csr.Name, metav1.DeleteOptions{})
	})
	require.Equal(t, kubeapi.NodeBootstrapperUser, csr.Spec.Username)

	_, err = boot.CoreV1().Secrets(kubeapi.NodeBootstrapperNamespace).List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "the bootstrap identity must not read secrets, got %v", err)
	_, err = boot.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-a"}}, metav1.CreateOptions{})
	require.True(t, apierrors.IsForbidden(err), "the bootstrap identity must not register nodes, got %v", err)

	_, err = tokenClient(t, srv, "not-a-token").CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsUnauthorized(err), "a wrong token must be refused, got %v", err)
}

func TestBootstrapTokensAuthenticate(t *testing.T) {
	ctx := testContext(t)
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: metav1.NamespaceSystem},
		Type:       corev1.SecretType("bootstrap.kubernetes.io/token"),
		StringData: map[string]string{
			"token-id": "abcdef", "token-secret": "0123456789abcdef",
			"usage-bootstrap-authentication": "true",
			"expiration":                     time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		},
	}
	_, err := admin.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, secret, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.CoreV1().Secrets(metav1.NamespaceSystem).Delete(context.Background(), secret.Name, metav1.DeleteOptions{})
	})
	boot := tokenClient(t, srv, "abcdef.0123456789abcdef")
	user := whoAmI(t, ctx, boot)
	require.Equal(t, "system:bootstrap:abcdef", user.Username)
	require.Contains(t, user.Groups, "system:bootstrappers")
	csr, err := boot.CertificatesV1().CertificateSigningRequests().Create(ctx, nodeClientCSR(t, "win-b"), metav1.CreateOptions{})
	require.NoError(t, err)
	_ = admin.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{})
}

// TestControllerManager runs a server of its own with kube-controller-manager: it signs an approved CSR
// with the test CA, never approves one by itself, and marks a node whose kubelet is silent Unknown.
func TestControllerManager(t *testing.T) {
	s := kubeapi.Start(t, kubeapi.WithControllerManager(), kubeapi.WithCRDs(), kubeapi.WithNamespaces())
	require.True(t, s.ControllerManagerRunning())
	admin := kubernetes.NewForConfigOrDie(s.AdminConfig())

	t.Run("signs only approved CSRs", func(t *testing.T) {
		ctx := testContext(t)
		csrs := tokenClient(t, s, s.BootstrapToken()).CertificatesV1().CertificateSigningRequests()
		csr, err := csrs.Create(ctx, nodeClientCSR(t, "win-c"), metav1.CreateOptions{})
		require.NoError(t, err)

		// Unapproved, it stays without conditions or certificate (no approver runs) while the signer
		// has every chance to act.
		time.Sleep(3 * time.Second)
		got, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
		require.NoError(t, err)
		require.Empty(t, got.Status.Conditions, "nothing but the test may approve")
		require.Empty(t, got.Status.Certificate)

		got.Status.Conditions = append(got.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "TestApproved"})
		_, err = admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, got.Name, got, metav1.UpdateOptions{})
		require.NoError(t, err)
		var signed []byte
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
			signed = got.Status.Certificate
			return err == nil && len(signed) > 0, nil
		})
		require.NoError(t, err, "the approved CSR was not signed")
		block, _ := pem.Decode(signed)
		require.NotNil(t, block)
		cert, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		require.Equal(t, "system:node:win-c", cert.Subject.CommonName)
		require.Equal(t, []string{"system:nodes"}, cert.Subject.Organization)
		roots := x509.NewCertPool()
		require.True(t, roots.AppendCertsFromPEM(s.CACert()))
		_, err = cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		require.NoError(t, err, "the certificate must chain to the test CA")
	})

	t.Run("marks a silent node Unknown", func(t *testing.T) {
		ctx := testContext(t)
		now := metav1.Now()
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "silent"}}
		_, err := admin.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		require.NoError(t, err)
		// The controller manager updates a new Node too (taints, annotations): write the status from a
		// fresh read, again on a conflict, as a kubelet does.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := admin.CoreV1().Nodes().Get(ctx, "silent", metav1.GetOptions{})
			if err != nil {
				return err
			}
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
			_, err = admin.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
			return err
		})
		require.NoError(t, err)

		err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 4*kubeapi.NodeMonitorGracePeriod, true, func(ctx context.Context) (bool, error) {
			n, err := admin.CoreV1().Nodes().Get(ctx, "silent", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					return c.Status == corev1.ConditionUnknown && c.Reason == "NodeStatusUnknown", nil
				}
			}
			return false, nil
		})
		require.NoError(t, err, "node lifecycle did not mark the silent node Unknown")
	})
}
