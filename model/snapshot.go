// Package model holds the render-ready, immutable snapshot of the cluster that the console draws and the
// actions read. It imports no client-go, so the UI can depend on it without pulling in Kubernetes clients.
package model

import (
	"strings"
	"time"
)

// Snapshot is an immutable, render-ready view of everything the console shows. The watcher builds a new
// one whenever an informer reports a change (coalesced) and never mutates a published snapshot, so the UI
// may keep and read it from any goroutine.
type Snapshot struct {
	Seq          uint64    // increases with every published snapshot
	Taken        time.Time // when it was built
	Cluster      ClusterInfo
	Connection   Connection
	Nodes        []NodeInfo       // Windows nodes first, then by name
	MachineSets  []MachineSetInfo // by name
	Secrets      SecretsInfo
	Mirrors      []MirrorInfo   // IDMS entries then ITMS entries, by object name then source
	BYOH         []BYOHInstance // valid entries of windows-instances
	BYOHProblems []string       // invalid entries of windows-instances, one sentence each
	// Resources says, per pane resource, whether it can be shown (absent API, forbidden, syncing).
	Resources map[Resource]ResourceState
}

// BYOHInstance is one entry of the windows-instances ConfigMap.
type BYOHInstance struct {
	Address string // IPv4 address or DNS name
	User    string
}

// Resource names a kind of object the watcher follows.
type Resource string

const (
	ResNodes          Resource = "nodes"
	ResMachineSets    Resource = "machinesets.machine.openshift.io"
	ResMachines       Resource = "machines.machine.openshift.io"
	ResSecrets        Resource = "secrets"                   // in the WMCO namespace
	ResUserData       Resource = "secrets/windows-user-data" // openshift-machine-api, watched by name
	ResPullSecret     Resource = "secrets/pull-secret"       // openshift-config, watched by name
	ResConfigMaps     Resource = "configmaps"
	ResIDMS           Resource = "imagedigestmirrorsets.config.openshift.io"
	ResITMS           Resource = "imagetagmirrorsets.config.openshift.io"
	ResInfrastructure Resource = "infrastructures.config.openshift.io"
	ResNetwork        Resource = "networks.config.openshift.io"
	ResProxy          Resource = "proxies.config.openshift.io"
	ResClusterVersion Resource = "clusterversions.config.openshift.io"
	ResCSV            Resource = "clusterserviceversions.operators.coreos.com"
)

// Availability of one resource.
type Availability int

const (
	Syncing      Availability = iota // initial list not finished yet
	Available                        // listed and watched
	NotInstalled                     // the API (CRD) does not exist on this cluster
	Forbidden                        // RBAC denies list or watch
	Failing                          // other errors (connection lost, server errors); retried with backoff
)

// ResourceState is how one resource is doing; Message is a sentence for the user when not Available.
type ResourceState struct {
	Availability Availability
	Message      string
	// Partial: still Syncing, but the rows that have arrived are in the snapshot (the first page of a
	// large list); Message says how many more are loading.
	Partial bool
}

// Connection is the state of the link to the API server.
type Connection struct {
	Connected bool
	Since     time.Time // when the current state began
	LastError string    // why the connection was lost, while reconnecting
}

// ClusterInfo feeds the header.
type ClusterInfo struct {
	Server            string // API server URL
	Context           string // kubeconfig context ("demo" for the demo cluster)
	Name              string // infrastructure name when known, else the context's cluster
	InfraID           string
	Platform          string // AWS, Azure, VSphere, GCP, Nutanix, BareMetal, None, ...
	KubernetesVersion string // e.g. v1.37.1
	OpenShiftVersion  string // ClusterVersion desired version, "" on plain Kubernetes
	WMCOVersion       string // installed operator version (CSV spec.version), "" when not installed
	WMCOPhase         string // CSV phase, e.g. Succeeded
	NetworkType       string // OVNKubernetes, OpenShiftSDN, ...
}

// NodeStatus summarises readiness and schedulability the way `oc get nodes` does.
type NodeStatus string

const (
	NodeReady    NodeStatus = "Ready"    // Ready=True
	NodeNotReady NodeStatus = "NotReady" // Ready=False: the kubelet reports a problem
	NodeUnknown  NodeStatus = "Unknown"  // Ready=Unknown: the kubelet stopped reporting
	NodeNoStatus NodeStatus = ""         // no Ready condition yet
)

// Word is the status as `oc get nodes` prints it: NotReady whether the kubelet reports a problem or stopped
// reporting (the reason is in the details and triage), Unknown only when there is no Ready condition at all,
// so a filter for "notready" finds every node that is not Ready.
func (s NodeStatus) Word() string {
	switch s {
	case NodeReady:
		return "Ready"
	case NodeNoStatus:
		return "Unknown"
	default:
		return "NotReady"
	}
}

// State says a node's readiness and schedulability in words, as messages report it ("NotReady, cordoned").
func (n NodeInfo) State() string {
	if n.Unschedulable {
		return n.Status.Word() + ", cordoned"
	}
	return n.Status.Word() + ", schedulable"
}

// NodeInfo is one node as the console shows it.
type NodeInfo struct {
	Name           string
	UID            string
	Status         NodeStatus
	Unschedulable  bool // cordoned: shown as "SchedulingDisabled"
	Windows        bool
	WindowsBuild   string // node.kubernetes.io/windows-build
	OSImage        string // status.nodeInfo.osImage
	KubeletVersion string
	Roles          []string
	BYOH           bool
	WMCOVersion    string // windowsmachineconfig.openshift.io/version annotation
	DesiredVersion string
	VersionDrift   bool // WMCO version annotation differs from the installed operator's version (a node not yet configured, without one, is not drift)
	// DriftPickedUp: the node drifted and its desired-version already names the operator's version, so
	// WMCO has taken it up; without it the operator has not got to the node yet.
	DriftPickedUp  bool
	RebootRequired bool
	Upgrading      bool
	InternalIP     string // first IPv4 InternalIP
	InternalDNS    string
	Machine        string // namespace/name of its Machine, from the machine.openshift.io/machine annotation
	HostKeyPinned  bool   // ssh-host-key annotation present
	BootID         string // status.nodeInfo.bootID: changes at every boot of the host
	Created        time.Time
	Conditions     []Condition
	Taints         []string // key=value:Effect
	// Capacity and Allocatable are the node's resources (cpu, memory, pods, ephemeral-storage, ...) as
	// quantities ("4", "16Gi"); allocatable is what is left for pods after the system's reservations.
	Capacity    map[string]string
	Allocatable map[string]string
	Labels      map[string]string
	Annotations map[string]string
}

// Condition is a node condition with its reason and since when.
type Condition struct {
	Type               string
	Status             string // True, False, Unknown
	Reason             string
	Message            string
	LastTransitionTime time.Time
	LastHeartbeatTime  time.Time
}

// MachineSetInfo is one MachineSet with its Machines.
type MachineSetInfo struct {
	Namespace string
	Name      string
	Desired   int32
	Current   int32
	Ready     int32
	Available int32
	Windows   bool   // template label machine.openshift.io/os-id: Windows
	Platform  string // from the providerSpec kind, else the cluster platform
	Created   time.Time
	Machines  []MachineInfo
	Labels    map[string]string
	Provider  ProviderSummary // what its template's providerSpec asks for
}

// ProviderSummary is what a MachineSet's providerSpec says about the machines it makes, whatever the
// platform ("" where the platform has no such thing).
type ProviderSummary struct {
	InstanceType   string // AWS instanceType, Azure vmSize, GCP machineType, vSphere/Nutanix CPUs and memory
	Zone           string
	Image          string // AMI ID, Azure image, GCP image, vSphere template, Nutanix image
	UserDataSecret string
}

// MachineInfo is one Machine of a MachineSet.
type MachineInfo struct {
	Name         string
	Phase        string // Provisioning, Provisioned, Running, Deleting, Failed, ...
	NodeName     string // status.nodeRef.name, "" before the node joins
	Windows      bool
	Created      time.Time
	ProviderID   string   // spec.providerID: the cloud's instance
	Addresses    []string // status.addresses as "Type address"
	ErrorReason  string   // status.errorReason: why the machine API gave up on it
	ErrorMessage string
}

// SecretsInfo describes the secrets WMCO needs without ever carrying their values.
type SecretsInfo struct {
	PrivateKey     KeyInfo
	UserData       UserDataInfo
	PullSecret     bool // openshift-config/pull-secret exists
	PullSecretHint string
	// PullRegistries are the registries the pull secret holds credentials for, sorted: their names only,
	// never a credential.
	PullRegistries []string
}

// Present counts the secrets WMCO needs that exist.
func (s SecretsInfo) Present() int {
	n := 0
	for _, ok := range []bool{s.PrivateKey.Present, s.UserData.Present, s.PullSecret} {
		if ok {
			n++
		}
	}
	return n
}

// HasCredentials says whether the pull secret holds credentials for an image reference's registry (host,
// or host/path: an auths entry for the host, or for a path the reference is under, as container runtimes
// match them).
func (s SecretsInfo) HasCredentials(ref string) bool {
	for _, r := range s.PullRegistries {
		if ref == r || strings.HasPrefix(ref, r+"/") {
			return true
		}
	}
	return false
}

// KeyInfo describes the cloud-private-key secret: key type, size and fingerprint only.
type KeyInfo struct {
	Present     bool
	Type        string // ssh-rsa, ssh-ed25519, ecdsa-sha2-nistp256, ...
	Bits        int
	Fingerprint string // SHA256:...
	PubKeyHash  string // WMCO's pub-key-hash of its public key, what a node it configured carries
	Problem     string // unparsable, passphrase-protected, missing key, ...
	Warning     string // weak key (RSA < 2048, DSA)
}

// UserDataInfo describes the windows-user-data secret.
type UserDataInfo struct {
	Present        bool
	KeyFingerprint string // of the authorized key found in the script
	MatchesKey     bool   // the script's public key belongs to cloud-private-key
	Problem        string // no key found in the script, ...
}

// MirrorInfo is one IDMS or ITMS entry.
type MirrorInfo struct {
	Kind    string // ImageDigestMirrorSet or ImageTagMirrorSet
	Object  string // object name
	Source  string
	Mirrors []string
	Policy  string // mirrorSourcePolicy: "" (AllowContactingSource), NeverContactSource
}

// WindowsNodes returns the Windows nodes of the snapshot.
func (s *Snapshot) WindowsNodes() []NodeInfo {
	var out []NodeInfo
	for _, n := range s.Nodes {
		if n.Windows {
			out = append(out, n)
		}
	}
	return out
}

// Node returns the node with that name.
func (s *Snapshot) Node(name string) (NodeInfo, bool) {
	for i := range s.Nodes { // by index: a NodeInfo is large, and a fleet has thousands
		if s.Nodes[i].Name == name {
			return s.Nodes[i], true
		}
	}
	return NodeInfo{}, false
}

// BYOHUser is the user windows-instances names for an address.
func (s *Snapshot) BYOHUser(addr string) (string, bool) {
	for _, b := range s.BYOH {
		if b.Address == addr {
			return b.User, true
		}
	}
	return "", false
}

// NodeByAddress names the node whose InternalIP or InternalDNS is addr.
func (s *Snapshot) NodeByAddress(addr string) (string, bool) {
	for i := range s.Nodes {
		if n := &s.Nodes[i]; n.InternalIP == addr || n.InternalDNS == addr {
			return n.Name, true
		}
	}
	return "", false
}
