package cluster

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CSR kinds a kubelet posts.
const (
	ClientCSR  = "client"
	ServingCSR = "serving"
)

// CSRPolicy says which certificate requests belong to the host being configured. WMCO approves a
// kubelet's CSRs only after matching them to an instance it configures; so does wmcon, more strictly:
// the client CSR must come from the bootstrap identity wmcon handed out, the serving CSR from the node
// itself, and every name and address in it must be this host's.
type CSRPolicy struct {
	NodeName          string
	BootstrapIdentity string
	Names             []string // DNS names of the host (node name, host name), lower case
	IPs               []string // the host's addresses
}

// CSRDecision is what wmcon decided about one CSR.
type CSRDecision struct {
	Name     string
	Kind     string // client, serving, or "" for CSRs of other signers
	Approved bool
	Reason   string // why it was (not) approved
}

// Check decides whether csr is this host's kubelet CSR of the given kind.
func (p CSRPolicy) Check(csr *certificatesv1.CertificateSigningRequest) (kind string, ok bool, reason string) {
	switch csr.Spec.SignerName {
	case certificatesv1.KubeAPIServerClientKubeletSignerName:
		kind = ClientCSR
	case certificatesv1.KubeletServingSignerName:
		kind = ServingCSR
	default:
		return "", false, "signer " + csr.Spec.SignerName + " is not a kubelet's"
	}
	req, err := parseCSR(csr.Spec.Request)
	if err != nil {
		return kind, false, err.Error()
	}
	node := "system:node:" + p.NodeName
	if req.Subject.CommonName != node || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return kind, false, fmt.Sprintf("subject %q/%v is not %s/system:nodes", req.Subject.CommonName, req.Subject.Organization, node)
	}
	if kind == ClientCSR {
		if csr.Spec.Username != p.BootstrapIdentity {
			return kind, false, fmt.Sprintf("requested by %q, not by the bootstrap identity %q wmcon handed out", csr.Spec.Username, p.BootstrapIdentity)
		}
		if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
			return kind, false, "a client certificate request with subject alternative names"
		}
		return kind, usagesWithin(csr.Spec.Usages, certificatesv1.UsageClientAuth) == nil, usageReason(csr.Spec.Usages, certificatesv1.UsageClientAuth)
	}
	if csr.Spec.Username != node {
		return kind, false, fmt.Sprintf("requested by %q, not by %s", csr.Spec.Username, node)
	}
	if err := p.sansOfThisHost(req); err != nil {
		return kind, false, err.Error()
	}
	return kind, usagesWithin(csr.Spec.Usages, certificatesv1.UsageServerAuth) == nil, usageReason(csr.Spec.Usages, certificatesv1.UsageServerAuth)
}

func (p CSRPolicy) sansOfThisHost(req *x509.CertificateRequest) error {
	if len(req.DNSNames)+len(req.IPAddresses) == 0 {
		return fmt.Errorf("a serving certificate request without addresses")
	}
	if len(req.EmailAddresses)+len(req.URIs) > 0 {
		return fmt.Errorf("e-mail or URI names in a serving certificate request")
	}
	for _, d := range req.DNSNames {
		if !slices.Contains(p.Names, strings.ToLower(d)) {
			return fmt.Errorf("DNS name %q is not a name of this host (%s)", d, strings.Join(p.Names, ", "))
		}
	}
	for _, ip := range req.IPAddresses {
		if !slices.ContainsFunc(p.IPs, func(s string) bool { return net.ParseIP(s).Equal(ip) }) {
			return fmt.Errorf("address %s is not an address of this host (%s)", ip, strings.Join(p.IPs, ", "))
		}
	}
	return nil
}

func parseCSR(b []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("the request is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("unreadable certificate request: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("the certificate request's signature is invalid: %w", err)
	}
	return req, nil
}

func usagesWithin(got []certificatesv1.KeyUsage, auth certificatesv1.KeyUsage) error {
	allowed := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, auth}
	for _, u := range got {
		if !slices.Contains(allowed, u) {
			return fmt.Errorf("usage %q", u)
		}
	}
	if !slices.Contains(got, auth) {
		return fmt.Errorf("no %q usage", auth)
	}
	return nil
}

func usageReason(got []certificatesv1.KeyUsage, auth certificatesv1.KeyUsage) string {
	if err := usagesWithin(got, auth); err != nil {
		return "unexpected usages: " + err.Error()
	}
	return "this host's kubelet"
}

func csrState(csr *certificatesv1.CertificateSigningRequest) (approved, denied bool) {
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			denied = true
		}
	}
	return approved, denied
}

// CSRPoll is how often pending CSRs are listed while waiting for the host's.
var CSRPoll = 500 * time.Millisecond

// ApproveCSR waits until a CSR of kind from this host is approved: it approves the matching pending one
// (and only that), and reports every kubelet CSR it refuses, once each. A matching CSR approved earlier
// (a re-run) counts. It ends with ctx.
func (o *Ops) ApproveCSR(ctx context.Context, p CSRPolicy, kind string, report func(CSRDecision)) (string, error) {
	seen := map[string]bool{}
	for {
		list, err := o.c.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", fmt.Errorf("list certificate signing requests: %w", err)
		}
		for i := range list.Items {
			csr := &list.Items[i]
			k, ok, reason := p.Check(csr)
			approved, denied := csrState(csr)
			if k == "" || denied {
				continue
			}
			if ok && k == kind && approved {
				return csr.Name, nil
			}
			if ok && k == kind {
				if err := o.approve(ctx, csr); err != nil {
					return "", err
				}
				report(CSRDecision{Name: csr.Name, Kind: k, Approved: true, Reason: reason})
				return csr.Name, nil
			}
			if !ok && !approved && !seen[csr.Name] {
				seen[csr.Name] = true
				report(CSRDecision{Name: csr.Name, Kind: k, Reason: reason})
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(CSRPoll):
		}
	}
}

func (o *Ops) approve(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "WMCONApproved",
		Message: "approved by wmcon: the kubelet of a Windows host it is configuring", LastUpdateTime: metav1.Now(),
	})
	if _, err := o.c.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("approve CSR %s: %w", csr.Name, err)
	}
	return nil
}
