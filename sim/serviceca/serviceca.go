// Package serviceca plays OpenShift's service-ca operator for tests against the real API server: a Service
// annotated service.beta.openshift.io/serving-cert-secret-name gets, in its namespace, a kubernetes.io/tls
// secret of that name holding a serving certificate for the Service's DNS names, signed by the stand-in's
// own CA, and the Service is annotated with the signer, as service-ca does. Its presence shows as the
// namespace openshift-service-ca, where the real operator runs.
package serviceca

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
	"k8s.io/client-go/kubernetes"
)

// The annotations service-ca reads and writes, and the namespace it runs in.
const (
	ServingCertSecretAnnotation  = "service.beta.openshift.io/serving-cert-secret-name"
	SignedByAnnotation           = "service.beta.openshift.io/serving-cert-signed-by"
	OriginatingServiceAnnotation = "service.beta.openshift.io/originating-service-name"
	Namespace                    = "openshift-service-ca"
)

// Controller issues serving certificates for annotated Services.
type Controller struct {
	Kube kubernetes.Interface

	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
	signer string
}

// Run makes the namespace that shows service-ca is there, then reconciles every interval until ctx ends.
func (c *Controller) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		_ = c.Reconcile(ctx) // retried on the next tick
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CA is the stand-in's CA certificate (PEM): what a client of the issued certificates trusts.
func (c *Controller) CA() []byte { return c.caPEM }

// Reconcile issues a certificate for each annotated Service whose secret does not exist yet.
func (c *Controller) Reconcile(ctx context.Context) error {
	if err := c.init(ctx); err != nil {
		return err
	}
	svcs, err := c.Kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("serviceca: list services: %w", err)
	}
	for i := range svcs.Items {
		s := &svcs.Items[i]
		name := s.Annotations[ServingCertSecretAnnotation]
		if name == "" {
			continue
		}
		if _, err := c.Kube.CoreV1().Secrets(s.Namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
			continue
		} else if !apierrors.IsNotFound(err) {
			return err
		}
		if err := c.issue(ctx, s, name); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) init(ctx context.Context) error {
	if c.ca == nil {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		c.signer = fmt.Sprintf("openshift-service-serving-signer@%d", time.Now().Unix())
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: c.signer},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
		if err != nil {
			return err
		}
		if c.ca, err = x509.ParseCertificate(der); err != nil {
			return err
		}
		c.caKey, c.caPEM = key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	_, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("serviceca: namespace %s: %w", Namespace, err)
	}
	return nil
}

// issue creates the Service's serving certificate secret, owned by the Service, and marks the Service.
func (c *Controller) issue(ctx context.Context, s *corev1.Service, name string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	dns := []string{s.Name + "." + s.Namespace + ".svc", s.Name + "." + s.Namespace + ".svc.cluster.local"}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: dns[0]}, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca, key.Public(), c.caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace,
			Annotations:     map[string]string{OriginatingServiceAnnotation: s.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: s.Name, UID: s.UID}}},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), c.caPEM...),
			corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		},
	}
	if _, err := c.Kube.CoreV1().Secrets(s.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("serviceca: create secret %s/%s: %w", s.Namespace, name, err)
	}
	if s.Annotations[SignedByAnnotation] != c.signer {
		s.Annotations[SignedByAnnotation] = c.signer
		if _, err := c.Kube.CoreV1().Services(s.Namespace).Update(ctx, s, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("serviceca: annotate service %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}
