package windows

import (
	"context"
	"fmt"
	"strings"
	"time"

	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	"sigs.k8s.io/yaml"
)

// runKubeProxy is the program behind kube-proxy.exe: what a real kube-proxy in kernelspace mode checks before
// it proxies anything, with its own messages. Its settings come from --config (a KubeProxyConfiguration, as
// WMCO's network-conf.ps1 writes it) or, without one, from its flags. It waits for its HNS network, as the real
// one does (an error line every second); on an overlay network it needs the WinOverlay feature gate and a
// source VIP, and with DSR the WinDSR gate, or it exits: "source-vip flag not set" is what a kube-proxy
// configured without WMCO's VIP endpoint says.
func runKubeProxy(ctx context.Context, p *Process) error {
	s, err := kubeProxySettings(p)
	if err != nil {
		p.kubeProxyExit(err.Error())
		return nil
	}
	if s.network == "" {
		p.kubeProxyExit("Environment variable KUBE_NETWORK and network-flag not initialized")
		return nil
	}
	var network HNSNetwork
	for {
		n, ok := p.host.HNSNetworkInfo(s.network)
		if ok {
			network = n
			break
		}
		p.Log('E', "proxier.go:630", fmt.Sprintf(`"Unable to find HNS Network specified, please check network name and CNI deployment" err="the network %s was not found" hnsNetworkName=%q`, s.network, s.network))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	if why := s.refuse(network); why != "" {
		p.kubeProxyExit(why)
		return nil
	}
	p.Log('I', "server_windows.go:96", fmt.Sprintf(`"Using Kernelspace Proxier" networkName=%q sourceVip=%q enableDSR=%t`, s.network, s.sourceVIP, s.dsr))
	<-ctx.Done()
	return nil
}

// kubeProxyExit writes kube-proxy's last words: its command ends on the error it ran into.
func (p *Process) kubeProxyExit(why string) {
	p.Log('E', "server.go:563", fmt.Sprintf(`"Error running ProxyServer" err=%q`, why))
}

// errNoSourceVIP is kube-proxy's reason for exiting on an overlay network without a source VIP.
const errNoSourceVIP = "source-vip flag not set"

// proxySettings are what kube-proxy's proxier checks at start.
type proxySettings struct {
	network, sourceVIP string
	dsr                bool
	gates              map[string]bool
}

// refuse says why the proxier cannot start on the network ("" when it can), in kube-proxy's words.
func (s proxySettings) refuse(n HNSNetwork) string {
	if s.dsr && !s.gates["WinDSR"] {
		return "WinDSR feature gate not enabled"
	}
	if strings.EqualFold(n.Type, "Overlay") {
		if !s.gates["WinOverlay"] {
			return "WinOverlay feature gate not enabled"
		}
		if s.sourceVIP == "" {
			return errNoSourceVIP
		}
	}
	return ""
}

// kubeProxySettings reads the settings from --config when given, otherwise from the flags.
func kubeProxySettings(p *Process) (proxySettings, error) {
	if path, ok := p.Flag("config"); ok && path != "" {
		data, err := p.ReadFile(path)
		if err != nil {
			return proxySettings{}, fmt.Errorf("failed to load kube-proxy config file %s: open %s: The system cannot find the file specified.", path, path)
		}
		var c kubeproxyv1alpha1.KubeProxyConfiguration
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			return proxySettings{}, fmt.Errorf("failed to load kube-proxy config file %s: %v", path, err)
		}
		if c.Kind != "KubeProxyConfiguration" || c.APIVersion != "kubeproxy.config.k8s.io/v1alpha1" {
			return proxySettings{}, fmt.Errorf("failed to load kube-proxy config file %s: no kind %q is registered for version %q", path, c.Kind, c.APIVersion)
		}
		if kc := c.ClientConnection.Kubeconfig; kc != "" && !p.Exists(kc) {
			return proxySettings{}, fmt.Errorf("stat %s: The system cannot find the file specified.", kc)
		}
		return proxySettings{network: c.Winkernel.NetworkName, sourceVIP: c.Winkernel.SourceVip, dsr: c.Winkernel.EnableDSR, gates: c.FeatureGates}, nil
	}
	s := proxySettings{gates: map[string]bool{}}
	s.network, _ = p.Flag("network-name")
	s.sourceVIP, _ = p.Flag("source-vip")
	if v, ok := p.Flag("enable-dsr"); ok {
		s.dsr = v == "" || strings.EqualFold(v, "true")
	}
	gates, _ := p.Flag("feature-gates")
	for _, kv := range strings.Split(gates, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
			s.gates[k] = strings.EqualFold(v, "true")
		}
	}
	return s, nil
}
