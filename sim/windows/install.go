package windows

import (
	"fmt"
	"strings"
	"time"

	"github.com/wmcon/wmcon/config"
	"golang.org/x/crypto/ssh"
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
	for _, ws := range config.Services {
		if ws.Platform != "" && !strings.EqualFold(ws.Platform, h.opts.Platform) {
			continue
		}
		_ = h.createServiceLocked(ws.Name, h.binPathOf(ws.Name), "AUTO_START", append([]string(nil), ws.DependsOn...))
		s := h.services[strings.ToLower(ws.Name)]
		s.Description = "OpenShift managed " + ws.Name
		s.ResetPeriod = 600 * time.Second
		for _, ms := range []int{10, 30, 60, 120} {
			s.Recovery = append(s.Recovery, RecoveryAction{Type: "restart", Delay: time.Duration(ms) * time.Millisecond})
		}
	}
}

// binPathOf is the command line WMCO registers for each service.
func (h *Host) binPathOf(name string) string {
	node := strings.ToLower(h.opts.Hostname)
	switch name {
	case "containerd":
		return `C:\k\containerd\containerd.exe --config C:\k\containerd\containerd_conf.toml --log-file C:\var\log\containerd\containerd.log --run-service --log-level info`
	case "kubelet":
		return `C:\k\kube-log-runner.exe -log-file=C:\var\log\kubelet\kubelet.log C:\k\kubelet.exe --config=C:\k\kubelet.conf --bootstrap-kubeconfig=C:\k\bootstrap-kubeconfig --kubeconfig=C:\k\kubeconfig --cert-dir=c:\var\lib\kubelet\pki\ --windows-service --v=2 --node-labels=node.openshift.io/os_id=Windows --container-runtime-endpoint=npipe://./pipe/containerd-containerd`
	case "windows_exporter":
		return `C:\k\windows_exporter.exe --collectors.enabled cpu,cs,logical_disk,net,os,service,system,textfile,container,memory,cpu_info`
	case "csi-proxy":
		return `C:\k\csi-proxy.exe -log_file=C:\var\log\csi-proxy\csi-proxy.log -logtostderr=false -windows-service`
	case "hybrid-overlay-node":
		return fmt.Sprintf(`C:\k\hybrid-overlay-node.exe --node %s --k8s-kubeconfig C:\k\kubeconfig --windows-service --logfile C:\var\log\hybrid-overlay\hybrid-overlay.log`, node)
	case "kube-proxy":
		return fmt.Sprintf(`C:\k\kube-log-runner.exe -log-file=C:\var\log\kube-proxy\kube-proxy.log C:\k\kube-proxy.exe --windows-service --proxy-mode=kernelspace --feature-gates=WinOverlay=true --hostname-override=%s --kubeconfig=C:\k\kubeconfig --cluster-cidr=10.132.0.0/14 --network-name=OVNKubernetesHybridOverlayNetwork --enable-dsr=false`, node)
	case "cloud-node-manager":
		return fmt.Sprintf(`C:\k\azure-cloud-node-manager.exe --windows-service --node-name=%s --wait-routes=false --kubeconfig C:\k\kubeconfig`, node)
	case "windows-instance-config-daemon":
		return `C:\k\windows-instance-config-daemon.exe controller --windows-service --log-dir C:\var\log\wicd\ --kubeconfig C:\k\kubeconfig --namespace ` + config.OperatorNamespace
	}
	return `C:\k\` + name + ".exe"
}

func (h *Host) nodeConfigFiles() map[string]string {
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority: C:\\k\\kubelet-ca.crt\n    server: https://api-int.winsim.example:6443\n  name: local\ncontexts:\n- context:\n    cluster: local\n    user: kubelet\n  name: local\ncurrent-context: local\nusers:\n- name: kubelet\n  user:\n    client-certificate: C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem\n    client-key: C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem\n"
	return map[string]string{
		kubeletConfPath:         "kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\nrotateCertificates: true\nserverTLSBootstrap: true\nauthentication:\n  x509:\n    clientCAFile: C:\\k\\kubelet-ca.crt\ncgroupsPerQOS: false\nenforceNodeAllocatable: []\ncontainerLogMaxSize: 50Mi\n",
		kubeconfigPath:          kubeconfig,
		bootstrapKubeconfigPath: strings.Replace(kubeconfig, "    client-certificate: C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem\n    client-key: C:\\var\\lib\\kubelet\\pki\\kubelet-client-current.pem\n", "    token: winsim-bootstrap-token\n", 1),
		`C:\k\bootstrap-ca.crt`: "-----BEGIN CERTIFICATE-----\nwinsim\n-----END CERTIFICATE-----\n",
		`C:\k\kubelet-ca.crt`:   "-----BEGIN CERTIFICATE-----\nwinsim\n-----END CERTIFICATE-----\n",
		`C:\k\containerd\containerd_conf.toml`: "version = 2\n\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n    sandbox_image = \"mcr.microsoft.com/oss/kubernetes/pause:3.9\"\n" +
			"    [plugins.\"io.containerd.grpc.v1.cri\".registry]\n      config_path = \"C:/k/containerd/registries\"\n",
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
	if err := h.createServiceLocked(WICD, h.binPathOf(WICD), "AUTO_START", nil); err != nil && err != errSvcExists {
		return fmt.Errorf("winsim: create %s: %s", WICD, err.text)
	}
	if _, err := h.startLocked(WICD); err != nil && err != errSvcRunning {
		return fmt.Errorf("winsim: start %s: %s", WICD, err.text)
	}
	return nil
}
