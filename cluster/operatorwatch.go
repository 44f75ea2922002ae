package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
)

// OperatorProgress is where the Windows Machine Config Operator stands with one host, as
// wmcon configure --watch follows it.
type OperatorProgress struct {
	Machine      string // "<namespace>/<name>" of its Windows Machine; "" for a BYOH host
	MachinePhase string
	Node         string // "" until it registered
	NodeReady    bool
	Version      string        // the node's version annotation: set once the operator finished configuring it
	CSRs         []CSRProgress // the certificate requests of this node, by name
	Events       []EventInfo   // the node's and its Machine's recent events, newest first
}

// CSRProgress is one certificate request of the node and how far it got.
type CSRProgress struct {
	Name  string
	Kind  string // client or serving
	State string // Pending, Approved, Issued or Denied
}

// OperatorProgress reads the host's Machine (by node or address), its Node (named, or found by its
// InternalIP), the node's CSRs (subject system:node:<node>) and its events.
func (o *Ops) OperatorProgress(ctx context.Context, addr, node string) (OperatorProgress, error) {
	var p OperatorProgress
	if err := o.machineProgress(ctx, addr, node, &p); err != nil {
		return p, err
	}
	if p.Node == "" {
		p.Node = node
	}
	n, err := o.nodeFor(ctx, addr, p.Node)
	if err != nil {
		return p, err
	}
	if n != nil {
		p.Node = n.Name
		p.Version = n.Annotations[config.VersionAnnotation]
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				p.NodeReady = c.Status == corev1.ConditionTrue
			}
		}
	}
	if p.Node == "" {
		return p, nil
	}
	if p.CSRs, err = o.nodeCSRs(ctx, p.Node); err != nil {
		return p, err
	}
	p.Events, err = NodeEvents(ctx, o.c.Kube, p.Node, p.Machine, 10)
	return p, err
}

func (o *Ops) machineProgress(ctx context.Context, addr, node string, p *OperatorProgress) error {
	if o.c.Machine == nil {
		return nil
	}
	ms, err := o.c.Machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{
		LabelSelector: config.MachineOSIDLabel + "=" + config.WindowsOSID})
	if apierrors.IsNotFound(err) || isNoAPI(err) || apierrors.IsForbidden(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list Windows Machines: %w", err)
	}
	for _, m := range ms.Items {
		match := m.Status.NodeRef != nil && node != "" && m.Status.NodeRef.Name == node
		for _, a := range m.Status.Addresses {
			match = match || (addr != "" && strings.EqualFold(a.Address, addr))
		}
		if !match {
			continue
		}
		p.Machine = m.Namespace + "/" + m.Name
		if m.Status.Phase != nil {
			p.MachinePhase = *m.Status.Phase
		}
		if m.Status.NodeRef != nil {
			p.Node = m.Status.NodeRef.Name
		}
		return nil
	}
	return nil
}

// nodeFor is the named Node, else the Node whose InternalIP is addr; nil when there is none yet.
func (o *Ops) nodeFor(ctx context.Context, addr, name string) (*corev1.Node, error) {
	if name != "" {
		n, err := o.c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return n, err
	}
	if addr == "" {
		return nil, nil
	}
	l, err := o.c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	for i := range l.Items {
		for _, a := range l.Items[i].Status.Addresses {
			if a.Type == corev1.NodeInternalIP && a.Address == addr {
				return &l.Items[i], nil
			}
		}
	}
	return nil, nil
}

// nodeCSRs lists the kubelet CSRs whose subject is system:node:<node>.
func (o *Ops) nodeCSRs(ctx context.Context, node string) ([]CSRProgress, error) {
	l, err := o.c.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list certificate signing requests: %w", err)
	}
	var out []CSRProgress
	for i := range l.Items {
		csr := &l.Items[i]
		kind := ""
		switch csr.Spec.SignerName {
		case certificatesv1.KubeAPIServerClientKubeletSignerName:
			kind = ClientCSR
		case certificatesv1.KubeletServingSignerName:
			kind = ServingCSR
		default:
			continue
		}
		req, err := parseCSR(csr.Spec.Request)
		if err != nil || req.Subject.CommonName != "system:node:"+node {
			continue
		}
		out = append(out, CSRProgress{Name: csr.Name, Kind: kind, State: csrProgressState(csr)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func csrProgressState(csr *certificatesv1.CertificateSigningRequest) string {
	approved, denied := csrState(csr)
	switch {
	case denied:
		return "Denied"
	case approved && len(csr.Status.Certificate) > 0:
		return "Issued"
	case approved:
		return "Approved"
	}
	return "Pending"
}
