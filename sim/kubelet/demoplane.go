package kubelet

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync/atomic"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	certificatesv1client "k8s.io/client-go/kubernetes/typed/certificates/v1"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// DemoControlPlane is the in-process demo's stand-in for what a real control plane does for a joining
// kubelet, over a client-go fake clientset: it checks the credentials the kubelet loaded from its host
// (server URL, CA, bootstrap token or a client certificate it signed) as the API server's authentication
// would, and signs approved kubelet CSRs as kube-controller-manager's signer would. It approves nothing.
// Tests use the real kube-apiserver and kube-controller-manager instead (testsupport/kubeapi); this exists
// only because the demo has no API server.
//
// What it cannot know from a fake clientset is who made a request, so a kubelet-client CSR is recorded as
// requested by the bootstrap identity (BootstrapUser) and a kubelet-serving CSR by the node it names, which
// is what the real API server records for an honest kubelet.
type DemoControlPlane struct {
	kube   *fake.Clientset
	url    string
	token  string
	user   string
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte
	serial atomic.Int64
}

// NewDemoControlPlane makes a CA and the stand-in for the cluster whose API server is url; token is the
// bootstrap token it accepts, authenticated as user (for example the node-bootstrapper service account).
func NewDemoControlPlane(kube *fake.Clientset, url, token, user string) (*DemoControlPlane, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("demo CA key: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "demo-cluster-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("demo CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("demo CA: %w", err)
	}
	d := &DemoControlPlane{kube: kube, url: strings.TrimRight(url, "/"), token: token, user: user,
		caCert: cert, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	d.serial.Store(1)
	d.installReactors()
	return d, nil
}

// CACert is the demo cluster's CA (PEM): the bootstrap CA and kubelet client CA a demo host needs.
func (d *DemoControlPlane) CACert() []byte { return bytes.Clone(d.caPEM) }

// BootstrapUser is the identity the bootstrap token authenticates as.
func (d *DemoControlPlane) BootstrapUser() string { return d.user }

// Connect is KubeletOptions.Connect for demo hosts: it refuses what the real API server would refuse, with
// the error a client would see, and otherwise hands out the demo's clientset.
func (d *DemoControlPlane) Connect(cfg *rest.Config) (kubernetes.Interface, error) {
	if strings.TrimRight(cfg.Host, "/") != d.url {
		return nil, fmt.Errorf("Get %q: dial tcp: lookup %s: no such host", cfg.Host+"/api", serverHost(cfg.Host))
	}
	if !bytes.Contains(cfg.CAData, d.caPEM) {
		return nil, fmt.Errorf("Get %q: tls: failed to verify certificate: x509: certificate signed by unknown authority", cfg.Host+"/api")
	}
	switch {
	case cfg.BearerToken != "":
		if cfg.BearerToken != d.token {
			return nil, errors.New("Unauthorized")
		}
	case len(cfg.CertData) > 0:
		if err := d.verifyClientCert(cfg.CertData); err != nil {
			return nil, errors.New("Unauthorized")
		}
	default:
		return nil, errors.New("Unauthorized")
	}
	return d.kube, nil
}

// ConnectAsCertUser is Connect for a program whose certificate requests must name it as their requester
// (hybrid-overlay-node's, which network-node-identity checks): the CSRs a certificate-authenticated client
// creates carry its user and groups, as the API server records them.
func (d *DemoControlPlane) ConnectAsCertUser(cfg *rest.Config) (kubernetes.Interface, error) {
	kube, err := d.Connect(cfg)
	if err != nil || len(cfg.CertData) == 0 || cfg.BearerToken != "" {
		return kube, err
	}
	user, groups := certIdentity(cfg.CertData)
	return requesterKube{Interface: kube, user: user, groups: groups}, nil
}

// certIdentity is the user and groups a client certificate authenticates as (CN and O), as the API server
// maps them.
func certIdentity(certPEM []byte) (string, []string) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return "", nil
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", nil
	}
	return cert.Subject.CommonName, append(append([]string(nil), cert.Subject.Organization...), "system:authenticated")
}

// requesterKube is the demo's clientset as one certificate-authenticated client sees it: the CSRs it
// creates name it as their requester, as the API server records whoever created one (the fake cannot know).
type requesterKube struct {
	kubernetes.Interface
	user   string
	groups []string
}

func (k requesterKube) CertificatesV1() certificatesv1client.CertificatesV1Interface {
	return requesterCerts{CertificatesV1Interface: k.Interface.CertificatesV1(), k: k}
}

type requesterCerts struct {
	certificatesv1client.CertificatesV1Interface
	k requesterKube
}

func (c requesterCerts) CertificateSigningRequests() certificatesv1client.CertificateSigningRequestInterface {
	return requesterCSRs{CertificateSigningRequestInterface: c.CertificatesV1Interface.CertificateSigningRequests(), k: c.k}
}

type requesterCSRs struct {
	certificatesv1client.CertificateSigningRequestInterface
	k requesterKube
}

func (c requesterCSRs) Create(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, opts metav1.CreateOptions) (*certificatesv1.CertificateSigningRequest, error) {
	csr = csr.DeepCopy()
	csr.Spec.Username, csr.Spec.Groups = c.k.user, c.k.groups
	return c.CertificateSigningRequestInterface.Create(ctx, csr, opts)
}

func (d *DemoControlPlane) verifyClientCert(certPEM []byte) error {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return errors.New("no certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AddCert(d.caCert)
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return err
}

// installReactors gives the fake clientset what the API server does for CSRs and the fake lacks: names from
// generateName, UIDs, the requester, and field selectors on metadata.name (the kubelet waits on those).
func (d *DemoControlPlane) installReactors() {
	var n atomic.Int64
	d.kube.PrependReactor("create", "certificatesigningrequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		csr, ok := a.(k8stesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		if !ok {
			return false, nil, nil
		}
		i := n.Add(1)
		if csr.Name == "" && csr.GenerateName != "" {
			csr.Name = fmt.Sprintf("%s%05d", csr.GenerateName, i)
		}
		csr.UID = types.UID(fmt.Sprintf("demo-csr-%d", i))
		csr.CreationTimestamp = metav1.Now()
		switch csr.Spec.SignerName {
		case certificatesv1.KubeAPIServerClientKubeletSignerName:
			csr.Spec.Username, csr.Spec.Groups = d.user, []string{"system:serviceaccounts", "system:authenticated"}
		case certificatesv1.KubeletServingSignerName:
			if req, err := parseRequest(csr.Spec.Request); err == nil {
				csr.Spec.Username, csr.Spec.Groups = req.Subject.CommonName, []string{"system:nodes", "system:authenticated"}
			}
		}
		return false, csr, nil // the default reactor stores it
	})
	d.kube.PrependWatchReactor("certificatesigningrequests", func(a k8stesting.Action) (bool, watch.Interface, error) {
		r := a.(k8stesting.WatchAction).GetWatchRestrictions()
		name, ok := r.Fields.RequiresExactMatch("metadata.name")
		if !ok {
			return false, nil, nil
		}
		// From the version the watcher listed at, as the API server does: the kubelet lists its CSR, then
		// watches it, and a certificate issued in between must still reach it (without the version the
		// fake replays nothing and that kubelet would wait forever for a certificate already issued).
		w, err := d.kube.Tracker().Watch(a.GetResource(), a.GetNamespace(), metav1.ListOptions{ResourceVersion: r.ResourceVersion})
		if err != nil {
			return true, nil, err
		}
		return true, watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
			m, err := metaName(e.Object)
			return e, err == nil && m == name
		}), nil
	})
	d.kube.PrependReactor("list", "certificatesigningrequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name, ok := a.(k8stesting.ListAction).GetListRestrictions().Fields.RequiresExactMatch("metadata.name")
		if !ok {
			return false, nil, nil
		}
		obj, err := d.kube.Tracker().List(a.GetResource(),
			certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		list := obj.(*certificatesv1.CertificateSigningRequestList)
		kept := list.Items[:0]
		for _, c := range list.Items {
			if c.Name == name {
				kept = append(kept, c)
			}
		}
		list.Items = kept
		return true, list, nil
	})
}

func metaName(obj runtime.Object) (string, error) {
	if c, ok := obj.(*certificatesv1.CertificateSigningRequest); ok {
		return c.Name, nil
	}
	return "", errors.New("not a CSR")
}

// Run signs approved kubelet CSRs until ctx ends, as the controller manager's signer does.
func (d *DemoControlPlane) Run(ctx context.Context) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		d.signApproved(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (d *DemoControlPlane) signApproved(ctx context.Context) {
	csrs := d.kube.CertificatesV1().CertificateSigningRequests()
	list, err := csrs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range list.Items {
		c := &list.Items[i]
		if len(c.Status.Certificate) > 0 || !approved(c) {
			continue
		}
		switch c.Spec.SignerName {
		case certificatesv1.KubeAPIServerClientKubeletSignerName, certificatesv1.KubeletServingSignerName, certificatesv1.KubeAPIServerClientSignerName:
		default:
			continue
		}
		certPEM, err := d.sign(c)
		if err != nil {
			continue
		}
		c.Status.Certificate = certPEM
		_, _ = csrs.UpdateStatus(ctx, c, metav1.UpdateOptions{})
	}
}

func approved(c *certificatesv1.CertificateSigningRequest) bool {
	ok := false
	for _, cond := range c.Status.Conditions {
		switch cond.Type {
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return false
		case certificatesv1.CertificateApproved:
			ok = true
		}
	}
	return ok
}

func (d *DemoControlPlane) sign(c *certificatesv1.CertificateSigningRequest) ([]byte, error) {
	req, err := parseRequest(c.Spec.Request)
	if err != nil {
		return nil, err
	}
	usage := x509.ExtKeyUsageClientAuth
	if c.Spec.SignerName == certificatesv1.KubeletServingSignerName {
		usage = x509.ExtKeyUsageServerAuth
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(d.serial.Add(1)), Subject: req.Subject,
		DNSNames: req.DNSNames, IPAddresses: req.IPAddresses,
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(30 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, d.caCert, req.PublicKey, d.caKey)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

func parseRequest(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no CSR PEM block")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}
