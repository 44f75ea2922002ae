package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// ErrNoOperator is what the installed operator's contract is read as on a cluster without an installed WMCO.
var ErrNoOperator = errors.New("WMCO is not installed (no Succeeded ClusterServiceVersion in " + config.OperatorNamespace + ")")

// ReadServicesContract reads WMCO's published node contract for an operator version: the ConfigMap
// windows-services-<version> in the operator's namespace, parsed and validated (contract.Parse). A missing
// or malformed ConfigMap is an error naming it and saying what to do.
func (o *Ops) ReadServicesContract(ctx context.Context, version string) (contract.Data, error) {
	d, _, err := o.readServicesContract(ctx, version)
	return d, err
}

// readServicesContract is ReadServicesContract, also giving the ConfigMap's name. WMCO names the ConfigMap
// after its full build version ("11.0.1-3f9d0e2", what its nodes' version annotations hold) while its CSV
// holds the release ("11.0.1"): for a release, the newest ConfigMap of one of its builds is the one.
func (o *Ops) readServicesContract(ctx context.Context, version string) (contract.Data, string, error) {
	if version == "" {
		return contract.Data{}, "", errors.New("the operator's version is unknown: the services ConfigMap is named after it (windows-services-<version>)")
	}
	name := contract.ConfigMapName(version)
	cms := o.c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm, err = o.newestBuildContract(ctx, version)
	}
	switch {
	case apierrors.IsNotFound(err):
		return contract.Data{}, name, fmt.Errorf("ConfigMap %s/%s not found: WMCO %s publishes its node contract there when it starts; "+
			"check that the operator's pod runs (wmcon operator status) and that its version is %s", config.OperatorNamespace, name, version, version)
	case err != nil:
		return contract.Data{}, name, fmt.Errorf("read ConfigMap %s/%s: %w", config.OperatorNamespace, name, err)
	}
	d, err := contract.Parse(cm.Name, cm.Data)
	if err != nil {
		return contract.Data{}, cm.Name, fmt.Errorf("%w (in namespace %s: WMCO wrote it; a newer operator than this wmcon knows, or an edited ConfigMap)", err, config.OperatorNamespace)
	}
	return d, cm.Name, nil
}

// newestBuildContract is the newest services ConfigMap of a build of release (windows-services-<release>-<build>),
// a NotFound error when there is none.
func (o *Ops) newestBuildContract(ctx context.Context, release string) (*corev1.ConfigMap, error) {
	list, err := o.c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var best *corev1.ConfigMap
	for i := range list.Items {
		cm := &list.Items[i]
		v, ok := strings.CutPrefix(cm.Name, contract.NamePrefix)
		if !ok || !SameOperatorVersion(v, release) {
			continue
		}
		if best == nil || cm.CreationTimestamp.After(best.CreationTimestamp.Time) {
			best = cm
		}
	}
	if best == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), contract.ConfigMapName(release))
	}
	return best, nil
}

// OperatorServicesContract is the installed operator's contract: the services ConfigMap of its CSV's version.
// ErrNoOperator when WMCO is not installed.
func (o *Ops) OperatorServicesContract(ctx context.Context) (contract.Data, string, error) {
	d, src, err := o.NodeServicesContract(ctx, nil)
	return d, src.Version, err
}

// ContractSource says which services ConfigMap a contract was read from, and why that one.
type ContractSource struct {
	Version   string // the operator version the ConfigMap is named after
	ConfigMap string // namespace/name
	// FromNode: the version is the node's desired-version annotation (what WMCO's node daemon reads);
	// otherwise the installed operator's (its CSV's spec.version).
	FromNode bool
}

// String names the ConfigMap and why it is the one: "ConfigMap ns/windows-services-11.0.1 (the node's
// desired-version)".
func (s ContractSource) String() string {
	why := "the installed operator's version"
	if s.FromNode {
		why = "the node's " + config.DesiredVersionAnnotation + " annotation"
	}
	return "ConfigMap " + s.ConfigMap + " (" + why + ")"
}

// NodeServicesContract is the contract the installed WMCO holds a node to: the services ConfigMap named
// after the node's desired-version annotation when it has one (WMCO's node daemon reads that one), otherwise
// after the installed operator's version (node nil: the operator's). configure, upgrade and triage all take
// the services from here. ErrNoOperator when WMCO is not installed; a missing or malformed ConfigMap is an
// error naming it, with the source filled in.
func (o *Ops) NodeServicesContract(ctx context.Context, node *corev1.Node) (contract.Data, ContractSource, error) {
	st, err := NewOLM(o.c).State(ctx)
	if err != nil {
		return contract.Data{}, ContractSource{}, err
	}
	if !st.Installed() {
		return contract.Data{}, ContractSource{}, ErrNoOperator
	}
	src := ContractSource{Version: st.CSV.Spec.Version.String()}
	// A standalone version (wmcon-<payload>) names no operator's ConfigMap.
	if v := nodeDesiredVersion(node); v != "" && !strings.HasPrefix(v, config.StandaloneVersionPrefix) {
		src = ContractSource{Version: v, FromNode: true}
	}
	d, name, err := o.readServicesContract(ctx, src.Version)
	src.ConfigMap = config.OperatorNamespace + "/" + name
	return d, src, err
}

func nodeDesiredVersion(n *corev1.Node) string {
	if n == nil {
		return ""
	}
	return n.Annotations[config.DesiredVersionAnnotation]
}

// The operator's TLS secret: service-ca fills it for WMCO's metrics Service, and WMCO writes it to every node
// as windows_exporter's certificate (C:\k\tls\certs).
const (
	ExporterTLSSecret = "windows-machine-config-operator-tls"
	ExporterTLSCert   = "tls.crt"
	ExporterTLSKey    = "tls.key"
)

// ExporterTLS reads the operator's TLS secret: ok is false when there is none (no WMCO, or service-ca has not
// filled it yet). A secret without its certificate or key is an error naming it.
func (o *Ops) ExporterTLS(ctx context.Context) (cert, key []byte, ok bool, err error) {
	s, err := o.c.Kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, ExporterTLSSecret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil, false, nil
	case err != nil:
		return nil, nil, false, fmt.Errorf("read secret %s/%s: %w", config.OperatorNamespace, ExporterTLSSecret, err)
	}
	cert, key = s.Data[ExporterTLSCert], s.Data[ExporterTLSKey]
	if len(cert) == 0 || len(key) == 0 {
		return nil, nil, false, fmt.Errorf("secret %s/%s lacks %s or %s: service-ca fills it for the operator's Service; check that the service-ca operator runs",
			config.OperatorNamespace, ExporterTLSSecret, ExporterTLSCert, ExporterTLSKey)
	}
	return cert, key, true, nil
}

// NodeObject is the Node as the API server has it: what the contract's node variables are read from.
func (o *Ops) NodeObject(ctx context.Context, name string) (*corev1.Node, error) {
	n, err := o.c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", name, err)
	}
	return n, nil
}

// nodeSubnetPoll is how often WaitNodeSubnet reads the Node.
var nodeSubnetPoll = time.Second

// WaitNodeSubnet waits until the Node has its hybrid overlay subnet (the k8s.ovn.org/hybrid-overlay-node-subnet
// annotation, which OVN-Kubernetes' hybrid overlay gives a Windows node once it registered), and returns the
// Node then: kube-proxy's pre-script reads it. It ends with ctx; the error then says what was missing.
func (o *Ops) WaitNodeSubnet(ctx context.Context, name string) (*corev1.Node, error) {
	for {
		n, err := o.c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil && n.Annotations[config.HybridOverlaySubnet] != "" {
			return n, nil
		}
		if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			return nil, fmt.Errorf("get node %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("node %s has no hybrid overlay subnet (annotation %s): OVN-Kubernetes' hybrid overlay gives it one "+
				"when the cluster has a hybridClusterNetwork (network.operator.openshift.io/cluster): %w", name, config.HybridOverlaySubnet, ctx.Err())
		case <-time.After(nodeSubnetPoll):
		}
	}
}
