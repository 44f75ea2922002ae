package hoststep

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/remote"
)

// NetworkArgs are network-conf.ps1's arguments, as kube-proxy's pre-script passes them.
type NetworkArgs struct {
	NodeName            string // -hostnameOverride: the Node's name
	ClusterCIDR         string // -clusterCIDR: the node's hybrid overlay subnet (its Node's annotation)
	Kubeconfig          string // -kubeConfigPath
	KubeProxyConfigPath string // -kubeProxyConfigPath (default nodeconfig.KubeProxyConfPath)
	Verbosity           string // -verbosity
}

// NetworkResult says what the network configuration found and did.
type NetworkResult struct {
	Network          remote.HNSNetworkInfo
	Endpoint         remote.HNSEndpointInfo
	SourceVIP        string
	EndpointCreated  bool // the VIP endpoint was created (and attached) now
	CNIChanged       bool // cni.conf was written
	KubeProxyChanged bool // kube-proxy.conf was written
}

// maxConfigFile bounds what is read back of cni.conf and kube-proxy.conf before they are compared.
const maxConfigFile = 1 << 20

// ConfigureNetwork leaves the host as WMCO's network-conf.ps1 does, step by step over SSH: it waits for the
// HNS network hybrid-overlay-node creates (OVNKubernetesHybridOverlayNetwork), writes the CNI configuration
// for it, creates the VIP endpoint on it and attaches it to the host unless it exists, reads the endpoint's
// address on the host (kube-proxy's source VIP) and writes kube-proxy's configuration with it. A file is
// rewritten only when its content differs (carriage returns ignored), as the script does. Where the script
// would stop at an endpoint that exists but was never attached (a run cut between the two), this attaches it.
func ConfigureNetwork(ctx context.Context, h Host, args NetworkArgs, opts Options) (NetworkResult, error) {
	opts = opts.withDefaults()
	if args.KubeProxyConfigPath == "" {
		args.KubeProxyConfigPath = nodeconfig.KubeProxyConfPath
	}
	var res NetworkResult
	network, err := waitNetwork(ctx, h, opts)
	if err != nil {
		return res, err
	}
	res.Network = network
	cni, err := nodeconfig.CNIConfig(nodeconfig.CNINetwork{Subnet: network.Subnet, ProviderAddress: network.ManagementIP, ServiceNetwork: opts.ServiceNetwork})
	if err != nil {
		return res, err
	}
	if res.CNIChanged, err = replaceIfDifferent(ctx, h, nodeconfig.CNIConfPath, cni); err != nil {
		return res, err
	}
	if res.Endpoint, res.EndpointCreated, err = ensureVIPEndpoint(ctx, h, network, opts); err != nil {
		return res, err
	}
	if res.SourceVIP, err = sourceVIP(ctx, h, res.Endpoint, !res.EndpointCreated, opts); err != nil {
		return res, err
	}
	conf, err := nodeconfig.KubeProxyConfig(nodeconfig.KubeProxyInputs{NodeName: args.NodeName, ClusterCIDR: args.ClusterCIDR,
		Kubeconfig: args.Kubeconfig, Verbosity: args.Verbosity, SourceVIP: res.SourceVIP})
	if err != nil {
		return res, err
	}
	res.KubeProxyChanged, err = replaceIfDifferent(ctx, h, args.KubeProxyConfigPath, conf)
	return res, err
}

// waitNetwork waits for the hybrid overlay HNS network as the script does: a number of tries a delay apart.
func waitNetwork(ctx context.Context, h Host, opts Options) (remote.HNSNetworkInfo, error) {
	for try := 1; ; try++ {
		n, ok, err := h.HNSNetwork(ctx, opts.HNSModule, nodeconfig.HybridOverlayNetwork)
		if err != nil {
			return n, fmt.Errorf("read HNS network %s: %w", nodeconfig.HybridOverlayNetwork, err)
		}
		if ok {
			return n, nil
		}
		if try >= opts.NetworkTries {
			return n, fmt.Errorf("cannot find HNS network with name %s after %d tries %s apart: hybrid-overlay-node creates it once it runs "+
				"and the node has its hybrid overlay subnet (read its log: C:\\var\\log\\hybrid-overlay\\hybrid-overlay.log)",
				nodeconfig.HybridOverlayNetwork, opts.NetworkTries, opts.NetworkDelay)
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(opts.NetworkDelay):
		}
	}
}

// ensureVIPEndpoint finds the VIP endpoint, or creates it on the network and attaches it to the host.
func ensureVIPEndpoint(ctx context.Context, h Host, network remote.HNSNetworkInfo, opts Options) (remote.HNSEndpointInfo, bool, error) {
	ep, ok, err := h.HNSEndpoint(ctx, opts.HNSModule, nodeconfig.VIPEndpointName)
	if err != nil || ok {
		return ep, false, err
	}
	if ep, err = h.NewHostEndpoint(ctx, opts.HNSModule, network.ID, nodeconfig.VIPEndpointName); err != nil {
		return ep, false, err
	}
	return ep, true, h.AttachHostEndpoint(ctx, opts.HNSModule, ep.ID)
}

// sourceVIP is the address of the host's interface whose MAC is the endpoint's. An endpoint found existing
// whose address is on no interface was never attached: it is attached once, then looked up again.
func sourceVIP(ctx context.Context, h Host, ep remote.HNSEndpointInfo, mayAttach bool, opts Options) (string, error) {
	ip, ok, err := h.InterfaceAddress(ctx, ep.MAC)
	if err == nil && !ok && mayAttach {
		if err = h.AttachHostEndpoint(ctx, opts.HNSModule, ep.ID); err == nil {
			ip, ok, err = h.InterfaceAddress(ctx, ep.MAC)
		}
	}
	if err != nil {
		return "", fmt.Errorf("read the %s endpoint's address on the host: %w", nodeconfig.VIPEndpointName, err)
	}
	if !ok {
		return "", fmt.Errorf("the %s endpoint (MAC %s) has no address on the host: it is not attached to the host's network compartment",
			nodeconfig.VIPEndpointName, ep.MAC)
	}
	return ip, nil
}

// replaceIfDifferent writes content to path unless the file already holds it, carriage returns aside.
func replaceIfDifferent(ctx context.Context, h Host, path string, content []byte) (bool, error) {
	have, ok, err := h.ReadFile(ctx, path, maxConfigFile)
	if err != nil {
		return false, err
	}
	if ok && bytes.Equal(bytes.ReplaceAll(have, []byte("\r"), nil), content) {
		return false, nil
	}
	if _, err := h.Upload(ctx, []remote.Upload{{Remote: path, Data: content}}, remote.UploadOptions{Force: true}); err != nil {
		return false, err
	}
	return true, nil
}
