// Package nodeconfig is wmcon's node-configuration engine: a pure function from the cluster's facts and a
// payload to the state a configured Windows host must have (directories, files with their SHA-256,
// services with their command lines and dependencies, machine environment), and a diff of that state
// against what the host reports, giving a Plan. The plan is data: printed by --dry-run, run by the
// configure action, resumed by simply diffing again. Nothing here talks to a cluster or a host.
package nodeconfig

import (
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// Facts is what the engine needs from the cluster, read by the caller (cluster objects, secrets).
type Facts struct {
	Platform       string // infrastructure platform type: AWS, Azure, GCP, VSphere, Nutanix, BareMetal, None
	APIServerURL   string // the API server's internal URL, as the host reaches it
	ServiceNetwork string // first service network CIDR; the cluster DNS is its 10th address
	ClusterDomain  string // "" = cluster.local

	// BootstrapToken is the bearer token of the bootstrap identity the kubelet's client CSR is posted with
	// (OpenShift: the node-bootstrapper service account token; plain Kubernetes: a bootstrap token). Secret.
	BootstrapToken string `json:"-"`
	BootstrapCA    []byte // PEM bundle the kubelet trusts for the API server
	KubeletCA      []byte // PEM bundle the kubelet trusts for client certificates (kubelet-ca.crt)

	HybridClusterNetwork string // hybrid overlay cluster network CIDR (kube-proxy's cluster CIDR)
	VXLANPort            string // custom hybrid overlay VXLAN port, "" = default

	Proxy           Proxy
	TrustedCABundle []byte // cluster proxy's trusted CA bundle → C:\k\ca-bundle.crt ("" = none)

	// Registries are the files of C:\k\containerd\registries, keyed by their path relative to it
	// (host_port_\hosts.toml): the cluster's mirror sets rendered as wmcon mirrors render does
	// (cluster.MirrorTree). Every configuration writes them and removes any other entry there.
	Registries map[string][]byte

	// KubeletArgs are the kubelet arguments the cluster gives its workers that WMCO passes on to Windows
	// kubelets (cloud-provider, cloud-config); nil = StandaloneKubeletArgs for the platform.
	KubeletArgs map[string]string

	Version string // what wmcon writes into the version annotation (WMCO's version when configuring for it)

	// ExporterTLSCert and ExporterTLSKey (PEM) are windows_exporter's certificate: the operator's secret
	// windows-machine-config-operator-tls (cluster.ExporterTLS) when WMCO's cluster has it, else wmcon's own
	// (issued by service-ca, or made by wmcon where there is none: cluster.ReadNodeFacts), written to
	// C:\k\tls\certs as WMCO writes it.
	ExporterTLSCert []byte `json:"-"`
	ExporterTLSKey  []byte `json:"-"`

	// WICDToken and WICDCA are the service-account credentials written to C:\k\wicd-kubeconfig, the identity
	// cloud-node-manager runs with in WMCO's contract (a node's own credentials may not remove its
	// uninitialized taint): WMCO's windows-instance-config-daemon account when WMCO is installed, otherwise
	// wmcon's equivalent (cluster.ReadNodeFacts). Needed only when a service names that file
	// (NeedsWICDKubeconfig). Secret.
	WICDToken string `json:"-"`
	WICDCA    []byte `json:"-"`

	// Contract is WMCO's services contract read from the cluster (its windows-services-<version> ConfigMap,
	// cluster.ReadServicesContract) when WMCO is installed; nil = wmcon generates it (Contract), standalone.
	Contract *contract.Data `json:"-"`
	// ContractSource names where Contract was read ("ConfigMap <namespace>/windows-services-<version>"), for
	// the errors that cite it.
	ContractSource string `json:"-"`
}

// NeedsWICDKubeconfig says whether a service of the host's contract runs with C:\k\wicd-kubeconfig
// (cloud-node-manager, on Azure): the configuration then writes it.
func (f Facts) NeedsWICDKubeconfig() bool {
	data, err := f.ServicesContract()
	if err != nil {
		return false
	}
	for _, s := range data.Services {
		if strings.Contains(s.Command, WICDKubeconfigPath) {
			return true
		}
	}
	return false
}

// needsExporterTLS says whether a service of the contract serves TLS with the web configuration in C:\k\tls
// (windows_exporter, as WMCO runs it).
func (f Facts) needsExporterTLS() bool {
	data, err := f.ServicesContract()
	if err != nil {
		return false
	}
	for _, s := range data.Services {
		if strings.Contains(s.Command, ExporterWebConfigPath) {
			return true
		}
	}
	return false
}

func (f Facts) hasExporterTLS() bool { return len(f.ExporterTLSCert) > 0 && len(f.ExporterTLSKey) > 0 }

// Proxy is the cluster-wide proxy, written as machine environment variables.
type Proxy struct {
	HTTP, HTTPS, NoProxy string
}

// Host is the Windows host being configured.
type Host struct {
	NodeName string // the name the kubelet registers (--hostname-override), lower case
	IP       string // IPv4 the kubelet advertises (--node-ip)
	BYOH     bool
	// PreScriptOutputs are the outputs of the services' pre-scripts that fill a variable, run on the host
	// (hoststep.Values), by service name then variable: the kubelet's NODE_IP and, where the platform names
	// nodes, HOSTNAME_OVERRIDE. A command line whose variable has no output here is an error.
	PreScriptOutputs map[string]map[string]string `json:",omitempty"`
}

// ClusterDNS is the 10th address of the service network (172.30.0.0/16 → 172.30.0.10), the address of
// the cluster's DNS service.
func ClusterDNS(serviceCIDR string) (string, error) {
	_, n, err := net.ParseCIDR(strings.TrimSpace(serviceCIDR))
	if err != nil {
		return "", fmt.Errorf("service network %q: %w", serviceCIDR, err)
	}
	ones, bits := n.Mask.Size()
	if bits-ones < 4 {
		return "", fmt.Errorf("service network %s is too small to hold the cluster DNS address (its 10th)", serviceCIDR)
	}
	base := new(big.Int).SetBytes(n.IP)
	ip := base.Add(base, big.NewInt(10)).Bytes()
	out := make(net.IP, len(n.IP))
	copy(out[len(out)-len(ip):], ip)
	return out.String(), nil
}

// Validate checks the facts the engine cannot do without, naming each missing one.
func (f Facts) Validate() error {
	var errs []error
	if f.APIServerURL == "" {
		errs = append(errs, errors.New("the API server's internal URL is unknown (infrastructure/cluster .status.apiServerInternalURL)"))
	} else if u, err := url.Parse(f.APIServerURL); err != nil || u.Scheme != "https" || u.Host == "" {
		errs = append(errs, fmt.Errorf("the API server URL %q is not an https URL", f.APIServerURL))
	}
	if _, err := ClusterDNS(f.ServiceNetwork); err != nil {
		errs = append(errs, fmt.Errorf("cluster DNS: %w (network.config.openshift.io/cluster .spec.serviceNetwork)", err))
	}
	if f.BootstrapToken == "" {
		errs = append(errs, errors.New("no bootstrap token for the kubelet's first certificate request"))
	}
	if len(f.BootstrapCA) == 0 {
		errs = append(errs, errors.New("no CA bundle for the kubelet to trust the API server"))
	}
	if len(f.KubeletCA) == 0 {
		errs = append(errs, errors.New("no kubelet client CA bundle"))
	}
	if f.VXLANPort != "" {
		if p, err := strconv.Atoi(f.VXLANPort); err != nil || p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("hybrid overlay VXLAN port %q is not a port number", f.VXLANPort))
		}
	}
	if f.HybridClusterNetwork != "" {
		if _, _, err := net.ParseCIDR(f.HybridClusterNetwork); err != nil {
			errs = append(errs, fmt.Errorf("hybrid cluster network %q: %w", f.HybridClusterNetwork, err))
		}
	}
	return errors.Join(errs...)
}

// Validate checks the host's name and address.
func (h Host) Validate() error {
	if h.NodeName == "" || h.NodeName != strings.ToLower(h.NodeName) || strings.ContainsAny(h.NodeName, " \"'`/\\") {
		return fmt.Errorf("node name %q must be a non-empty lower-case DNS name", h.NodeName)
	}
	if ip := net.ParseIP(h.IP); ip == nil || ip.To4() == nil {
		return fmt.Errorf("host address %q is not an IPv4 address (WMCO configures hosts by IPv4)", h.IP)
	}
	return nil
}
