package nodeconfig

import (
	"strings"

	"github.com/wmcon/wmcon/config"
)

// ManagedTag starts the description of every service wmcon (like WMCO) installs, so they can be found.
const ManagedTag = "OpenShift managed"

// cloudPlatforms run an external cloud provider: their kubelets start with --cloud-provider=external.
var cloudPlatforms = map[string]bool{"aws": true, "azure": true, "gcp": true, "vsphere": true, "nutanix": true}

// Services are the node services for the facts' platform, in start order: containerd → kubelet →
// windows_exporter, csi-proxy, hybrid-overlay-node → kube-proxy (and cloud-node-manager on Azure).
// WMCO's own daemon (WICD) is not installed: it needs the operator's service account and does, for an
// operator-managed node, what wmcon does here.
func Services(f Facts, h Host) []Service {
	var out []Service
	for _, ws := range config.Services {
		if ws.Name == "windows-instance-config-daemon" {
			continue
		}
		if ws.Platform != "" && !strings.EqualFold(ws.Platform, f.Platform) {
			continue
		}
		out = append(out, Service{
			Name: ws.Name, BinPath: binPath(ws.Name, f, h), DependsOn: append([]string(nil), ws.DependsOn...),
			StartOrder: ws.StartOrder, Description: ManagedTag + " " + ws.Name, AfterJoin: afterJoin[ws.Name],
		})
	}
	return out
}

// afterJoin are the services that need C:\k\kubeconfig, which exists only after the kubelet's TLS bootstrap.
var afterJoin = map[string]bool{"hybrid-overlay-node": true, "kube-proxy": true, "cloud-node-manager": true}

func binPath(name string, f Facts, h Host) string {
	join := func(parts ...string) string { return strings.Join(parts, " ") }
	switch name {
	case "containerd":
		return join(`C:\k\containerd\containerd.exe`, "--config", ContainerdConfPath,
			"--log-file", `C:\var\log\containerd\containerd.log`, "--run-service", "--log-level", "info")
	case "kubelet":
		return kubeletCommand(f, h)
	case "windows_exporter":
		return join(`C:\k\windows_exporter.exe`, "--collectors.enabled", "cpu,logical_disk,net,os,service,system,container,memory,cpu_info")
	case "csi-proxy":
		return join(`C:\k\csi-proxy.exe`, `-log_file=C:\var\log\csi-proxy\csi-proxy.log`, "-logtostderr=false", "-windows-service", "--v=2")
	case "hybrid-overlay-node":
		cmd := join(`C:\k\hybrid-overlay-node.exe`, "--node", h.NodeName, "--k8s-apiserver", f.APIServerURL,
			"--k8s-cacert", BootstrapCAPath, "--k8s-kubeconfig", KubeconfigPath, "--windows-service",
			"--logfile", `C:\var\log\hybrid-overlay\hybrid-overlay.log`)
		if f.VXLANPort != "" {
			cmd = join(cmd, "--hybrid-overlay-vxlan-port", f.VXLANPort)
		}
		return cmd
	case "kube-proxy":
		cmd := join(`C:\k\kube-log-runner.exe`, `-log-file=C:\var\log\kube-proxy\kube-proxy.log`, `C:\k\kube-proxy.exe`,
			"--windows-service", "--proxy-mode=kernelspace", "--feature-gates=WinOverlay=true",
			"--hostname-override="+h.NodeName, "--kubeconfig="+KubeconfigPath,
			"--network-name=OVNKubernetesHybridOverlayNetwork", "--enable-dsr=false", "--v=2")
		if f.HybridClusterNetwork != "" {
			cmd = join(cmd, "--cluster-cidr="+f.HybridClusterNetwork)
		}
		return cmd
	case "cloud-node-manager":
		return join(`C:\k\azure-cloud-node-manager.exe`, "--windows-service", "--node-name="+h.NodeName,
			"--wait-routes=false", "--kubeconfig="+KubeconfigPath)
	}
	return ""
}

// kubeletCommand is the kubelet's command line under kube-log-runner, as WMCO registers it.
func kubeletCommand(f Facts, h Host) string {
	args := []string{
		`C:\k\kube-log-runner.exe`, `-log-file=C:\var\log\kubelet\kubelet.log`, `C:\k\kubelet.exe`,
		"--config=" + KubeletConfPath, "--bootstrap-kubeconfig=" + BootstrapKubeconfigPath,
		"--kubeconfig=" + KubeconfigPath, "--cert-dir=" + KubeletCertDir, "--windows-service",
		"--node-labels=" + config.OSIDNodeLabel + "=" + config.WindowsOSID,
		"--node-ip=" + h.IP, "--hostname-override=" + h.NodeName,
	}
	if cloudPlatforms[strings.ToLower(f.Platform)] {
		args = append(args, "--cloud-provider=external")
	}
	if strings.EqualFold(f.Platform, "AWS") {
		args = append(args, "--image-credential-provider-bin-dir="+K8sDir, "--image-credential-provider-config="+CredentialProviderPath)
	}
	return strings.Join(append(args, "--v=2"), " ")
}
