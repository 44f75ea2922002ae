package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// Where OpenShift keeps what a Windows kubelet needs to join (as WMCO reads it).
const (
	MCONamespace              = "openshift-machine-config-operator"
	NodeBootstrapperSecret    = "node-bootstrapper-token"
	NodeBootstrapperIdentity  = "system:serviceaccount:" + MCONamespace + ":node-bootstrapper"
	KubeletCANamespace        = "openshift-kube-apiserver-operator"
	KubeletCAConfigMap        = "kube-apiserver-to-kubelet-client-ca"
	TrustedCAConfigMap        = "trusted-ca" // in the WMCO namespace, filled by the network operator
	BootstrapTokenGroup       = "system:bootstrappers:wmcon"
	BootstrapTokenBinding     = "wmcon-node-bootstrapper"
	BootstrapTokenTTL         = time.Hour
	bootstrapTokenSecretType  = "bootstrap.kubernetes.io/token"
	bootstrapTokenNamePrefix  = "bootstrap-token-"
	bootstrapTokenIDAlphabet  = "abcdefghijklmnopqrstuvwxyz0123456789"
	networkOperatorConfigName = "cluster"
)

// NetworkOperatorResource is network.operator.openshift.io, holding the hybrid overlay settings.
var NetworkOperatorResource = schema.GroupVersionResource{Group: "operator.openshift.io", Version: "v1", Resource: "networks"}

// NodeFacts are the cluster's facts for configuring a Windows node, and where the credentials came from.
type NodeFacts struct {
	Facts nodeconfig.Facts
	// BootstrapIdentity is the user the kubelet's client CSR is requested by: only CSRs from it are approved.
	BootstrapIdentity string
	// Notes say where facts came from when it matters to the user (a bootstrap token created, a default).
	Notes     []string
	OpenShift bool
}

// NodeFactsOptions tune ReadNodeFacts.
type NodeFactsOptions struct {
	// DryRun never creates a bootstrap token: the plan shows a placeholder instead.
	DryRun bool
	// Version goes into the node's version annotation.
	Version string
	// OperatorContract: when WMCO is installed, its services ConfigMap (windows-services-<its version>) is
	// the contract the host follows (Facts.Contract); missing or malformed, ReadNodeFacts fails naming it.
	// Off: wmcon's own contract for the cluster's facts.
	OperatorContract bool
}

// ReadNodeFacts reads everything the configuration engine needs. On OpenShift the kubelet bootstraps
// with the node-bootstrapper token as WMCO does; on plain Kubernetes wmcon creates a bootstrap token in
// kube-system that expires after BootstrapTokenTTL (and says so in Notes).
func (o *Ops) ReadNodeFacts(ctx context.Context, opts NodeFactsOptions) (NodeFacts, error) {
	nf := NodeFacts{Facts: nodeconfig.Facts{Version: opts.Version}}
	inf, err := o.infrastructure(ctx)
	if err != nil {
		return nf, err
	}
	nf.OpenShift = inf != nil
	if inf != nil {
		nf.Facts.APIServerURL = inf.Status.APIServerInternalURL
		if inf.Status.PlatformStatus != nil {
			nf.Facts.Platform = string(inf.Status.PlatformStatus.Type)
		}
	}
	if nf.Facts.APIServerURL == "" && o.c.REST != nil {
		nf.Facts.APIServerURL = o.c.REST.Host
		nf.Notes = append(nf.Notes, "the API server URL is the one in your kubeconfig ("+o.c.REST.Host+"): the host must reach it")
	}
	if err := o.readNetwork(ctx, &nf); err != nil {
		return nf, err
	}
	if err := o.readProxy(ctx, &nf); err != nil {
		return nf, err
	}
	if err := o.readRegistries(ctx, &nf); err != nil {
		return nf, err
	}
	if err := o.readCredentials(ctx, &nf, opts.DryRun); err != nil {
		return nf, err
	}
	if err := o.readExporterTLS(ctx, &nf, opts.DryRun); err != nil {
		return nf, fmt.Errorf("windows_exporter's certificate: %w", err)
	}
	operator := false
	if opts.OperatorContract {
		if operator, err = o.readOperatorContract(ctx, &nf); err != nil {
			return nf, err
		}
	} else if nf.Facts.NeedsWICDKubeconfig() {
		st, err := NewOLM(o.c).State(ctx)
		if err != nil {
			return nf, err
		}
		operator = st.Installed()
	}
	if err := o.readWICDCredentials(ctx, &nf, operator, opts.DryRun); err != nil {
		return nf, fmt.Errorf("cloud-node-manager's credentials: %w", err)
	}
	return nf, nil
}

// readOperatorContract makes the installed operator's services ConfigMap the host's contract; installed
// says whether there is an operator.
func (o *Ops) readOperatorContract(ctx context.Context, nf *NodeFacts) (installed bool, err error) {
	d, src, err := o.NodeServicesContract(ctx, nil)
	switch {
	case errors.Is(err, ErrNoOperator):
		return false, nil
	case err != nil:
		return true, err
	}
	nf.Facts.Contract, nf.Facts.ContractSource = &d, "ConfigMap "+src.ConfigMap
	// The node carries the operator's build version, as WMCO annotates its nodes: the version its ConfigMap
	// is named after (windows-services-11.0.1-3f9d0e2), of which the CSV holds only the release (11.0.1).
	built := strings.TrimPrefix(path.Base(src.ConfigMap), contract.NamePrefix)
	if nf.Facts.Version == "" || SameOperatorVersion(built, nf.Facts.Version) {
		nf.Facts.Version = built
	}
	nf.Notes = append(nf.Notes, "the services follow WMCO "+src.Version+"'s contract, ConfigMap "+src.ConfigMap)
	return true, nil
}

func (o *Ops) infrastructure(ctx context.Context) (*configv1.Infrastructure, error) {
	if o.c.Config == nil {
		return nil, nil
	}
	inf, err := o.c.Config.ConfigV1().Infrastructures().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || isNoAPI(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read infrastructures.config.openshift.io/cluster: %w", err)
	}
	return inf, nil
}

func (o *Ops) readNetwork(ctx context.Context, nf *NodeFacts) error {
	if nf.OpenShift {
		n, err := o.c.Config.ConfigV1().Networks().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) && !isNoAPI(err) {
			return fmt.Errorf("read networks.config.openshift.io/cluster: %w", err)
		}
		if err == nil {
			nets := n.Status.ServiceNetwork
			if len(nets) == 0 {
				nets = n.Spec.ServiceNetwork
			}
			if len(nets) > 0 {
				nf.Facts.ServiceNetwork = nets[0]
			}
		}
		o.readHybridOverlay(ctx, nf)
	}
	if nf.Facts.ServiceNetwork == "" {
		// Plain Kubernetes publishes its service range as the ServiceCIDR "kubernetes".
		sc, err := o.c.Kube.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err == nil && len(sc.Spec.CIDRs) > 0 {
			nf.Facts.ServiceNetwork = sc.Spec.CIDRs[0]
		}
	}
	if nf.Facts.ServiceNetwork == "" {
		return fmt.Errorf("the cluster's service network is unknown (networks.config.openshift.io/cluster or the ServiceCIDR \"kubernetes\"): wmcon needs it for the cluster DNS address")
	}
	return nil
}

// readHybridOverlay reads hybridClusterNetwork and the VXLAN port; a cluster without them gets none.
func (o *Ops) readHybridOverlay(ctx context.Context, nf *NodeFacts) {
	if o.c.Dynamic == nil {
		return
	}
	u, err := o.c.Dynamic.Resource(NetworkOperatorResource).Get(ctx, networkOperatorConfigName, metav1.GetOptions{})
	if err != nil {
		nf.Notes = append(nf.Notes, "no hybrid overlay settings (network.operator.openshift.io/cluster unreadable): kube-proxy gets no cluster CIDR")
		return
	}
	path := []string{"spec", "defaultNetwork", "ovnKubernetesConfig", "hybridOverlayConfig"}
	nets, _, _ := unstructured.NestedSlice(u.Object, append(path, "hybridClusterNetwork")...)
	for _, n := range nets {
		if m, ok := n.(map[string]any); ok {
			if cidr, ok := m["cidr"].(string); ok && cidr != "" {
				nf.Facts.HybridClusterNetwork = cidr
				break
			}
		}
	}
	if port, ok, _ := unstructured.NestedInt64(u.Object, append(path, "hybridOverlayVXLANPort")...); ok && port > 0 {
		nf.Facts.VXLANPort = fmt.Sprint(port)
	}
}

func (o *Ops) readProxy(ctx context.Context, nf *NodeFacts) error {
	if !nf.OpenShift {
		return nil
	}
	p, err := o.c.Config.ConfigV1().Proxies().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || isNoAPI(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read proxies.config.openshift.io/cluster: %w", err)
	}
	if err := (model.Proxy{HTTP: p.Status.HTTPProxy, HTTPS: p.Status.HTTPSProxy, NoProxy: p.Status.NoProxy}).Check(); err != nil {
		return err
	}
	nf.Facts.Proxy = nodeconfig.Proxy{HTTP: p.Status.HTTPProxy, HTTPS: p.Status.HTTPSProxy, NoProxy: p.Status.NoProxy}
	if cm, err := o.c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, TrustedCAConfigMap, metav1.GetOptions{}); err == nil {
		nf.Facts.TrustedCABundle = []byte(cm.Data["ca-bundle.crt"])
	}
	return nil
}

// readRegistries renders the node's registries directory from the cluster's mirror sets with the function
// wmcon mirrors render, status and apply use (MirrorTree): a configuration writes it, as WMCO's does, so
// configuring or upgrading a node keeps its mirror configuration instead of emptying it.
func (o *Ops) readRegistries(ctx context.Context, nf *NodeFacts) error {
	if o.c.Config == nil {
		return nil
	}
	tree, err := MirrorTree(ctx, o.c)
	if isNoAPI(err) { // plain Kubernetes: no mirror sets, no mirror configuration
		if nf.OpenShift {
			nf.Notes = append(nf.Notes, "no mirror set API (imagedigestmirrorsets.config.openshift.io): the registries directory stays empty")
		}
		return nil
	}
	if err != nil {
		return err
	}
	nf.Facts.Registries = tree.Map()
	for _, w := range tree.Warnings {
		nf.Notes = append(nf.Notes, "mirror sets: "+w)
	}
	return nil
}

func (o *Ops) readCredentials(ctx context.Context, nf *NodeFacts, dryRun bool) error {
	s, err := o.c.Kube.CoreV1().Secrets(MCONamespace).Get(ctx, NodeBootstrapperSecret, metav1.GetOptions{})
	switch {
	case err == nil:
		nf.Facts.BootstrapToken = string(s.Data[corev1.ServiceAccountTokenKey])
		nf.Facts.BootstrapCA = s.Data[corev1.ServiceAccountRootCAKey]
		nf.BootstrapIdentity = NodeBootstrapperIdentity
		if nf.Facts.BootstrapToken == "" || len(nf.Facts.BootstrapCA) == 0 {
			return fmt.Errorf("secret %s/%s lacks its token or ca.crt: the machine-config operator fills it; check it is healthy", MCONamespace, NodeBootstrapperSecret)
		}
	case apierrors.IsNotFound(err) && !nf.OpenShift:
		if err := o.bootstrapToken(ctx, nf, dryRun); err != nil {
			return err
		}
	case apierrors.IsNotFound(err):
		return fmt.Errorf("secret %s/%s not found: the kubelet has no bootstrap credentials (is the machine-config operator running?)", MCONamespace, NodeBootstrapperSecret)
	default:
		return fmt.Errorf("read secret %s/%s: %w", MCONamespace, NodeBootstrapperSecret, err)
	}
	nf.Facts.KubeletCA = o.kubeletCA(ctx)
	if len(nf.Facts.KubeletCA) == 0 {
		nf.Facts.KubeletCA = nf.Facts.BootstrapCA
		nf.Notes = append(nf.Notes, "no kubelet client CA published: the kubelet trusts the API server's CA for client certificates")
	}
	return nil
}

// kubeletCA is the CA the kubelet trusts for the API server's client certificate: OpenShift's
// kube-apiserver-to-kubelet-client-ca, else the cluster's client CA (extension-apiserver-authentication).
func (o *Ops) kubeletCA(ctx context.Context) []byte {
	if cm, err := o.c.Kube.CoreV1().ConfigMaps(KubeletCANamespace).Get(ctx, KubeletCAConfigMap, metav1.GetOptions{}); err == nil && cm.Data["ca-bundle.crt"] != "" {
		return []byte(cm.Data["ca-bundle.crt"])
	}
	if cm, err := o.c.Kube.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{}); err == nil {
		return []byte(cm.Data["client-ca-file"])
	}
	return nil
}

// bootstrapToken creates a short-lived bootstrap token (and, once, the binding that lets its group post
// node CSRs) for plain Kubernetes clusters.
func (o *Ops) bootstrapToken(ctx context.Context, nf *NodeFacts, dryRun bool) error {
	nf.Facts.BootstrapCA = o.apiServerCA(ctx)
	if len(nf.Facts.BootstrapCA) == 0 {
		return fmt.Errorf("no CA bundle for the API server (kube-system/kube-root-ca.crt, or the kubeconfig's certificate-authority-data)")
	}
	if dryRun {
		nf.Facts.BootstrapToken = "abcdef.0123456789abcdef"
		nf.BootstrapIdentity = "system:bootstrap:abcdef"
		nf.Notes = append(nf.Notes, fmt.Sprintf("a bootstrap token valid %s would be created in kube-system (the plan shows a placeholder)", BootstrapTokenTTL))
		return nil
	}
	id, secret := randomString(6), randomString(16)
	expires := time.Now().Add(BootstrapTokenTTL).UTC().Format(time.RFC3339)
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapTokenNamePrefix + id, Namespace: "kube-system",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "wmcon"}},
		Type: bootstrapTokenSecretType,
		StringData: map[string]string{
			"token-id": id, "token-secret": secret, "expiration": expires, "description": "wmcon configure: a Windows kubelet's TLS bootstrap",
			"usage-bootstrap-authentication": "true", "auth-extra-groups": BootstrapTokenGroup,
		},
	}
	if _, err := o.c.Kube.CoreV1().Secrets("kube-system").Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create a bootstrap token in kube-system: %w", err)
	}
	if err := o.ensureBootstrapBinding(ctx); err != nil {
		return err
	}
	nf.Facts.BootstrapToken = id + "." + secret
	nf.BootstrapIdentity = "system:bootstrap:" + id
	nf.Notes = append(nf.Notes, fmt.Sprintf("created bootstrap token %s in kube-system, valid until %s (the cluster deletes it then)", s.Name, expires))
	return nil
}

func (o *Ops) ensureBootstrapBinding(ctx context.Context) error {
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: BootstrapTokenBinding, Labels: map[string]string{"app.kubernetes.io/managed-by": "wmcon"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: BootstrapTokenGroup}},
	}
	_, err := o.c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("let bootstrap tokens post node CSRs (clusterrolebinding %s): %w", BootstrapTokenBinding, err)
	}
	return nil
}

func (o *Ops) apiServerCA(ctx context.Context) []byte {
	if cm, err := o.c.Kube.CoreV1().ConfigMaps("kube-system").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err == nil && cm.Data["ca.crt"] != "" {
		return []byte(cm.Data["ca.crt"])
	}
	if o.c.REST != nil {
		return o.c.REST.TLSClientConfig.CAData
	}
	return nil
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(bootstrapTokenIDAlphabet[int(c)%len(bootstrapTokenIDAlphabet)])
	}
	return s.String()
}
