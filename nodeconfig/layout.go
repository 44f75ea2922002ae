package nodeconfig

import "strings"

// Paths on a configured Windows node (wmco-facts.md, "What a configured Windows node runs").
const (
	K8sDir                  = `C:\k`
	CNIDir                  = `C:\k\cni`
	CNIConfigDir            = `C:\k\cni\config`
	ContainerdDir           = `C:\k\containerd`
	RegistriesDir           = `C:\k\containerd\registries`
	TLSDir                  = `C:\k\tls`
	TempDir                 = `C:\Temp`
	LogDir                  = `C:\var\log`
	CNIStateDir             = `C:\var\lib\cni`
	KubeletConfPath         = `C:\k\kubelet.conf`
	BootstrapKubeconfigPath = `C:\k\bootstrap-kubeconfig`
	KubeconfigPath          = `C:\k\kubeconfig`
	BootstrapCAPath         = `C:\k\bootstrap-ca.crt`
	KubeletCAPath           = `C:\k\kubelet-ca.crt`
	TrustedCABundlePath     = `C:\k\ca-bundle.crt`
	ContainerdConfPath      = `C:\k\containerd\containerd_conf.toml`
	CredentialProviderPath  = `C:\k\credential-provider-config.yaml`
	ExporterCertPath        = `C:\k\tls\certs\tls.crt`
	ExporterKeyPath         = `C:\k\tls\certs\tls.key`
	KubeletCertDir          = `c:\var\lib\kubelet\pki\`
	// The kubelet's TLS bootstrap (k8s.io/kubernetes pkg/kubelet/certificate/bootstrap) keeps the key it
	// requests its client certificate with in KubeletClientKeyTmp until the certificate is issued, then
	// stores both in KubeletClientCurrent and removes the temporary file; a later bootstrap (an expired
	// certificate) reuses the current pair's key.
	KubeletClientKeyTmp  = KubeletCertDir + `kubelet-client.key.tmp`
	KubeletClientCurrent = KubeletCertDir + `kubelet-client-current.pem`
	SandboxImage         = "mcr.microsoft.com/oss/kubernetes/pause:3.9"
)

// HNSModulePath is where WMCO's payload puts the HNS PowerShell module, which deconfiguring uses.
const HNSModulePath = `C:\Temp\hns.psm1`

// HNS networks hybrid-overlay-node creates; deconfiguring removes them.
var HNSNetworks = []string{"BaseOVNKubernetesHybridOverlayNetwork", "OVNKubernetesHybridOverlayNetwork"}

// payloadEntry places one file of WMCO's /payload on the host.
type payloadEntry struct {
	Name     string // path inside the payload, slash-separated, without a .tar.gz suffix
	Dest     string // Windows path on the host
	Platform string // "" = every platform
	Optional bool   // installed when the payload has it
}

// payloadLayout is where each payload file goes, following WMCO's /payload layout.
var payloadLayout = []payloadEntry{
	{Name: "kube-node/kubelet.exe", Dest: `C:\k\kubelet.exe`},
	{Name: "kube-node/kube-proxy.exe", Dest: `C:\k\kube-proxy.exe`},
	{Name: "kube-node/kube-log-runner.exe", Dest: `C:\k\kube-log-runner.exe`},
	{Name: "hybrid-overlay-node.exe", Dest: `C:\k\hybrid-overlay-node.exe`},
	{Name: "windows-exporter/windows_exporter.exe", Dest: `C:\k\windows_exporter.exe`},
	{Name: "windows-exporter/windows-exporter-webconfig.yaml", Dest: `C:\k\tls\windows-exporter-webconfig.yaml`, Optional: true},
	{Name: "csi-proxy/csi-proxy.exe", Dest: `C:\k\csi-proxy.exe`},
	{Name: "containerd/containerd.exe", Dest: `C:\k\containerd\containerd.exe`},
	{Name: "containerd/containerd-shim-runhcs-v1.exe", Dest: `C:\k\containerd\containerd-shim-runhcs-v1.exe`},
	{Name: "cni/host-local.exe", Dest: `C:\k\cni\host-local.exe`},
	{Name: "cni/win-bridge.exe", Dest: `C:\k\cni\win-bridge.exe`},
	{Name: "cni/win-overlay.exe", Dest: `C:\k\cni\win-overlay.exe`},
	// hns.psm1: WMCO's network step (the VIP endpoint) and deconfigure (the HNS networks) need it.
	{Name: "powershell/hns.psm1", Dest: HNSModulePath},
	{Name: "ecr-credential-provider.exe", Dest: `C:\k\ecr-credential-provider.exe`, Platform: "AWS"},
	{Name: "azure-cloud-node-manager.exe", Dest: `C:\k\azure-cloud-node-manager.exe`, Platform: "Azure"},
}

// RequiredPayload lists the payload files a host on platform needs; a payload without one is refused.
func RequiredPayload(platform string) []string {
	var out []string
	for _, e := range payloadLayout {
		if !e.Optional && e.onPlatform(platform) {
			out = append(out, e.Name)
		}
	}
	return out
}

func (e payloadEntry) onPlatform(platform string) bool {
	return e.Platform == "" || strings.EqualFold(e.Platform, platform)
}
