package nodeconfig

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	"sigs.k8s.io/yaml"
)

// The network configuration of a node, as WMCO's kube-proxy pre-script (network-conf.ps1) leaves it: the CNI
// configuration of the hybrid overlay network and kube-proxy's configuration with the source VIP. wmcon runs
// the script's steps itself over SSH (nodeconfig/hoststep); the files it writes are rendered here.
const (
	// HybridOverlayNetwork is the HNS network hybrid-overlay-node creates for pods; the CNI configuration and
	// kube-proxy use it.
	HybridOverlayNetwork = "OVNKubernetesHybridOverlayNetwork"
	// VIPEndpointName is the HNS endpoint attached to the host whose address is kube-proxy's source VIP.
	VIPEndpointName = "VIPEndpoint"
	// CNIConfPath is the CNI configuration containerd reads (its cni conf_dir is CNIConfigDir).
	CNIConfPath = `C:\k\cni\config\cni.conf`
	// NodeSubnetVar is the kube-proxy pre-script's node variable holding the node's hybrid overlay subnet.
	NodeSubnetVar = "NODE_SUBNET"
)

// CNINetwork is what the CNI configuration is rendered from: the hybrid overlay HNS network as
// hybrid-overlay-node created it, and the cluster's service network.
type CNINetwork struct {
	Subnet          string // the network's Subnets.AddressPrefix: the node's pod subnet
	ProviderAddress string // the network's ManagementIP: the host's own address on it
	ServiceNetwork  string // the cluster's service network CIDR: not sent through the overlay
}

// Validate names what is wrong with the network facts.
func (n CNINetwork) Validate() error {
	if _, _, err := net.ParseCIDR(n.Subnet); err != nil {
		return fmt.Errorf("HNS network %s: subnet %q is not a CIDR", HybridOverlayNetwork, n.Subnet)
	}
	if net.ParseIP(n.ProviderAddress) == nil {
		return fmt.Errorf("HNS network %s: management IP %q is not an address", HybridOverlayNetwork, n.ProviderAddress)
	}
	if _, _, err := net.ParseCIDR(n.ServiceNetwork); err != nil {
		return fmt.Errorf("service network %q is not a CIDR", n.ServiceNetwork)
	}
	return nil
}

// cniConf is the win-overlay plugin's configuration, fields in WMCO's order.
type cniConf struct {
	CNIVersion   string          `json:"cniVersion"`
	Name         string          `json:"name"`
	Type         string          `json:"type"`
	APIVersion   int             `json:"apiVersion"`
	Capabilities cniCapabilities `json:"capabilities"`
	IPAM         cniIPAM         `json:"ipam"`
	Policies     []cniPolicy     `json:"policies"`
}

type cniCapabilities struct {
	PortMappings bool `json:"portMappings"`
	DNS          bool `json:"dns"`
}

type cniIPAM struct {
	Type   string `json:"type"`
	Subnet string `json:"subnet"`
}

type cniPolicy struct {
	Name  string         `json:"name"`
	Value cniPolicyValue `json:"value"`
}

type cniPolicyValue struct {
	Type     string `json:"type"`
	Settings any    `json:"settings"`
}

type cniRoute struct {
	ExceptionList     []string `json:"exceptionList"`
	DestinationPrefix string   `json:"destinationPrefix"`
	NeedEncap         bool     `json:"needEncap"`
}

type cniProvider struct {
	ProviderAddress string `json:"providerAddress"`
}

// CNIConfig renders C:\k\cni\config\cni.conf as WMCO's network-conf.ps1 writes it: the win-overlay plugin on
// the hybrid overlay network, host-local addresses from the node's subnet, traffic to the service network
// neither NATed outbound nor sent outside the overlay's encapsulation, and the host's address as provider
// address. Field for field WMCO's (held against its output in network_test.go); the whitespace differs:
// wmcon indents consistently, and its JSON compacts to exactly WMCO's. LF line ends and no final newline, as
// the script writes it (Set-Content -NoNewline).
func CNIConfig(n CNINetwork) ([]byte, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	svc := strings.TrimSpace(n.ServiceNetwork)
	conf := cniConf{
		CNIVersion: "0.2.0", Name: HybridOverlayNetwork, Type: "win-overlay", APIVersion: 2,
		Capabilities: cniCapabilities{PortMappings: true, DNS: true},
		IPAM:         cniIPAM{Type: "host-local", Subnet: n.Subnet},
		Policies: []cniPolicy{
			// Pods reach services without NAT to the host's address.
			{Name: "EndpointPolicy", Value: cniPolicyValue{Type: "OutBoundNAT", Settings: cniRoute{ExceptionList: []string{svc}}}},
			// Service traffic goes through the overlay, where kube-proxy's load balancers are.
			{Name: "EndpointPolicy", Value: cniPolicyValue{Type: "SDNRoute", Settings: cniRoute{ExceptionList: []string{}, DestinationPrefix: svc, NeedEncap: true}}},
			{Name: "EndpointPolicy", Value: cniPolicyValue{Type: "ProviderAddress", Settings: cniProvider{ProviderAddress: n.ProviderAddress}}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "    ")
	if err != nil {
		return nil, fmt.Errorf("render cni.conf: %w", err)
	}
	return b, nil
}

// KubeProxyInputs are the values network-conf.ps1 puts into kube-proxy's configuration.
type KubeProxyInputs struct {
	NodeName    string // -hostnameOverride: the Node's name
	ClusterCIDR string // -clusterCIDR: the node's hybrid overlay subnet (its Node's annotation), not the cluster-wide network
	Kubeconfig  string // -kubeConfigPath
	Verbosity   string // -verbosity, "0" in WMCO 11
	SourceVIP   string // the VIP endpoint's address
}

// Validate names what is wrong with the inputs.
func (in KubeProxyInputs) Validate() error {
	switch {
	case in.NodeName == "":
		return fmt.Errorf("kube-proxy configuration: no node name")
	case in.Kubeconfig == "":
		return fmt.Errorf("kube-proxy configuration: no kubeconfig path")
	case net.ParseIP(in.SourceVIP) == nil:
		return fmt.Errorf("kube-proxy configuration: source VIP %q is not an address (the %s endpoint's)", in.SourceVIP, VIPEndpointName)
	}
	if _, _, err := net.ParseCIDR(in.ClusterCIDR); err != nil {
		return fmt.Errorf("kube-proxy configuration: the node's hybrid overlay subnet %q is not a CIDR", in.ClusterCIDR)
	}
	return nil
}

// KubeProxyConfig renders C:\k\kube-proxy.conf as network-conf.ps1 writes it: kernelspace mode on the hybrid
// overlay network with DSR and the source VIP, the node's own subnet as cluster CIDR, everything else zero.
// The same settings as WMCO's file (held against it in network_test.go); the key order and quoting differ
// (wmcon writes kube-proxy's own v1alpha1 type, keys sorted). LF line ends, no final newline.
func KubeProxyConfig(in KubeProxyInputs) ([]byte, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	verbosity := in.Verbosity
	if verbosity == "" {
		verbosity = "0"
	}
	var v logsapi.VerbosityLevel
	if _, err := fmt.Sscan(verbosity, &v); err != nil {
		return nil, fmt.Errorf("kube-proxy configuration: verbosity %q is not a number", in.Verbosity)
	}
	conf := kubeproxyv1alpha1.KubeProxyConfiguration{
		TypeMeta: metav1.TypeMeta{Kind: "KubeProxyConfiguration", APIVersion: "kubeproxy.config.k8s.io/v1alpha1"},
		// Overlay networks and direct server return are gated on Windows.
		FeatureGates:     map[string]bool{"WinDSR": true, "WinOverlay": true},
		ClientConnection: componentbaseconfigv1alpha1.ClientConnectionConfiguration{Kubeconfig: in.Kubeconfig},
		Logging:          logsapi.LoggingConfiguration{Verbosity: v},
		HostnameOverride: in.NodeName,
		Mode:             "kernelspace",
		Winkernel: kubeproxyv1alpha1.KubeProxyWinkernelConfiguration{NetworkName: HybridOverlayNetwork, SourceVip: in.SourceVIP,
			EnableDSR: true},
		ClusterCIDR: in.ClusterCIDR,
	}
	b, err := yaml.Marshal(conf)
	if err != nil {
		return nil, fmt.Errorf("render kube-proxy.conf: %w", err)
	}
	return []byte(strings.TrimRight(string(b), "\n")), nil
}
