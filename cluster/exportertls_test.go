package cluster_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/serviceca"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// windows_exporter always gets a certificate, so it runs WMCO's command line (TLS). Without WMCO's secret:
// on a cluster with service-ca, wmcon annotates a Service of its own and takes the certificate service-ca
// issues for it; with no service-ca (plain Kubernetes) it makes one itself, keeps it in its secret with the
// CA a scraper must trust, and says so. A dry run creates nothing; every run after the first reads the same.
func TestExporterCertificateWithoutWMCO(t *testing.T) {
	s := kubeapi.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clients, err := cluster.NewClients(s.AdminConfig())
	require.NoError(t, err)
	ops := cluster.NewOps(clients)
	kube := clients.Kube

	// Plain Kubernetes: no service-ca.
	nf, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{DryRun: true})
	require.NoError(t, err)
	assert.NotEmpty(t, nf.Facts.ExporterTLSCert, "a placeholder for the plan")
	_, err = kube.CoreV1().Secrets(cluster.IdentityNamespace).Get(ctx, cluster.ExporterServiceSecret, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "a dry run creates nothing: %v", err)

	nf, err = ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	assert.Contains(t, notesText(nf.Notes), "no service-ca on this cluster")
	secret, err := kube.CoreV1().Secrets(cluster.IdentityNamespace).Get(ctx, cluster.ExporterServiceSecret, metav1.GetOptions{})
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(nf.Facts.ExporterTLSCert, nf.Facts.ExporterTLSKey)
	require.NoError(t, err, "a usable certificate and key")
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(secret.Data["ca.crt"]))
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	require.NoError(t, err)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: cluster.ExporterService + "." + cluster.IdentityNamespace + ".svc"})
	assert.NoError(t, err, "the secret's ca.crt is what a scraper trusts")
	again, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	assert.Equal(t, nf.Facts.ExporterTLSCert, again.Facts.ExporterTLSCert, "the same certificate on every run")

	// With service-ca: the certificate it issues for wmcon's annotated Service.
	require.NoError(t, kube.CoreV1().Secrets(cluster.IdentityNamespace).Delete(ctx, cluster.ExporterServiceSecret, metav1.DeleteOptions{}))
	ca := &serviceca.Controller{Kube: kube}
	caCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { ca.Run(caCtx, 100*time.Millisecond); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	require.Eventually(t, func() bool {
		_, err := kube.CoreV1().Namespaces().Get(ctx, cluster.ServiceCANamespace, metav1.GetOptions{})
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)
	nf, err = ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	svc, err := kube.CoreV1().Services(cluster.IdentityNamespace).Get(ctx, cluster.ExporterService, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, cluster.ExporterServiceSecret, svc.Annotations[cluster.ServingCertAnnotation])
	pair, err = tls.X509KeyPair(nf.Facts.ExporterTLSCert, nf.Facts.ExporterTLSKey)
	require.NoError(t, err)
	leaf, err = x509.ParseCertificate(pair.Certificate[0])
	require.NoError(t, err)
	pool = x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca.CA()))
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool})
	assert.NoError(t, err, "issued by service-ca")

	// WMCO's secret, when the cluster has it, comes first.
	_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.OperatorNamespace}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	wmco := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cluster.ExporterTLSSecret, Namespace: config.OperatorNamespace}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{cluster.ExporterTLSCert: secret.Data[corev1.TLSCertKey], cluster.ExporterTLSKey: secret.Data[corev1.TLSPrivateKeyKey]}}
	_, err = kube.CoreV1().Secrets(config.OperatorNamespace).Create(ctx, wmco, metav1.CreateOptions{})
	require.NoError(t, err)
	nf, err = ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	assert.Equal(t, secret.Data[corev1.TLSCertKey], nf.Facts.ExporterTLSCert)
}

func notesText(notes []string) string {
	out := ""
	for _, n := range notes {
		out += n + "\n"
	}
	return out
}
