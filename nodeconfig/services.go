package nodeconfig

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// ManagedTag starts the description of every service wmcon (like WMCO) installs, so they can be found.
const ManagedTag = "OpenShift managed"

// Platforms are the infrastructure platform types wmcon configures nodes for, spelled as
// infrastructure/cluster spells them.
var Platforms = []string{"AWS", "Azure", "GCP", "VSphere", "Nutanix", "BareMetal", "None"}

// CanonicalPlatform returns the platform type spelled as the cluster spells it, for any case of it.
func CanonicalPlatform(p string) (string, bool) {
	for _, known := range Platforms {
		if strings.EqualFold(p, known) {
			return known, true
		}
	}
	return "", false
}

// cloudPlatforms run an external cloud provider: the cluster starts their kubelets with --cloud-provider=external.
var cloudPlatforms = map[string]bool{"aws": true, "azure": true, "gcp": true, "vsphere": true, "nutanix": true}

// The variables WMCO's services use, and where their values come from.
const (
	NodeNameVar         = "NODE_NAME"         // {.metadata.name}
	NodeIPVar           = "NODE_IP"           // pre-script: the IPv4 of the default route's interface
	HostnameOverrideVar = "HOSTNAME_OVERRIDE" // pre-script: the name the platform's cloud provider expects
)

// Pre-scripts and the scripts they run (the scripts are payload files copied to C:\Temp).
const (
	NetworkConfScriptPath = `C:\Temp\network-conf.ps1`
	DefenderScriptPath    = `C:\Temp\windows-defender-exclusion.ps1`
	GCPHostnameScriptPath = `C:\Temp\gcp-get-hostname.ps1`
	KubeProxyConfPath     = `C:\k\kube-proxy.conf`
	ExporterWebConfigPath = `C:\k\tls\windows-exporter-webconfig.yaml`
	WICDKubeconfigPath    = `C:\k\wicd-kubeconfig`

	// nodeIPScript prints the IPv4 address of the interface holding the default route.
	nodeIPScript = "(Get-NetRoute -DestinationPrefix '0.0.0.0/0' | Get-NetIpAddress -AddressFamily IPv4 -ifIndex {$_.ifIndex}[0]).IPAddress"
	// awsHostnameScript asks the instance metadata for the name AWS's cloud provider gives the node.
	awsHostnameScript = "Invoke-RestMethod -UseBasicParsing -Uri http://169.254.169.254/latest/meta-data/local-hostname"
	// vsphereHostnameScript prints the host's DNS name with its primary DNS suffix when it has one (the name
	// vSphere's cloud provider knows the VM by). wmcon's own command; WMCO parses ipconfig /all for the same.
	vsphereHostnameScript = "$h = [System.Net.Dns]::GetHostName(); " +
		"$s = (Get-ItemProperty -Path 'HKLM:\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters').Domain; " +
		"if ($s) { \"$h.$s\" } else { $h }"
)

// HostnameScript is the pre-script that names the node on a platform, "" where the kubelet keeps the host's
// own name (the cloud provider, if any, decides by that name): AWS asks the instance metadata, GCP runs
// WMCO's payload script (a hostname longer than 63 characters shortened as GCP does), vSphere takes the
// fully qualified name; Azure, Nutanix, bare metal and None keep the host name.
func HostnameScript(platform string) string {
	switch strings.ToLower(platform) {
	case "aws":
		return awsHostnameScript
	case "gcp":
		return GCPHostnameScriptPath
	case "vsphere":
		return vsphereHostnameScript
	}
	return ""
}

// ContractInputs are what the services contract is generated from — what WMCO's generator reads from the
// cluster.
type ContractInputs struct {
	Platform     string // infrastructure platform type; "" = a cluster without one (plain Kubernetes)
	APIServerURL string // internal API server URL, as hosts reach it
	VXLANPort    string // custom hybrid-overlay VXLAN port, "" = the default
	// KubeletArgs are the kubelet arguments the cluster gives its workers that WMCO passes on: cloud-provider
	// and cloud-config (a Linux path; the file goes to C:\k under the same name). nil = StandaloneKubeletArgs.
	KubeletArgs map[string]string
	Proxy       Proxy
}

// ContractInputs are the facts the services contract depends on.
func (f Facts) ContractInputs() ContractInputs {
	return ContractInputs{Platform: f.Platform, APIServerURL: f.APIServerURL, VXLANPort: f.VXLANPort, KubeletArgs: f.KubeletArgs, Proxy: f.Proxy}
}

// StandaloneKubeletArgs are the kubelet arguments an OpenShift cluster's worker configuration gives on a
// platform: an external cloud provider on the cloud platforms, none (an empty --cloud-provider=) elsewhere.
func StandaloneKubeletArgs(platform string) map[string]string {
	if cloudPlatforms[strings.ToLower(platform)] {
		return map[string]string{"cloud-provider": "external"}
	}
	return map[string]string{"cloud-provider": ""}
}

// WatchedEnvironmentVars are the machine environment variables the contract owns: the cluster proxy's.
var WatchedEnvironmentVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}

// Contract generates the services contract for a cluster, in the form and with the content WMCO 11's own
// generator gives for the same inputs (held against its output in conformance_test.go): what wmcon applies
// when WMCO is not installed.
func Contract(in ContractInputs) (contract.Data, error) {
	if err := in.validate(); err != nil {
		return contract.Data{}, err
	}
	args := in.KubeletArgs
	if args == nil {
		args = StandaloneKubeletArgs(in.Platform)
	}
	// WMCO's own order, which it keeps within a priority.
	services := []contract.Service{
		exporterService(), containerdService(), kubeletService(in.Platform, args),
		hybridOverlayService(in.APIServerURL, in.VXLANPort), kubeProxyService(), csiProxyService(),
	}
	if strings.EqualFold(in.Platform, "Azure") {
		services = append(services, cloudNodeManagerService())
	}
	d := contract.Data{
		Services:               contract.ByPriority(services),
		Files:                  []contract.File{},
		WatchedEnvironmentVars: append([]string(nil), WatchedEnvironmentVars...),
		EnvironmentVars:        proxyVars(in.Proxy),
	}
	if err := d.Validate(); err != nil {
		return contract.Data{}, fmt.Errorf("wmcon generated an invalid services contract (a bug): %w", err)
	}
	return d, nil
}

func (in ContractInputs) validate() error {
	var errs []error
	if in.Platform != "" {
		if _, ok := CanonicalPlatform(in.Platform); !ok {
			errs = append(errs, fmt.Errorf("platform %q is not one of %s", in.Platform, strings.Join(Platforms, ", ")))
		}
	}
	if u, err := url.Parse(in.APIServerURL); err != nil || u.Scheme != "https" || u.Host == "" || strings.ContainsAny(in.APIServerURL, " \"") {
		errs = append(errs, fmt.Errorf("the API server URL %q is not an https URL", in.APIServerURL))
	}
	if in.VXLANPort != "" {
		if p, err := strconv.Atoi(in.VXLANPort); err != nil || p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("hybrid overlay VXLAN port %q is not a port number", in.VXLANPort))
		}
	}
	return errors.Join(errs...)
}

func proxyVars(p Proxy) map[string]string {
	out := map[string]string{}
	for name, v := range map[string]string{"HTTP_PROXY": p.HTTP, "HTTPS_PROXY": p.HTTPS, "NO_PROXY": p.NoProxy} {
		if v != "" {
			out[name] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func nodeNameVariable() []contract.NodeVariable {
	return []contract.NodeVariable{{Name: NodeNameVar, NodeObjectJSONPath: "{.metadata.name}"}}
}

func words(parts ...string) string { return strings.Join(parts, " ") }

// underLogRunner runs a program under kube-log-runner.exe, which writes its output to logFile.
func underLogRunner(program, logFile string) string {
	return words(`C:\k\kube-log-runner.exe`, "-log-file="+logFile, program)
}

func exporterService() contract.Service {
	return contract.Service{Name: "windows_exporter", Priority: 2,
		Command: words(`C:\k\windows_exporter.exe`, "--collectors.enabled", "cpu,logical_disk,net,os,service,system,container,memory,cpu_info",
			"--web.config.file", ExporterWebConfigPath, "--log.level", "info", "--log.file", `C:\var\log\windows_exporter\windows_exporter.log`)}
}

func containerdService() contract.Service {
	exe := `C:\k\containerd\containerd.exe`
	return contract.Service{Name: "containerd", Bootstrap: true, Priority: 0,
		Command: words(exe, "--config", ContainerdConfPath, "--log-file", `C:\var\log\containerd\containerd.log`, "--run-service", "--log-level", "info"),
		// Windows Defender scanning containerd's layers slows every pull; the script excludes the process
		// when Defender runs and does nothing otherwise.
		PowershellPreScripts: []contract.PreScript{{Path: words(DefenderScriptPath, "-BinPath", exe)}}}
}

func kubeletService(platform string, fromCluster map[string]string) contract.Service {
	args := []string{
		"--config=" + KubeletConfPath, "--bootstrap-kubeconfig=" + BootstrapKubeconfigPath, "--kubeconfig=" + KubeconfigPath,
		"--cert-dir=" + KubeletCertDir, "--windows-service", "--node-labels=" + config.OSIDNodeLabel + "=" + config.WindowsOSID,
		// More CPU time for the kubelet than for the workloads beside it.
		"--windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS", "--v=2",
	}
	if v, ok := fromCluster["cloud-provider"]; ok {
		args = append(args, "--cloud-provider="+v)
	}
	if v, ok := fromCluster["cloud-config"]; ok {
		args = append(args, "--cloud-config="+K8sDir+`\`+path.Base(v))
	}
	var scripts []contract.PreScript
	if script := HostnameScript(platform); script != "" {
		args = append(args, "--hostname-override="+HostnameOverrideVar)
		scripts = append(scripts, contract.PreScript{VariableName: HostnameOverrideVar, Path: script})
	}
	args = append(args, "--node-ip="+NodeIPVar)
	if strings.EqualFold(platform, "AWS") {
		args = append(args, "--image-credential-provider-bin-dir="+K8sDir, "--image-credential-provider-config="+CredentialProviderPath)
	}
	scripts = append(scripts, contract.PreScript{VariableName: NodeIPVar, Path: nodeIPScript})
	return contract.Service{Name: "kubelet", Bootstrap: true, Priority: 1, Dependencies: []string{"containerd"},
		Command:              words(underLogRunner(`C:\k\kubelet.exe`, `C:\var\log\kubelet\kubelet.log`), strings.Join(args, " ")),
		PowershellPreScripts: scripts}
}

// hybridOverlayService runs hybrid-overlay-node with its own client certificate, requested with the
// kubelet's credentials and renewed daily, not with the kubelet's identity.
func hybridOverlayService(apiServer, vxlanPort string) contract.Service {
	cmd := words(`C:\k\hybrid-overlay-node.exe`, "--node", NodeNameVar, "--bootstrap-kubeconfig="+KubeconfigPath,
		"--cert-dir="+CNIConfigDir, "--cert-duration=24h", "--windows-service", "--logfile", `C:\var\log\hybrid-overlay\hybrid-overlay.log`,
		"--k8s-apiserver="+apiServer, "--k8s-cacert", BootstrapCAPath)
	if vxlanPort != "" {
		cmd = words(cmd, "--hybrid-overlay-vxlan-port", vxlanPort)
	}
	return contract.Service{Name: "hybrid-overlay-node", Priority: 2, Dependencies: []string{"kubelet"},
		Command: cmd, NodeVariablesInCommand: nodeNameVariable()}
}

// kubeProxyService reads its configuration from C:\k\kube-proxy.conf, which its pre-script writes (with the
// CNI configuration and the HNS endpoint whose address is kube-proxy's source VIP) from the node's
// hybrid-overlay subnet.
func kubeProxyService() contract.Service {
	escaped := strings.ReplaceAll(config.HybridOverlaySubnet, ".", `\.`)
	return contract.Service{Name: "kube-proxy", Priority: 3, Dependencies: []string{"hybrid-overlay-node"},
		Command: words(underLogRunner(`C:\k\kube-proxy.exe`, `C:\var\log\kube-proxy\kube-proxy.log`), "--config", KubeProxyConfPath, "--windows-service"),
		PowershellPreScripts: []contract.PreScript{{
			Path: words(NetworkConfScriptPath, "-hostnameOverride", NodeNameVar, "-clusterCIDR NODE_SUBNET",
				"-kubeConfigPath KUBE_CONFIG_PATH -kubeProxyConfigPath KUBE_PROXY_CONFIG_PATH -verbosity VERBOSITY"),
			NodeArgs: []contract.NodeVariable{
				{Name: NodeNameVar, NodeObjectJSONPath: "{.metadata.name}"},
				{Name: "NODE_SUBNET", NodeObjectJSONPath: "{.metadata.annotations." + escaped + "}"},
				// WMCO passes constants this way too: plain text is its own value.
				{Name: "KUBE_CONFIG_PATH", NodeObjectJSONPath: KubeconfigPath},
				{Name: "KUBE_PROXY_CONFIG_PATH", NodeObjectJSONPath: KubeProxyConfPath},
				{Name: "VERBOSITY", NodeObjectJSONPath: "0"},
			},
		}}}
}

func csiProxyService() contract.Service {
	return contract.Service{Name: "csi-proxy", Priority: 2,
		Command: words(`C:\k\csi-proxy.exe`, `-log_file=C:\var\log\csi-proxy\csi-proxy.log`, "-logtostderr=false", "-windows-service", "--v=2")}
}

func cloudNodeManagerService() contract.Service {
	return contract.Service{Name: "cloud-node-manager", Priority: 3, NodeVariablesInCommand: nodeNameVariable(),
		Command: words(`C:\k\azure-cloud-node-manager.exe`, "--windows-service", "--node-name="+NodeNameVar,
			"--wait-routes=false", "--kubeconfig="+WICDKubeconfigPath)}
}
