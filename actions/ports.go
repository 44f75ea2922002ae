package actions

import (
	"context"
	"errors"
	"time"

	olm "github.com/operator-framework/api/pkg/operators/v1alpha1"

	configv1 "github.com/openshift/api/config/v1"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"

	corev1 "k8s.io/api/core/v1"

	nodev1 "k8s.io/api/node/v1"

	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/remote"
)

// The ports: what the actions need from the cluster, as small interfaces the cluster package's types have
// (each asserted below its interface). Backends holds them; the feature packages call them; the session
// fills them with cluster's implementations, and tests with their own.

// ConfigureCluster is what configuring a node needs from the cluster; cluster.Ops has it.
type ConfigureCluster interface {
	NodeOps
	NodeExists(ctx context.Context, name string) (bool, error)
	WaitNode(ctx context.Context, name string, ok func(model.NodeInfo) bool) (model.NodeInfo, error)
	ApproveCSR(ctx context.Context, p cluster.CSRPolicy, kind string, report func(cluster.CSRDecision)) (cluster.CSRRef, error)
	ApplyNodeMeta(ctx context.Context, name string, m cluster.NodeMeta) (bool, error)
	PinnedHostKey(ctx context.Context, addr string) (map[string]string, error)
	ServerTime(ctx context.Context) (time.Time, time.Duration, error)
	// NodeObject is the Node as the API server has it: the contract's node variables are read from it.
	NodeObject(ctx context.Context, name string) (*corev1.Node, error)
}

var _ ConfigureCluster = (*cluster.Ops)(nil)

// NodeConfigCluster is what configuring and deconfiguring need from the cluster; cluster.Ops has it.
type NodeConfigCluster interface {
	ConfigureCluster
	OperatorWatcher
	DeleteNode(ctx context.Context, name string) (bool, error)
	ReadNodeFacts(ctx context.Context, opts cluster.NodeFactsOptions) (cluster.NodeFacts, error)
	WMCOOwner(ctx context.Context, addr, node string) (string, error)
	WindowsMachineAt(ctx context.Context, addr string) (string, error)
	SetUpgrading(ctx context.Context, name string, on bool) error
}

var _ NodeConfigCluster = (*cluster.Ops)(nil)

// ConfigureBackends are what the configure and deconfigure requests need beyond Backends; the session
// fills them.
type ConfigureBackends struct {
	Cluster NodeConfigCluster
	// HostAt reaches a host that has no Node yet (request.Configure's Address and User).
	HostAt func(ctx context.Context, addr, user string) (remote.Host, error)
	// Payload loads and verifies the payload: dir, else image, else the default (the installed operator's
	// image, or the demo's synthetic payload).
	Payload func(ctx context.Context, dir, image string) (*payload.Payload, error)
	// PubKeyHash is WMCO's pub-key-hash of the key wmcon logs in with, "" when unknown.
	PubKeyHash func(ctx context.Context) string
	// Username is a BYOH node's username annotation for user, as WMCO writes it (encrypted with the
	// private key wmcon logs in with); "" when it cannot be made. Nil: not annotated.
	Username func(ctx context.Context, user string) string
	// Version goes into the node's version annotation: the installed operator's version, else "wmcon-…"
	// (then replaced by the payload's, StandaloneVersion).
	Version func(ctx context.Context) string
	// ReadOnly refuses every change before anything is read (--read-only).
	ReadOnly bool
}

// NodeOps is what cordon, uncordon and drain need from the cluster; cluster.Ops has it.
type NodeOps interface {
	Node(ctx context.Context, name string) (model.NodeInfo, error)
	Cordon(ctx context.Context, name string) (bool, error)
	Uncordon(ctx context.Context, name string) (bool, error)
	Drain(ctx context.Context, name string, opts cluster.DrainOptions, ev func(cluster.DrainEvent)) error
}

var _ NodeOps = (*cluster.Ops)(nil)

// OperatorOLM is what installing WMCO needs from the cluster; cluster.OLM has it.
type OperatorOLM interface {
	State(ctx context.Context) (cluster.OperatorState, error)
	CheckCatalog(ctx context.Context, opts cluster.InstallOptions) (cluster.CatalogOffer, error)
	EnsureNamespace(ctx context.Context) (bool, error)
	EnsureOperatorGroup(ctx context.Context) (bool, error)
	EnsureSubscription(ctx context.Context, opts cluster.InstallOptions) (*olm.Subscription, bool, error)
	ApproveInstallPlan(ctx context.Context, name string) error
	Uninstall(ctx context.Context, st cluster.OperatorState) ([]string, error)
}

var _ OperatorOLM = (*cluster.OLM)(nil)

// NodeCluster is what the node actions (cordon, drain, reboot, ...) need from the cluster: node reads and
// writes, waiting for a node, the platform; cluster.Ops has it.
type NodeCluster interface {
	NodeOps
	// WaitNode waits (watching) until ok accepts the node; it ends with ctx.
	WaitNode(ctx context.Context, name string, ok func(model.NodeInfo) bool) (model.NodeInfo, error)
	// Platform is the cluster's platform type ("AWS", ...), "" when unknown.
	Platform(ctx context.Context) (string, error)
}

var _ NodeCluster = (*cluster.Ops)(nil)

// KeyOps is what installing an SSH key needs; cluster.Keys has it.
type KeyOps interface {
	State(ctx context.Context) (cluster.KeyState, error)
	Consequences(ctx context.Context, pub ssh.PublicKey) (cluster.KeyChange, error)
	ApplyKey(ctx context.Context, pemBytes []byte) (bool, error)
	ApplyUserData(ctx context.Context, pub ssh.PublicKey) (cluster.UserDataWrite, error)
	MarkStandalone(ctx context.Context) error
}

var _ KeyOps = (*cluster.Keys)(nil)

// BYOHEditor is what BYOH edits need; cluster.BYOHConfigMap has it.
type BYOHEditor interface {
	Add(ctx context.Context, address, user string) error
	Remove(ctx context.Context, address string) error
	// HasEntry is nil when address is an entry, else an error naming the entries there are.
	HasEntry(ctx context.Context, address string) error
}

// MachineSetOps is what applying, scaling and deleting MachineSets needs; cluster.MachineSets has it.
type MachineSetOps interface {
	Get(ctx context.Context, name string) (*machinev1beta1.MachineSet, error)
	Create(ctx context.Context, ms *machinev1beta1.MachineSet) error
	Replace(ctx context.Context, cur, ms *machinev1beta1.MachineSet) error
	Scale(ctx context.Context, name string, replicas int32) (int32, error)
	Delete(ctx context.Context, name string) error
	NodesOf(ctx context.Context, name string) ([]string, error)
}

// SetupCluster is what the guided setup reads and creates beyond the cluster-side setup actions;
// cluster.SetupOps has it.
type SetupCluster interface {
	SetupFacts(ctx context.Context) (cluster.SetupFacts, error)
	RuntimeClass(ctx context.Context, name string) (*nodev1.RuntimeClass, error)
	CreateRuntimeClass(ctx context.Context, rc *nodev1.RuntimeClass) error
	CreatePod(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error)
	Pod(ctx context.Context, ns, name string) (*corev1.Pod, error)
	DeletePod(ctx context.Context, ns, name string) error
	PodEvents(ctx context.Context, ns, name string) ([]cluster.EventInfo, error)
}

var _ SetupCluster = (*cluster.SetupOps)(nil)

// KeyReader reads the key secrets; cluster.Keys has it.
type KeyReader interface {
	State(ctx context.Context) (cluster.KeyState, error)
}

// SetupBackends are what the cluster-side setup actions change: MachineSets and the BYOH ConfigMap, and for
// the guided setup (setup_*.go) the operator's install, the key, the setup's reads and workload objects,
// the doctor and the operator's progress.
type SetupBackends struct {
	MachineSets MachineSetBackend
	BYOH        BYOHEditor
	OLM         OperatorOLM     // cluster.OLM
	Keys        KeyOps          // cluster.Keys
	Ops         SetupCluster    // cluster.SetupOps
	Watch       OperatorWatcher // cluster.Ops
	Doctor      func(ctx context.Context) (diagnosis.Report, error)
	// ReadOnly is --read-only: what would change something local first (a generated key's files) refuses.
	ReadOnly bool
	// KeyInstalled is called once a key was installed, so the SSH logins that follow in this run use it
	// (the session hands cloud-private-key to its pool unless --ssh-key was given); nil: nothing to do.
	KeyInstalled func(ctx context.Context)
}

// SetupActions are the cluster-side setup actions' backends (Setup), or an error saying they are not
// available here.
func (b Backends) SetupActions() (*SetupBackends, error) {
	if b.Setup == nil {
		return nil, errors.New("cluster setup actions are not available here: no cluster connection")
	}
	return b.Setup, nil
}

// GuidedSetup are SetupActions with everything the guided setup and the Operator view read (the operator,
// the key, the setup's facts, the doctor), or an error saying they are not available here.
func (b Backends) GuidedSetup() (*SetupBackends, error) {
	s, err := b.SetupActions()
	if err != nil {
		return nil, err
	}
	if s.Ops == nil || s.OLM == nil || s.Keys == nil || s.Doctor == nil {
		return nil, errors.New("the guided setup is not available here: no cluster connection")
	}
	return s, nil
}

// MachineSetBackend reads what generating a MachineSet needs and applies, scales and deletes them;
// cluster.MachineSets has it.
type MachineSetBackend interface {
	MachineSetOps
	Inputs(ctx context.Context) (*configv1.Infrastructure, []machinev1beta1.Machine, error)
}

var _ MachineSetBackend = (*cluster.MachineSets)(nil)

// OperatorWatcher reads where the operator stands with a host; cluster.Ops has it.
type OperatorWatcher interface {
	OperatorProgress(ctx context.Context, addr, node string) (cluster.OperatorProgress, error)
	OperatorLog(ctx context.Context, opts cluster.OperatorLogOptions) ([]cluster.OperatorLogLine, error)
}

var _ OperatorWatcher = (*cluster.Ops)(nil)
