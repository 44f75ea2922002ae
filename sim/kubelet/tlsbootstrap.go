package kubelet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"

	"github.com/wmcon/wmcon/sim/windows"
)

const defaultCertDir = `C:\var\lib\kubelet\pki`

// credentials returns the kubelet's API client: from --kubeconfig when it holds a valid client certificate,
// otherwise after the TLS bootstrap with --bootstrap-kubeconfig.
func (k *kubelet) credentials(ctx context.Context) (kubernetes.Interface, error) {
	kcPath, _ := k.p.Flag("kubeconfig")
	if kcPath == "" {
		return nil, errors.New("failed to run Kubelet: no --kubeconfig given; this kubelet does not run standalone")
	}
	if cfg, err := loadKubeconfig(k.p, kcPath); err == nil && clientCertValid(cfg) {
		return k.opts.Connect(cfg)
	}
	bootPath, _ := k.p.Flag("bootstrap-kubeconfig")
	if bootPath == "" {
		return nil, fmt.Errorf("failed to run Kubelet: unable to load kubeconfig %s and no --bootstrap-kubeconfig given", kcPath)
	}
	if err := k.bootstrap(ctx, bootPath, kcPath); err != nil || ctx.Err() != nil {
		return nil, err
	}
	cfg, err := loadKubeconfig(k.p, kcPath)
	if err != nil {
		return nil, fmt.Errorf("failed to run Kubelet: invalid kubeconfig written by the TLS bootstrap: %w", err)
	}
	return k.opts.Connect(cfg)
}

// bootstrap is the kubelet's TLS bootstrap: post a client CSR with the bootstrap credentials, wait until
// it is approved and signed, store the certificate and key under --cert-dir and write --kubeconfig.
func (k *kubelet) bootstrap(ctx context.Context, bootPath, kcPath string) error {
	boot, err := loadKubeconfig(k.p, bootPath)
	if err != nil {
		return fmt.Errorf("failed to run Kubelet: unable to load bootstrap kubeconfig: %w", err)
	}
	k.p.Log('I', "bootstrap.go:98", `"Using bootstrap kubeconfig to generate TLS client cert, key and kubeconfig file"`)
	client, err := k.opts.Connect(boot)
	if err != nil {
		return fmt.Errorf("failed to run Kubelet: unable to load bootstrap kubeconfig: %w", err)
	}
	key, err := k.clientKey()
	if err != nil {
		return err
	}
	subject := &pkix.Name{CommonName: "system:node:" + k.nodeName, Organization: []string{"system:nodes"}}
	certPEM, err := k.requestCertificate(ctx, client, key, subject, nil, certificatesv1.KubeAPIServerClientKubeletSignerName,
		certificatesv1.UsageClientAuth, boot.Host)
	if err != nil || ctx.Err() != nil {
		if err != nil {
			err = fmt.Errorf("failed to run Kubelet: unable to load bootstrap kubeconfig: %w", err)
		}
		return err
	}
	pair, err := pairPEM(certPEM, key)
	if err != nil {
		return err
	}
	certDir := k.certDir()
	current := certDir + `\kubelet-client-current.pem`
	stamped := certDir + `\kubelet-client-` + time.Now().UTC().Format("2006-01-02-15-04-05") + ".pem"
	for _, path := range []string{stamped, current} {
		if err := k.p.WriteFile(path, pair); err != nil {
			return fmt.Errorf("failed to run Kubelet: unable to write certificate %s: %w", path, err)
		}
	}
	if tmp := certDir + `\` + clientKeyTmp; k.p.Exists(tmp) {
		if err := k.p.RemoveFile(tmp); err != nil {
			k.p.Log('I', "bootstrap.go:147", fmt.Sprintf(`"Failed cleaning up private key file" path=%q err=%q`, tmp, err.Error()))
		}
	}
	if err := k.writeKubeconfig(bootPath, kcPath, current); err != nil {
		return err
	}
	k.p.Log('I', "certificate_store.go:147", fmt.Sprintf(`"Loading cert/key pair from a file" filePath=%q`, current))
	return nil
}

// clientKeyTmp is where the kubelet's TLS bootstrap keeps the key of its client CSR until the certificate
// is issued (k8s.io/kubernetes pkg/kubelet/certificate/bootstrap), so a restart asks again with the same key.
const clientKeyTmp = "kubelet-client.key.tmp"

// clientKey is the key the TLS bootstrap requests its client certificate with, chosen as the real kubelet
// chooses it: the key of the current certificate pair when there is one, else the key in
// kubelet-client.key.tmp, generated and written there first when there is none. wmcon reads it from there
// to tell this kubelet's CSR from others.
func (k *kubelet) clientKey() (*ecdsa.PrivateKey, error) {
	if data, err := k.p.ReadFile(k.certDir() + `\kubelet-client-current.pem`); err == nil {
		if key, err := keyutil.ParsePrivateKeyPEM(data); err == nil {
			if ec, ok := key.(*ecdsa.PrivateKey); ok {
				return ec, nil
			}
		}
	}
	path := k.certDir() + `\` + clientKeyTmp
	if data, err := k.p.ReadFile(path); err == nil {
		if key, err := keyutil.ParsePrivateKeyPEM(data); err == nil {
			if ec, ok := key.(*ecdsa.PrivateKey); ok {
				return ec, nil
			}
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("failed to run Kubelet: unable to generate private key: %w", err)
	}
	data, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err == nil {
		err = k.p.WriteFile(path, data)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to run Kubelet: unable to write private key %s: %w", path, err)
	}
	return key, nil
}

// clientCSRName is the client CSR's name, derived from its key, subject and usages as the real kubelet
// derives it ("node-csr-…"): a kubelet that restarts while its request is pending finds that request
// again instead of posting a second one.
func clientCSRName(key *ecdsa.PrivateKey, subject *pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return "", err
	}
	h := sha512.New512_256()
	parts := append([]string{string(der), subject.CommonName}, subject.Organization...)
	for _, u := range usages {
		parts = append(parts, string(u))
	}
	for _, p := range parts {
		h.Write([]byte(base64.RawURLEncoding.EncodeToString([]byte(p)) + "|"))
	}
	return "node-csr-" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)), nil
}

// requestCertificate posts a CSR and waits until it is signed, as the kubelet's certificate manager does.
func (k *kubelet) requestCertificate(ctx context.Context, client kubernetes.Interface, key *ecdsa.PrivateKey, subject *pkix.Name,
	tmpl *x509.CertificateRequest, signer string, usage certificatesv1.KeyUsage, server string) ([]byte, error) {
	if tmpl == nil {
		tmpl = &x509.CertificateRequest{}
	}
	tmpl.Subject = *subject
	csrPEM, err := certutil.MakeCSRFromTemplate(key, tmpl)
	if err != nil {
		return nil, fmt.Errorf("unable to generate certificate request: %w", err)
	}
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, usage}
	name := "" // the serving CSR: generated, "csr-…"
	if signer == certificatesv1.KubeAPIServerClientKubeletSignerName {
		if name, err = clientCSRName(key, subject, usages); err != nil {
			return nil, fmt.Errorf("unable to name certificate request: %w", err)
		}
	}
	name, uid, err := csr.RequestCertificateWithContext(ctx, client, csrPEM, name, signer, nil, usages, key)
	if err != nil {
		return nil, fmt.Errorf("cannot create certificate signing request: %w", err)
	}
	k.p.Log('I', "csr.go:261", fmt.Sprintf(`"Waiting for certificate to be issued" csr=%q signerName=%q server=%q`, name, signer, serverHost(server)))
	certPEM, err := csr.WaitForCertificate(ctx, client, name, uid)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("certificate request %s was not issued: %w", name, err)
	}
	k.p.Log('I', "csr.go:282", fmt.Sprintf(`"Certificate issued" csr=%q signerName=%q`, name, signer))
	return certPEM, nil
}

func (k *kubelet) certDir() string {
	dir, _ := k.p.Flag("cert-dir")
	if dir == "" {
		dir = defaultCertDir
	}
	return strings.TrimRight(dir, `\/`)
}

// pairPEM is the kubelet's certificate store format: certificate and key in one PEM file.
func pairPEM(certPEM []byte, key *ecdsa.PrivateKey) ([]byte, error) {
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, fmt.Errorf("failed to run Kubelet: encode private key: %w", err)
	}
	return append(append([]byte(nil), certPEM...), keyPEM...), nil
}

// writeKubeconfig writes --kubeconfig as the kubelet does after bootstrapping: the bootstrap kubeconfig's
// server and CA (by path when it named a file), and the certificate store's current pair.
func (k *kubelet) writeKubeconfig(bootPath, kcPath, pairPath string) error {
	raw, err := k.p.ReadFile(bootPath)
	if err != nil {
		return fmt.Errorf("failed to run Kubelet: unable to load bootstrap kubeconfig: %w", notFound(bootPath))
	}
	bootCfg, err := clientcmd.Load(raw)
	if err != nil {
		return fmt.Errorf("failed to run Kubelet: unable to load bootstrap kubeconfig: %w", err)
	}
	cluster := currentCluster(bootCfg)
	if cluster == nil {
		return errors.New("failed to run Kubelet: unable to load bootstrap kubeconfig: no current cluster")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["default-cluster"] = &clientcmdapi.Cluster{Server: cluster.Server,
		CertificateAuthority: cluster.CertificateAuthority, CertificateAuthorityData: cluster.CertificateAuthorityData}
	kc.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificate: pairPath, ClientKey: pairPath}
	kc.Contexts["default-context"] = &clientcmdapi.Context{Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}
	kc.CurrentContext = "default-context"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("failed to run Kubelet: encode kubeconfig: %w", err)
	}
	if err := k.p.WriteFile(kcPath, data); err != nil {
		return fmt.Errorf("failed to run Kubelet: unable to write kubeconfig %s: %w", kcPath, err)
	}
	return nil
}

func currentCluster(cfg *clientcmdapi.Config) *clientcmdapi.Cluster {
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil {
		return nil
	}
	return cfg.Clusters[ctx.Cluster]
}

// loadKubeconfig loads a kubeconfig from the host, reading the files it names from the host too (client-go
// would look on this machine's disk).
func loadKubeconfig(p *windows.Process, path string) (*rest.Config, error) {
	raw, err := p.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("stat %s: The system cannot find the file specified.", path)
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return nil, fmt.Errorf("error loading config file %q: %w", path, err)
	}
	for name, c := range cfg.Clusters {
		if c.CertificateAuthority != "" {
			if c.CertificateAuthorityData, err = readRef(p, c.CertificateAuthority, "certificate-authority", name); err != nil {
				return nil, err
			}
			c.CertificateAuthority = ""
		}
	}
	for name, a := range cfg.AuthInfos {
		refs := []struct {
			path *string
			data *[]byte
			kind string
		}{{&a.ClientCertificate, &a.ClientCertificateData, "client-cert"}, {&a.ClientKey, &a.ClientKeyData, "client-key"}}
		for _, r := range refs {
			if *r.path == "" {
				continue
			}
			if *r.data, err = readRef(p, *r.path, r.kind, name); err != nil {
				return nil, err
			}
			*r.path = ""
		}
		if a.TokenFile != "" {
			tok, err := readRef(p, a.TokenFile, "token-file", name)
			if err != nil {
				return nil, err
			}
			a.Token, a.TokenFile = strings.TrimSpace(string(tok)), ""
		}
	}
	return clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
}

func readRef(p *windows.Process, path, kind, owner string) ([]byte, error) {
	data, err := p.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("unable to read %s %s for %s due to %w", kind, path, owner, notFound(path))
	}
	return data, nil
}

// clientCertValid reports whether a kubeconfig carries a client certificate that is valid now, the
// kubelet's test for skipping the bootstrap.
func clientCertValid(cfg *rest.Config) bool {
	if len(cfg.CertData) == 0 || len(cfg.KeyData) == 0 {
		return false
	}
	certs, err := certutil.ParseCertsPEM(cfg.CertData)
	if err != nil || len(certs) == 0 {
		return false
	}
	now := time.Now()
	return now.After(certs[0].NotBefore) && now.Before(certs[0].NotAfter)
}

// HostKubeconfig loads a kubeconfig from a simulated host as a program running there reads it: the
// certificate, key and CA files it names are read from the host too.
func HostKubeconfig(p *windows.Process, path string) (*rest.Config, error) {
	return loadKubeconfig(p, path)
}
