package ovn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"

	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
)

// hybrid-overlay-node's own identity, as OVN-Kubernetes gives it (go-controller's node certificate manager):
// with --bootstrap-kubeconfig (WMCO passes the kubelet's C:\k\kubeconfig) it asks for a client certificate
// of the kube-apiserver-client signer, CN system:ovn-node:<node>, O system:ovn-nodes, for --cert-duration;
// it stores it in --cert-dir as ovnkube-client-<time>.pem (and ovnkube-client-current.pem) and talks to the
// API server with it. On OpenShift, network-node-identity approves such a request when the node itself asked
// (NodeIdentity plays it), and the controller manager signs it.
const (
	ovnNodePrefix    = "system:ovn-node:"
	ovnNodesGroup    = "system:ovn-nodes"
	certFilePrefix   = "ovnkube-client"
	defaultCertWait  = 2 * time.Minute // how long the real one waits for its certificate
	ovnNodeRoleName  = "wmcon-sim-ovn-node"
	defaultCertDir   = `C:\k\cni\config`
	defaultCertLife  = 10 * time.Minute
	nodeRequesterPfx = "system:node:"
)

// ovnCertUsages are the usages hybrid-overlay-node requests, and the only ones network-node-identity approves.
var ovnCertUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}

// NodeOptions configure the simulated hybrid-overlay-node.
type NodeOptions struct {
	// Connect makes the API client from the credentials the program loaded from its host (default: a
	// client-go clientset); the in-process demo passes its control plane's.
	Connect func(cfg *rest.Config) (kubernetes.Interface, error)
	// CertWait is how long it waits for its certificate before it exits (default 2 minutes, as the real one).
	CertWait time.Duration
}

func (o *NodeOptions) applyDefaults() {
	if o.Connect == nil {
		o.Connect = func(cfg *rest.Config) (kubernetes.Interface, error) {
			cfg = rest.CopyConfig(cfg)
			cfg.Timeout = 10 * time.Second
			return kubernetes.NewForConfig(cfg)
		}
	}
	if o.CertWait <= 0 {
		o.CertWait = defaultCertWait
	}
}

// ownClient is hybrid-overlay-node's API client: its current certificate when cert-dir holds a valid one for
// this node, else a new one requested with the bootstrap kubeconfig's credentials (without
// --bootstrap-kubeconfig it has none: it is not in a pod, so there is no in-cluster configuration either).
func ownClient(ctx context.Context, p *windows.Process, node string, opts NodeOptions) (kubernetes.Interface, error) {
	bootPath, _ := p.Flag("bootstrap-kubeconfig")
	if bootPath == "" {
		return nil, errors.New("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined")
	}
	boot, err := kubelet.LoadKubeconfig(p, bootPath)
	if err != nil {
		return nil, fmt.Errorf("failed to load bootstrap kubeconfig from %s, err: %v", bootPath, err)
	}
	dir := certDir(p)
	current := dir + `\` + certFilePrefix + "-current.pem"
	pair, err := p.ReadFile(current)
	if err != nil || !validFor(pair, ovnNodePrefix+node) {
		if pair, err = requestOwnCertificate(ctx, p, boot, node, opts); err != nil || ctx.Err() != nil {
			return nil, err
		}
		stamped := dir + `\` + certFilePrefix + "-" + time.Now().UTC().Format("2006-01-02-15-04-05") + ".pem"
		for _, path := range []string{stamped, current} {
			if err := p.WriteFile(path, pair); err != nil {
				return nil, fmt.Errorf("failed to store the certificate %s: %w", path, err)
			}
		}
		p.Log('I', "kube.go:330", "Certificate found")
	}
	own := rest.AnonymousClientConfig(boot)
	own.CertData, own.KeyData = pair, pair
	return opts.Connect(own)
}

// requestOwnCertificate posts the CSR with the bootstrap credentials (the kubelet's) and waits until it is
// approved and signed; nobody approving it in time is the real program's "certificate was not signed".
func requestOwnCertificate(ctx context.Context, p *windows.Process, boot *rest.Config, node string, opts NodeOptions) ([]byte, error) {
	client, err := opts.Connect(boot)
	if err != nil {
		return nil, fmt.Errorf("failed to create a client with the bootstrap kubeconfig: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	csrPEM, err := certutil.MakeCSRFromTemplate(key, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: ovnNodePrefix + node, Organization: []string{ovnNodesGroup}}})
	if err != nil {
		return nil, err
	}
	life := certDuration(p)
	p.Log('I', "kube.go:318", "Waiting for certificate")
	name, uid, err := csr.RequestCertificateWithContext(ctx, client, csrPEM, "", certificatesv1.KubeAPIServerClientSignerName, &life, ovnCertUsages, key)
	if err != nil {
		return nil, fmt.Errorf("certificate was not signed: cannot create certificate signing request: %w", err)
	}
	certPEM, err := waitIssued(ctx, client, name, uid, opts.CertWait)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("certificate was not signed: %w", err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(nil), certPEM...), keyPEM...), nil
}

// waitIssued polls the request until it is signed, denied or failed, or wait has passed. (It polls rather
// than watches as client-go's WaitForCertificate does: the demo's fake API loses events between a list and a
// watch when the approval is quick; the outcome is the same.)
func waitIssued(ctx context.Context, client kubernetes.Interface, name string, uid types.UID, wait time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		c, err := client.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if c.UID != uid {
				return nil, fmt.Errorf("csr %q changed UIDs", name)
			}
			for _, cond := range c.Status.Conditions {
				switch cond.Type {
				case certificatesv1.CertificateDenied:
					return nil, fmt.Errorf("certificate signing request is denied, reason: %v, message: %v", cond.Reason, cond.Message)
				case certificatesv1.CertificateFailed:
					return nil, fmt.Errorf("certificate signing request failed, reason: %v, message: %v", cond.Reason, cond.Message)
				}
			}
			if approved(c) && len(c.Status.Certificate) > 0 {
				return c.Status.Certificate, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func approved(c *certificatesv1.CertificateSigningRequest) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

func certDir(p *windows.Process) string {
	dir, _ := p.Flag("cert-dir")
	if dir == "" {
		dir = defaultCertDir
	}
	return strings.TrimRight(dir, `\/`)
}

func certDuration(p *windows.Process) time.Duration {
	if v, ok := p.Flag("cert-duration"); ok {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return defaultCertLife
}

// validFor reports whether a certificate-and-key PEM holds a certificate for cn that is valid now.
func validFor(pair []byte, cn string) bool {
	certs, err := certutil.ParseCertsPEM(pair)
	if err != nil || len(certs) == 0 {
		return false
	}
	now := time.Now()
	return certs[0].Subject.CommonName == cn && now.After(certs[0].NotBefore) && now.Before(certs[0].NotAfter)
}

// NodeIdentity plays OVN-Kubernetes' network-node-identity on OpenShift: it approves hybrid-overlay-node's
// certificate requests that a node made for itself, and gives the system:ovn-nodes group the access to Nodes
// the cluster network operator grants it. A request for another node's name, or with other usages or
// organization, is denied.
type NodeIdentity struct{ Kube kubernetes.Interface }

// Reconcile grants the group's access and decides the pending requests.
func (n NodeIdentity) Reconcile(ctx context.Context) error {
	if err := n.GrantNodeAccess(ctx); err != nil {
		return err
	}
	return n.Decide(ctx)
}

// Decide approves or denies hybrid-overlay-node's pending certificate requests.
func (n NodeIdentity) Decide(ctx context.Context) error {
	csrs := n.Kube.CertificatesV1().CertificateSigningRequests()
	list, err := csrs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("ovn: list certificate signing requests: %w", err)
	}
	for i := range list.Items {
		c := &list.Items[i]
		if c.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName || decided(c) {
			continue
		}
		req, err := parseCSR(c.Spec.Request)
		if err != nil || !strings.HasPrefix(req.Subject.CommonName, ovnNodePrefix) {
			continue // not hybrid-overlay-node's: not ours to decide
		}
		cond := certificatesv1.CertificateSigningRequestCondition{Status: corev1.ConditionTrue, LastUpdateTime: metav1.Now()}
		if why := refusal(c, req); why != "" {
			cond.Type, cond.Reason, cond.Message = certificatesv1.CertificateDenied, "CSRInvalid", why
		} else {
			cond.Type, cond.Reason, cond.Message = certificatesv1.CertificateApproved, "AutoApproved", "auto-approved by network-node-identity"
		}
		c.Status.Conditions = append(c.Status.Conditions, cond)
		if _, err := csrs.UpdateApproval(ctx, c.Name, c, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("ovn: decide %s: %w", c.Name, err)
		}
	}
	return nil
}

// refusal is why network-node-identity denies a request, "" when it approves it.
func refusal(c *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) string {
	node := strings.TrimPrefix(req.Subject.CommonName, ovnNodePrefix)
	switch {
	case c.Spec.Username != nodeRequesterPfx+node:
		return fmt.Sprintf("%s may not request a certificate for node %s", c.Spec.Username, node)
	case !slices.Equal(req.Subject.Organization, []string{ovnNodesGroup}):
		return fmt.Sprintf("organization must be %s", ovnNodesGroup)
	case !sameUsages(c.Spec.Usages, ovnCertUsages):
		return "usages must be digital signature and client auth"
	}
	return ""
}

func sameUsages(a, b []certificatesv1.KeyUsage) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func decided(c *certificatesv1.CertificateSigningRequest) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved || cond.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}

func parseCSR(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("no certificate request")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// GrantNodeAccess gives system:ovn-nodes what hybrid-overlay-node does with Nodes (read them, annotate its
// own), as the cluster network operator's RBAC does.
func (n NodeIdentity) GrantNodeAccess(ctx context.Context) error {
	rbac := n.Kube.RbacV1()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ovnNodeRoleName},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch"}}}}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ovn: create cluster role %s: %w", ovnNodeRoleName, err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ovnNodeRoleName},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ovnNodeRoleName},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: ovnNodesGroup}}}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ovn: bind cluster role %s: %w", ovnNodeRoleName, err)
	}
	return nil
}
