package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// windows_exporter's certificate without WMCO. WMCO's comes from service-ca, which fills the operator's
// secret for its metrics Service; wmcon asks service-ca the same way for a Service of its own, and where
// there is no service-ca (plain Kubernetes) makes a certificate itself, so the exporter always serves TLS
// with WMCO's command line.
const (
	// ServingCertAnnotation asks service-ca for a serving certificate in the secret it names.
	ServingCertAnnotation = "service.beta.openshift.io/serving-cert-secret-name"
	// originatingServiceAnnotation is how service-ca marks the secret it made for a Service.
	originatingServiceAnnotation = "service.beta.openshift.io/originating-service-name"
	// ServiceCANamespace is where OpenShift's service-ca runs: wmcon asks it for certificates when it exists.
	ServiceCANamespace = "openshift-service-ca"

	ExporterService       = "windows-exporter"     // wmcon's Service in IdentityNamespace, for service-ca
	ExporterServiceSecret = "windows-exporter-tls" // the certificate secret beside it
	exporterPort          = 9182

	// selfSignedLifetime is how long a certificate wmcon makes itself is valid; configure makes a new one
	// when less than selfSignedRenewal is left.
	selfSignedLifetime = 2 * 365 * 24 * time.Hour
	selfSignedRenewal  = 30 * 24 * time.Hour
)

// serviceCAWait bounds the wait for service-ca to fill the secret of wmcon's Service.
var serviceCAWait = time.Minute

// readExporterTLS gives windows_exporter its certificate: WMCO's secret when the cluster has it; else wmcon's
// own (IdentityNamespace/ExporterServiceSecret), issued by service-ca for wmcon's annotated Service, or, with
// no service-ca, made by wmcon (a note says a scraper must trust its ca.crt). A dry run creates nothing.
func (o *Ops) readExporterTLS(ctx context.Context, nf *NodeFacts, dryRun bool) error {
	cert, key, ok, err := o.ExporterTLS(ctx)
	if err != nil {
		return err
	}
	if ok {
		nf.Facts.ExporterTLSCert, nf.Facts.ExporterTLSKey = cert, key
		return nil
	}
	secrets := o.c.Kube.CoreV1().Secrets(IdentityNamespace)
	s, err := secrets.Get(ctx, ExporterServiceSecret, metav1.GetOptions{})
	switch {
	case err == nil && s.Labels[managedByLabel] != managedByWmcon && s.Annotations[originatingServiceAnnotation] != ExporterService:
		return notOursError("secret", IdentityNamespace+"/"+ExporterServiceSecret)
	case err == nil && len(s.Data[corev1.TLSCertKey]) > 0 && len(s.Data[corev1.TLSPrivateKeyKey]) > 0 && !renewDue(s):
		nf.Facts.ExporterTLSCert, nf.Facts.ExporterTLSKey = s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("read secret %s/%s: %w", IdentityNamespace, ExporterServiceSecret, err)
	}
	serviceCA, err := o.hasServiceCA(ctx)
	if err != nil {
		return err
	}
	if dryRun {
		nf.Facts.ExporterTLSCert, nf.Facts.ExporterTLSKey = []byte("placeholder certificate"), []byte("placeholder key")
		how := "made by wmcon (no service-ca on this cluster)"
		if serviceCA {
			how = "issued by service-ca for Service " + IdentityNamespace + "/" + ExporterService
		}
		nf.Notes = append(nf.Notes, "windows_exporter's certificate would be "+how+": the plan shows a placeholder")
		return nil
	}
	if err := o.ensureIdentityNamespace(ctx, nf); err != nil {
		return err
	}
	if serviceCA {
		return o.serviceCAExporterTLS(ctx, nf)
	}
	return o.selfMadeExporterTLS(ctx, nf, s)
}

func (o *Ops) hasServiceCA(ctx context.Context) (bool, error) {
	_, err := o.c.Kube.CoreV1().Namespaces().Get(ctx, ServiceCANamespace, metav1.GetOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("read namespace %s (is service-ca there?): %w", ServiceCANamespace, err)
}

// serviceCAExporterTLS makes wmcon's Service annotated for service-ca and waits for the certificate.
func (o *Ops) serviceCAExporterTLS(ctx context.Context, nf *NodeFacts) error {
	svcs := o.c.Kube.CoreV1().Services(IdentityNamespace)
	svc, err := svcs.Get(ctx, ExporterService, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		svc = &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: ExporterService, Labels: wmconLabels(),
				Annotations: map[string]string{ServingCertAnnotation: ExporterServiceSecret}},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone,
				Ports: []corev1.ServicePort{{Name: "metrics", Port: exporterPort, TargetPort: intstr.FromInt32(exporterPort)}}},
		}
		if _, err := svcs.Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create Service %s/%s for windows_exporter's certificate: %w", IdentityNamespace, ExporterService, err)
		}
	case err != nil:
		return fmt.Errorf("read Service %s/%s: %w", IdentityNamespace, ExporterService, err)
	case svc.Labels[managedByLabel] != managedByWmcon:
		return notOursError("Service", IdentityNamespace+"/"+ExporterService)
	case svc.Annotations[ServingCertAnnotation] != ExporterServiceSecret:
		if svc.Annotations == nil {
			svc.Annotations = map[string]string{}
		}
		svc.Annotations[ServingCertAnnotation] = ExporterServiceSecret
		if _, err := svcs.Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("annotate Service %s/%s for service-ca: %w", IdentityNamespace, ExporterService, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, serviceCAWait)
	defer cancel()
	for {
		s, err := o.c.Kube.CoreV1().Secrets(IdentityNamespace).Get(wctx, ExporterServiceSecret, metav1.GetOptions{})
		if err == nil && len(s.Data[corev1.TLSCertKey]) > 0 && len(s.Data[corev1.TLSPrivateKeyKey]) > 0 {
			nf.Facts.ExporterTLSCert, nf.Facts.ExporterTLSKey = s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
			nf.Notes = append(nf.Notes, "windows_exporter's certificate was issued by service-ca for Service "+IdentityNamespace+"/"+ExporterService)
			return nil
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("service-ca did not fill secret %s/%s within %s for windows_exporter's certificate: check that the service-ca operator runs (namespace %s)",
				IdentityNamespace, ExporterServiceSecret, serviceCAWait, ServiceCANamespace)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// selfMadeExporterTLS makes windows_exporter's certificate where no service-ca issues one: a CA of its own
// and a serving certificate, kept in wmcon's secret (ca.crt beside them) so every node serves the same
// and a scraper can be told to trust it. old is the secret to replace (expiring), or nil.
func (o *Ops) selfMadeExporterTLS(ctx context.Context, nf *NodeFacts, old *corev1.Secret) error {
	cert, key, ca, err := selfSignedServing(ExporterService + "." + IdentityNamespace + ".svc")
	if err != nil {
		return fmt.Errorf("make windows_exporter's certificate: %w", err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ExporterServiceSecret, Namespace: IdentityNamespace, Labels: wmconLabels()},
		Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key, "ca.crt": ca}}
	secrets := o.c.Kube.CoreV1().Secrets(IdentityNamespace)
	if old != nil && old.Name != "" {
		s.ResourceVersion = old.ResourceVersion
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	} else {
		_, err = secrets.Create(ctx, s, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("store windows_exporter's certificate in secret %s/%s: %w", IdentityNamespace, ExporterServiceSecret, err)
	}
	nf.Facts.ExporterTLSCert, nf.Facts.ExporterTLSKey = cert, key
	nf.Notes = append(nf.Notes, "no service-ca on this cluster: windows_exporter serves TLS with a certificate wmcon made (secret "+
		IdentityNamespace+"/"+ExporterServiceSecret+"; a scraper must trust its ca.crt)")
	return nil
}

// renewDue says whether a certificate wmcon made itself is about to expire (service-ca renews its own).
func renewDue(s *corev1.Secret) bool {
	if s.Labels[managedByLabel] != managedByWmcon {
		return false
	}
	b, _ := pem.Decode(s.Data[corev1.TLSCertKey])
	if b == nil {
		return true
	}
	c, err := x509.ParseCertificate(b.Bytes)
	return err != nil || time.Until(c.NotAfter) < selfSignedRenewal
}

// selfSignedServing makes a CA and a serving certificate for name signed by it (PEM): the chain, the key,
// and the CA.
func selfSignedServing(name string) (chain, keyPEM, caPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "wmcon windows_exporter CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(selfSignedLifetime), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano() + 1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(selfSignedLifetime),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	chain = append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), caPEM...)
	return chain, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), caPEM, nil
}
