// Package config holds wmcon's settings and the names WMCO uses on real clusters.
//
// The names in this file are contracts with the Windows Machine Config Operator: wmcon reads and writes
// exactly these strings so that it works on clusters where WMCO is already installed.
package config

// Namespaces and objects.
const (
	OperatorNamespace       = "openshift-windows-machine-config-operator"
	OperatorName            = "windows-machine-config-operator"
	MachineAPINamespace     = "openshift-machine-api"
	OpenShiftConfigNS       = "openshift-config"
	PrivateKeySecret        = "cloud-private-key"
	PrivateKeySecretKey     = "private-key.pem"
	UserDataSecret          = "windows-user-data"
	UserDataSecretKey       = "userData"
	PullSecret              = "pull-secret"
	PullSecretKey           = ".dockerconfigjson"
	TrustedCAKey            = "ca-bundle.crt" // key of the proxy's trusted CA ConfigMap
	BYOHConfigMap           = "windows-instances"
	HostKeysConfigMap       = "windows-ssh-host-keys"
	ServicesConfigMapPrefix = "windows-services-"
	ClusterSingletonName    = "cluster" // infrastructure, network, proxy
	ClusterVersionName      = "version"
	// OperatorPodSelector selects the operator's pod (its Deployment's template label), and
	// OperatorContainer is the container whose log is the operator's.
	OperatorPodSelector = "name=" + OperatorName
	OperatorContainer   = "manager"
)

// Annotation and label prefix, and the keys WMCO sets on Nodes and Machines.
const (
	Prefix = "windowsmachineconfig.openshift.io/"

	VersionAnnotation = Prefix + "version"
	// StandaloneVersionPrefix starts the version annotation wmcon writes where no operator names the
	// version (wmcon configure without WMCO): "wmcon-<payload version>".
	StandaloneVersionPrefix  = "wmcon-"
	DesiredVersionAnnotation = Prefix + "desired-version"
	RebootRequiredAnnotation = Prefix + "reboot-required"
	PubKeyHashAnnotation     = Prefix + "pub-key-hash"
	UsernameAnnotation       = Prefix + "username"
	HostKeyAnnotation        = Prefix + "ssh-host-key"
	// SetupModeAnnotation is wmcon's own, on cloud-private-key: "standalone" when the guided setup installed
	// the key after the user chose standalone mode, so a setup resumed later knows the choice.
	SetupModeAnnotation = "wmcon/setup-mode"
	// CordonedByAnnotation is wmcon's own, on a Node that configure cordoned ("configure") while its host is
	// reconfigured, removed when it uncordons: a run that stopped leaves it, so the run that resumes knows
	// the cordon is its to lift (a node someone else cordoned stays cordoned).
	CordonedByAnnotation  = "wmcon/cordoned-by"
	HostKeyTypeAnnotation = Prefix + "ssh-host-key-type"

	UpgradingLabel = Prefix + "upgrading"
	BYOHLabel      = Prefix + "byoh"
	IgnoreLabel    = Prefix + "ignore"

	WorkerRoleLabel   = "node-role.kubernetes.io/worker"
	RoleLabelPrefix   = "node-role.kubernetes.io/"
	OSIDNodeLabel     = "node.openshift.io/os_id"
	OSLabel           = "kubernetes.io/os"
	WindowsBuildLabel = "node.kubernetes.io/windows-build"
	MachineOSIDLabel  = "machine.openshift.io/os-id"
	WindowsOSID       = "Windows"

	MachineSetClusterLabel = "machine.openshift.io/cluster-api-cluster"
	MachineSetLabel        = "machine.openshift.io/cluster-api-machineset"
	MachineRoleLabel       = "machine.openshift.io/cluster-api-machine-role"
	MachineTypeLabel       = "machine.openshift.io/cluster-api-machine-type"
	MachineAnnotation      = "machine.openshift.io/machine" // on a Node: "<namespace>/<machine>"

	HostKeysManagedByLabel = "app.kubernetes.io/managed-by"
	HybridOverlaySubnet    = "k8s.ovn.org/hybrid-overlay-node-subnet"
	BastionServiceLabel    = "run=ssh-bastion"
	BastionUser            = "core"
)

// SSH defaults.
const (
	DefaultSSHUser = "Administrator"
	AzureSSHUser   = "capi"
	SSHPort        = 22
)

// WindowsService describes one service WMCO installs on a Windows node.
type WindowsService struct {
	Name       string   // Windows service name
	StartOrder int      // lower starts first
	DependsOn  []string // services that must run first
	LogFile    string   // Windows path of its log, "" when it has none
	LogDir     string   // directory under C:\var\log used by the node log proxy
	Platform   string   // non-empty when only installed on that platform
}

// Services is the set WMCO installs and keeps running, in start order.
var Services = []WindowsService{
	{Name: "containerd", StartOrder: 0, LogFile: `C:\var\log\containerd\containerd.log`, LogDir: "containerd"},
	{Name: "kubelet", StartOrder: 1, DependsOn: []string{"containerd"}, LogFile: `C:\var\log\kubelet\kubelet.log`, LogDir: "kubelet"},
	{Name: "windows_exporter", StartOrder: 2, LogFile: `C:\var\log\windows_exporter\windows_exporter.log`, LogDir: "windows_exporter"},
	{Name: "csi-proxy", StartOrder: 2, LogFile: `C:\var\log\csi-proxy\csi-proxy.log`, LogDir: "csi-proxy"},
	{Name: "hybrid-overlay-node", StartOrder: 2, DependsOn: []string{"kubelet"}, LogFile: `C:\var\log\hybrid-overlay\hybrid-overlay.log`, LogDir: "hybrid-overlay"},
	{Name: "kube-proxy", StartOrder: 3, DependsOn: []string{"hybrid-overlay-node"}, LogFile: `C:\var\log\kube-proxy\kube-proxy.log`, LogDir: "kube-proxy"},
	{Name: "cloud-node-manager", StartOrder: 3, Platform: "Azure"},
	{Name: "windows-instance-config-daemon", StartOrder: 4, LogFile: `C:\var\log\wicd\windows-instance-config-daemon.exe.INFO`, LogDir: "wicd"},
}

// ServiceByName returns the WMCO service with that Windows name.
func ServiceByName(name string) (WindowsService, bool) {
	for _, s := range Services {
		if s.Name == name {
			return s, true
		}
	}
	return WindowsService{}, false
}

// Directories a configured Windows node has.
var NodeDirectories = []string{
	`C:\k`, `C:\k\cni`, `C:\k\cni\config`, `C:\k\containerd`, `C:\k\containerd\registries`,
	`C:\k\etc\kubernetes\manifests`, `C:\k\tls`, `C:\k\wicd-certs`, `C:\Temp`, `C:\var\log`,
	`C:\var\log\kubelet`, `C:\var\log\kube-proxy`, `C:\var\log\hybrid-overlay`, `C:\var\log\containerd`,
	`C:\var\log\csi-proxy`, `C:\var\log\wicd`, `C:\var\log\windows_exporter`, `C:\var\lib\cni`,
}

// Where a node keeps its registry configuration and the proxy's trusted CA bundle.
const (
	RegistriesDir = `C:\k\containerd\registries`
	CABundlePath  = `C:\k\ca-bundle.crt`
)

// EC2 metadata route that an AWS Windows host can lose across a reboot.
const (
	EC2MetadataIP   = "169.254.169.254"
	EC2MetadataMask = "255.255.255.255"
)
