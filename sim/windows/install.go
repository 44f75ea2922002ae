package windows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// install lays down what the disk holds before the first boot: a fresh Windows Server with OpenSSH,
// and with Options.Configured the files and services of a node WMCO configured.
func (h *Host) install() {
	for _, d := range []string{`C:\Windows\System32\OpenSSH`, `C:\Program Files`, `C:\ProgramData\ssh`, h.home, `C:\Windows\TEMP`} {
		_ = h.fs.mkdirAll(d)
	}
	_ = h.fs.writeFile(`C:\Windows\System32\OpenSSH\sshd.exe`, fakeBinary("sshd.exe"), true)
	_ = h.fs.writeFile(`C:\ProgramData\ssh\administrators_authorized_keys`, h.authorizedKeysFile(), true)
	h.mu.Lock()
	defer h.mu.Unlock()
	_ = h.createServiceLocked("sshd", `C:\Windows\System32\OpenSSH\sshd.exe`, "AUTO_START", nil)
	h.services["sshd"].DisplayName = "OpenSSH SSH Server"
	if h.opts.Configured {
		h.installNodeLocked()
	}
}

func (h *Host) authorizedKeysFile() []byte {
	var b strings.Builder
	for _, k := range h.opts.AuthorizedKeys {
		b.Write(ssh.MarshalAuthorizedKey(k))
	}
	return []byte(b.String())
}

// fakeBinary is a small stand-in for an executable, with a PE signature so it looks like one.
func fakeBinary(name string) []byte { return []byte("MZ winsim stand-in for " + name + "\n") }

var nodeBinaries = []string{
	`C:\k\kubelet.exe`, `C:\k\kube-proxy.exe`, `C:\k\kube-log-runner.exe`, `C:\k\hybrid-overlay-node.exe`,
	`C:\k\windows_exporter.exe`, `C:\k\csi-proxy.exe`, `C:\k\windows-instance-config-daemon.exe`,
	`C:\k\cni\win-bridge.exe`, `C:\k\cni\win-overlay.exe`, `C:\k\cni\host-local.exe`,
	`C:\k\containerd\containerd.exe`, `C:\k\containerd\containerd-shim-runhcs-v1.exe`,
}

func (h *Host) installNodeLocked() {
	for _, d := range config.NodeDirectories {
		_ = h.fs.mkdirAll(d)
	}
	bins := append([]string(nil), nodeBinaries...)
	switch strings.ToLower(h.opts.Platform) {
	case "aws":
		bins = append(bins, `C:\k\ecr-credential-provider.exe`)
	case "azure":
		bins = append(bins, `C:\k\azure-cloud-node-manager.exe`)
	}
	for _, b := range bins {
		_ = h.fs.writeFile(b, fakeBinary(baseOf(b)), true)
	}
	for path, text := range h.nodeConfigFiles() {
		_ = h.fs.writeFile(path, []byte(text), true)
	}
	h.installNetworkLocked()
	h.installExporterTLSLocked()
	services, err := h.wmcoServices()
	if err != nil {
		panic("winsim: WMCO's services for a configured host: " + err.Error()) // wmcon's own contract is invalid: a bug
	}
	for _, ws := range services {
		_ = h.createServiceLocked(ws.name, ws.binPath, "AUTO_START", ws.deps)
		s := h.services[strings.ToLower(ws.name)]
		s.Description = "OpenShift managed " + ws.name
		// wmcon's recovery actions (WMCO's node daemon restarts its services itself).
		s.ResetPeriod = 600 * time.Second
		for _, ms := range []int{10, 30, 60, 120} {
			s.Recovery = append(s.Recovery, RecoveryAction{Type: "restart", Delay: time.Duration(ms) * time.Millisecond})
		}
	}
}

// simAPIServer is the API server URL configured hosts were configured for by default (they never dial it).
const simAPIServer = "https://api-int.winsim.example:6443"

// simServiceNetwork is the service network configured hosts were configured for (OpenShift's default).
const simServiceNetwork = "172.30.0.0/16"

type installedService struct {
	name, binPath string
	deps          []string
}

// wmcoServices are the services of a node WMCO 11 configured: its contract for the host's platform, each
// command line resolved for this host as WMCO's node daemon resolves it (the name the cloud provider knows,
// the host's address), and WMCO's node daemon itself.
func (h *Host) wmcoServices() ([]installedService, error) {
	data, err := nodeconfig.Contract(nodeconfig.ContractInputs{Platform: h.opts.Platform, APIServerURL: h.opts.APIServerURL})
	if err != nil {
		return nil, err
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: h.NodeName()}}
	kubeletOut := map[string]string{nodeconfig.NodeIPVar: h.hostIP(), nodeconfig.HostnameOverrideVar: h.NodeName()}
	var out []installedService
	for _, cs := range data.Services {
		cmd, err := contract.Resolve(cs, node, kubeletOut)
		if err != nil {
			return nil, err
		}
		out = append(out, installedService{name: cs.Name, binPath: cmd, deps: slices.Clone(cs.Dependencies)})
	}
	return append(out, installedService{name: WICD, binPath: wicdCommand}), nil
}

// wicdCommand is how WMCO runs its node daemon.
var wicdCommand = `C:\k\windows-instance-config-daemon.exe controller --windows-service --log-dir C:\var\log\wicd\ --kubeconfig C:\k\kubeconfig --namespace ` + config.OperatorNamespace

// NodeName is the name this host's kubelet registers under as WMCO configures it: the cloud provider's name
// for the instance where WMCO overrides the host name (AWS, GCP), otherwise the host name, lower case.
func (h *Host) NodeName() string {
	if n := h.CloudHostname(); n != "" {
		return strings.ToLower(n)
	}
	return strings.ToLower(h.Hostname())
}

// installNetworkLocked leaves the host's network as WMCO's kube-proxy pre-script does once hybrid-overlay-node
// has created its HNS networks: the VIP endpoint attached to the host, cni.conf and kube-proxy.conf.
func (h *Host) installNetworkLocked() {
	_ = h.fs.writeFile(HNSModule, []byte("# winsim stand-in for WMCO's hns.psm1\n"), true)
	h.createHybridOverlayNetworksLocked()
	n := h.hns[hybridOverlayNetwork]
	ep, err := h.newEndpointLocked(n, nodeconfig.VIPEndpointName)
	if err != nil {
		panic("winsim: " + err.Error())
	}
	ep.compartment = 1
	cni, err := nodeconfig.CNIConfig(nodeconfig.CNINetwork{Subnet: n.subnet, ProviderAddress: n.managementIP, ServiceNetwork: simServiceNetwork})
	if err != nil {
		panic("winsim: " + err.Error())
	}
	kp, err := nodeconfig.KubeProxyConfig(nodeconfig.KubeProxyInputs{NodeName: h.NodeName(), ClusterCIDR: n.subnet,
		Kubeconfig: nodeconfig.KubeconfigPath, Verbosity: "0", SourceVIP: ep.ip})
	if err != nil {
		panic("winsim: " + err.Error())
	}
	_ = h.fs.writeFile(nodeconfig.CNIConfPath, cni, true)
	_ = h.fs.writeFile(nodeconfig.KubeProxyConfPath, kp, true)
}

func (h *Host) nodeConfigFiles() map[string]string {
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority: C:\\k\\kubelet-ca.crt\n    server: " + h.opts.APIServerURL + "\n  name: local\ncontexts:\n- context:\n    cluster: local\n    user: kubelet\n  name: local\ncurrent-context: local\nusers:\n- name: kubelet\n  user:\n    client-certificate: C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem\n    client-key: C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem\n"
	return map[string]string{
		kubeletConfPath:                        "kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\nrotateCertificates: true\nserverTLSBootstrap: true\nauthentication:\n  x509:\n    clientCAFile: C:\\k\\kubelet-ca.crt\ncgroupsPerQOS: false\nenforceNodeAllocatable: []\ncontainerLogMaxSize: 50Mi\n",
		kubeconfigPath:                         kubeconfig,
		`C:\k\wicd-kubeconfig`:                 kubeconfig, // WMCO's node daemon's, which cloud-node-manager uses
		bootstrapKubeconfigPath:                strings.Replace(kubeconfig, "    client-certificate: C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem\n    client-key: C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem\n", "    token: winsim-bootstrap-token\n", 1),
		`C:\k\bootstrap-ca.crt`:                "-----BEGIN CERTIFICATE-----\nwinsim\n-----END CERTIFICATE-----\n",
		`C:\k\kubelet-ca.crt`:                  "-----BEGIN CERTIFICATE-----\nwinsim\n-----END CERTIFICATE-----\n",
		`C:\k\containerd\containerd_conf.toml`: string(nodeconfig.ContainerdConfig()), // WMCO's payload file
	}
}

// WICD is the Windows Instance Config Daemon's service.
const WICD = "windows-instance-config-daemon"

// InstallWICD does on a configured host what WMCO does after the node's services and wmcon's engine does
// not (it has no operator to answer the daemon): it installs and starts windows-instance-config-daemon.
func (h *Host) InstallWICD() error {
	_ = h.fs.mkdirAll(`C:\var\log\wicd`)
	if err := h.fs.writeFile(`C:\k\windows-instance-config-daemon.exe`, fakeBinary("windows-instance-config-daemon.exe"), true); err != nil {
		return fmt.Errorf("winsim: write WICD: %v", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.createServiceLocked(WICD, wicdCommand, "AUTO_START", nil); err != nil && err != errSvcExists {
		return fmt.Errorf("winsim: create %s: %s", WICD, err.text)
	}
	if _, err := h.startLocked(WICD); err != nil && err != errSvcRunning {
		return fmt.Errorf("winsim: start %s: %s", WICD, err.text)
	}
	return nil
}

// The exporter's TLS files, where WMCO writes them from its TLS secret and its payload.
const (
	exporterWebConfigPath = `C:\k\tls\windows-exporter-webconfig.yaml`
	exporterCertPath      = `C:\k\tls\certs\tls.crt`
	exporterKeyPath       = `C:\k\tls\certs\tls.key`
)

// installExporterTLSLocked writes windows_exporter's web configuration and certificate: Options.ExporterCert
// and ExporterKey, or a certificate of the host's own.
func (h *Host) installExporterTLSLocked() {
	cert, key := h.opts.ExporterCert, h.opts.ExporterKey
	if len(cert) == 0 || len(key) == 0 {
		var err error
		if cert, key, err = SelfSignedCert("windows-exporter", h.hostIP()); err != nil {
			panic("winsim: " + err.Error())
		}
	}
	_ = h.fs.writeFile(exporterWebConfigPath, nodeconfig.ExporterWebConfig(), true)
	_ = h.fs.writeFile(exporterCertPath, cert, true)
	_ = h.fs.writeFile(exporterKeyPath, key, true)
}
