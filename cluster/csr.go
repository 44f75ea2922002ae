package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
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
// kubelet's CSRs only after matching them to an instance it configures; wmcon does more, because a name
// match alone lets anyone holding the bootstrap token (every configured host has it) get a certificate
// for this host's node name, and lets the CSR of a kubelet that ran here before count as this one's:
//   - a client CSR must be requested by the bootstrap identity wmcon handed out, for system:node:<name>,
//     and be signed with the key this host's kubelet generated (ClientKey, read from the host's disk):
//     only the kubelet holding that key can make such a request, and only its current one carries it;
//   - a serving CSR must be requested by the node itself, name only this host's names and addresses, and
//     be created no earlier than the client CSR of the kubelet running now (ServingSince), so the serving
//     CSR of an earlier kubelet under the same node name does not count.
type CSRPolicy struct {
	NodeName          string
	BootstrapIdentity string
	Names             []string // DNS names of the host (node name, host name), lower case
	IPs               []string // the host's addresses
	// ClientKey is the PKIX DER public key of the key the host's kubelet generated for its client
	// certificate. Without it no client CSR is this host's.
	ClientKey []byte
	// KeyWritten is when the kubelet wrote that key, by the host's clock: a pending client CSR created
	// before it (less CSRClockSkew) is not this kubelet's.
	KeyWritten time.Time
	// ServingSince is when the client CSR of the running kubelet was created, by the API server's clock.
	ServingSince time.Time
}

// CSRClockSkew is how far the host's clock (the key file's time) may be behind or ahead of the API
// server's (CSR creation times, in whole seconds) before a CSR made after the key looks made before it.
const CSRClockSkew = 2 * time.Minute

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
		if err := p.kubeletsKey(csr, req); err != nil {
			return kind, false, err.Error()
		}
		return kind, usagesWithin(csr.Spec.Usages, certificatesv1.UsageClientAuth) == nil, usageReason(csr.Spec.Usages, certificatesv1.UsageClientAuth)
	}
	if csr.Spec.Username != node {
		return kind, false, fmt.Sprintf("requested by %q, not by %s", csr.Spec.Username, node)
	}
	if err := p.sansOfThisHost(req); err != nil {
		return kind, false, err.Error()
	}
	if created := csr.CreationTimestamp.Time; created.Before(p.ServingSince.Truncate(time.Second)) {
		return kind, false, fmt.Sprintf("created %s, before the client CSR of the kubelet running now (%s): an earlier kubelet's",
			created.UTC().Format(time.RFC3339), p.ServingSince.UTC().Format(time.RFC3339))
	}
	return kind, usagesWithin(csr.Spec.Usages, certificatesv1.UsageServerAuth) == nil, usageReason(csr.Spec.Usages, certificatesv1.UsageServerAuth)
}

// kubeletsKey checks that a client CSR is signed with the key this host's kubelet generated and, if it
// is still to be approved, that it was created after that key was written. (An approved one may be older:
// a kubelet whose certificate expired asks again with the key of that certificate.)
func (p CSRPolicy) kubeletsKey(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) error {
	if len(p.ClientKey) == 0 {
		return fmt.Errorf("this host's kubelet has generated no key yet")
	}
	der, err := x509.MarshalPKIXPublicKey(req.PublicKey)
	if err != nil || !bytes.Equal(der, p.ClientKey) {
		return fmt.Errorf("signed with key %s, not with the key this host's kubelet generated (%s): not this kubelet's request", KeyFingerprint(der), KeyFingerprint(p.ClientKey))
	}
	if approved, _ := csrState(csr); approved || p.KeyWritten.IsZero() {
		return nil
	}
	if created := csr.CreationTimestamp.Time; created.Before(p.KeyWritten.Add(-CSRClockSkew)) {
		return fmt.Errorf("created %s, before this host's kubelet wrote its key (%s)", created.UTC().Format(time.RFC3339), p.KeyWritten.UTC().Format(time.RFC3339))
	}
	return nil
}

// KeyFingerprint names a public key (PKIX DER) in messages: SHA256: and the unpadded base64 of its hash,
// as ssh-keygen names keys.
func KeyFingerprint(der []byte) string {
	if len(der) == 0 {
		return "none"
	}
	sum := sha256.Sum256(der)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
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

// CSRRef names an approved CSR and says when it was created (by the API server's clock).
type CSRRef struct {
	Name    string
	Created time.Time
}

// ApproveCSR waits until the CSR of kind from this host's kubelet is approved: it approves the one
// pending CSR that passes the policy, or counts one approved earlier (a re-run); it reports every kubelet
// CSR it refuses, once each. When several pass, it approves none and fails naming them: only the kubelet
// can tell which is its own. It ends with ctx.
func (o *Ops) ApproveCSR(ctx context.Context, p CSRPolicy, kind string, report func(CSRDecision)) (CSRRef, error) {
	seen := map[string]bool{}
	for {
		list, err := o.c.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			return CSRRef{}, fmt.Errorf("list certificate signing requests: %w", err)
		}
		var mine []*certificatesv1.CertificateSigningRequest
		var reason string
		for i := range list.Items {
			csr := &list.Items[i]
			k, ok, why := p.Check(csr)
			approved, denied := csrState(csr)
			switch {
			case k == "" || denied:
			case ok && k == kind:
				mine, reason = append(mine, csr), why
			case !ok && !approved && !seen[csr.Name]:
				seen[csr.Name] = true
				report(CSRDecision{Name: csr.Name, Kind: k, Reason: why})
			}
		}
		if len(mine) > 1 {
			return CSRRef{}, &SeveralCSRsError{Kind: kind, Names: csrNames(mine)}
		}
		if len(mine) == 1 {
			csr := mine[0]
			ref := CSRRef{Name: csr.Name, Created: csr.CreationTimestamp.Time}
			if approved, _ := csrState(csr); approved {
				return ref, nil
			}
			if err := o.approve(ctx, csr); err != nil {
				return CSRRef{}, err
			}
			report(CSRDecision{Name: csr.Name, Kind: kind, Approved: true, Reason: reason})
			return ref, nil
		}
		select {
		case <-ctx.Done():
			return CSRRef{}, ctx.Err()
		case <-time.After(CSRPoll):
		}
	}
}

// SeveralCSRsError: more than one CSR passed the policy, so wmcon approved none.
type SeveralCSRsError struct {
	Kind  string
	Names []string
}

func (e *SeveralCSRsError) Error() string {
	return fmt.Sprintf("%d %s CSRs pass every check for this host (%s): wmcon approves none of them, since only one can be its kubelet's current request; "+
		"delete the ones that are not (oc delete csr NAME) or approve the right one yourself (oc adm certificate approve NAME)",
		len(e.Names), e.Kind, strings.Join(e.Names, ", "))
}

func csrNames(csrs []*certificatesv1.CertificateSigningRequest) []string {
	names := make([]string, len(csrs))
	for i, c := range csrs {
		names[i] = c.Name
	}
	slices.Sort(names)
	return names
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
