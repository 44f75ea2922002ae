// Package demo is the built-in demo cluster: client-go fake clientsets seeded with a realistic OpenShift
// cluster on AWS (Linux control plane and workers, Windows nodes from two MachineSets, a BYOH node, mirror
// sets, WMCO's secrets) that keeps changing while you watch. It needs no cluster, network or credentials.
package demo

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"sync"
	"time"

	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	machinefake "github.com/openshift/client-go/machine/clientset/versioned/fake"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote/sshkey"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/machineapi"
	"github.com/wmcon/wmcon/sim/olm"
	"github.com/wmcon/wmcon/sim/ovn"
	"github.com/wmcon/wmcon/sim/scheduler"
	"github.com/wmcon/wmcon/sim/windows"
)

// Options tune the demo; the zero value is the interactive demo.
type Options struct {
	// Step is the pause between the stages of the joining node (Machine provisioning → node Ready).
	// Default 4s; tests use a few milliseconds.
	Step time.Duration
	Now  func() time.Time
	// RebootDowntime is how long a simulated host stays down when restarted (default 6s).
	RebootDowntime time.Duration
	// LogInterval is how often simulated services write log lines (default 1s).
	LogInterval time.Duration
	// Fresh is a cluster where Windows was never set up (wmcon --demo=fresh): the Linux control plane and
	// workers with their MachineSet, an OLM catalog offering WMCO (the OLM stand-in installs it), and bare
	// Windows Servers for BYOH (BareHosts) — no Windows node, MachineSet or Machine, no operator, no
	// cloud-private-key, no windows-user-data, no windows-instances.
	Fresh bool
	// BYOHKeyFile is the private key the fresh demo's bare hosts were prepared with (their administrators'
	// authorized key): created (ed25519, 0600) when missing, reused otherwise, so separate wmcon runs can
	// give it with --key. Default: $XDG_CACHE_HOME/wmcon/demo/byoh_ed25519 (see DefaultBYOHKeyFile).
	BYOHKeyFile string
}

// Cluster is a running demo cluster.
type Cluster struct {
	Clients cluster.Clients
	Target  cluster.Target
	Nodes   []WindowsNode
	// PrivateKey is the demo's cloud-private-key; KeyPEM the same in PEM form, as the secret holds it.
	PrivateKey ssh.Signer
	KeyPEM     []byte
	// Hosts are the simulated Windows hosts, by node name.
	Hosts map[string]*windows.Host
	// Bare is the unconfigured Windows Server at BareHostIP, for wmcon to configure; the fresh demo has
	// more (BareHosts lists them all).
	Bare     *windows.Host
	bare     map[string]*windows.Host // address → unconfigured host, Bare included
	kubelets *kubelet.Kubelets
	olm      *olm.Sim // the OLM stand-in of the fresh demo (nil otherwise)
	// Machines is the fresh demo's machine API stand-in (nil otherwise): Machines of the Windows
	// MachineSets you create become simulated Windows Servers on FreshMachineIPs.
	Machines *machineapi.Controller
	grownMu  sync.Mutex
	grown    map[string]*windows.Host // address → the instance of a Machine a scaled MachineSet added (default demo)
	// ControlPlane stands in for the API server's authentication and the controller manager's CSR signer
	// for kubelets that join the demo (KubeletProgram); it approves nothing.
	ControlPlane *kubelet.DemoControlPlane

	payload     operatorPayload // the fresh demo operator's
	opLog       operatorLog     // what the operator's pod logs
	exporterTLS exporterTLS     // WMCO's TLS secret, windows_exporter's certificate on the configured hosts

	kube    *kubefake.Clientset
	machine *machinefake.Clientset
	opts    Options
}

// New seeds the demo cluster and starts its simulated Windows hosts; Run makes it change over time, and
// Close stops the hosts.
func New(opts Options) (*Cluster, error) {
	opts.applyDefaults()
	now := opts.Now()
	keyPEM, signer, err := newKey()
	if opts.Fresh {
		keyPEM, signer, err = byohKey(opts.BYOHKeyFile)
	}
	if err != nil {
		return nil, err
	}
	c := &Cluster{Nodes: windowsNodes(), PrivateKey: signer, KeyPEM: keyPEM, opts: opts,
		Target: cluster.Target{Server: "https://api.demo.example.com:6443 (demo)", Context: "demo"}}
	kubeObjs := append(kubeObjects(c.Nodes, keyPEM, signer, now), workloads(c.Nodes, now)...)
	machineObjs := machineObjects(c.Nodes, now)
	dynObjs := append([]runtime.Object{operatorCSV(now), operatorNetwork(now)}, operatorOLMObjects(now)...)
	if opts.Fresh {
		c.Nodes = nil
		kubeObjs, machineObjs, dynObjs = freshKubeObjects(now), freshMachineObjects(now), []runtime.Object{operatorNetwork(now)}
	}

	if !opts.Fresh {
		kubeObjs = append(kubeObjs, operatorPod(now))
		if c.exporterTLS, err = newExporterTLS(); err != nil {
			return nil, err
		}
		wmco, err := wmcoObjects(c.exporterTLS, now)
		if err != nil {
			return nil, err
		}
		kubeObjs = append(kubeObjs, wmco...)
	}
	c.kube = kubefake.NewClientset(kubeObjs...)
	stampCreates(c.kube, c.stamp)
	addAPIServerBehaviour(c.kube)
	if !opts.Fresh {
		c.opLog.nodes = windowsNodes()
	}
	serveOperatorLog(c.kube, &c.opLog, opts.Now)
	answerAccessReviews(c.kube)
	c.machine = machinefake.NewClientset(machineObjs...)
	stampCreates(c.machine, c.stamp)
	idms, itms := mirrorSets(now)
	conf := configfake.NewClientset(infrastructure(now), clusterVersion(now), network(now), idms, itms, proxy(now))
	scheme := runtime.NewScheme()
	listKinds := map[schema.GroupVersionResource]string{OperatorNetworkResource: "NetworkList"}
	for gvr, kind := range olm.ListKinds { // OLM's objects, so the operator commands work on the demo
		listKinds[gvr] = kind
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds, dynObjs...)
	c.Clients = cluster.Clients{Kube: c.kube, Machine: plainListMachine{c.machine}, Config: plainListConfig{conf}, Dynamic: dyn,
		Discovery: serveDiscovery(c.kube, listKinds)}
	if err := c.startControlPlane(now); err != nil {
		return nil, err
	}
	if opts.Fresh {
		if err := c.seedCatalog(); err != nil {
			return nil, err
		}
		if c.Machines, err = machineapi.New(c.kube, c.machine, machineapi.Options{Addresses: FreshMachineIPs(), Platform: "AWS",
			Programs: c.hostPrograms(), RebootDowntime: opts.RebootDowntime,
			LogInterval: opts.LogInterval}); err != nil {
			return nil, err
		}
	}
	if err := c.startHosts(); err != nil {
		return nil, err
	}
	if err := c.startWorkloads(context.Background()); err != nil { // the pods' containers (podload.go)
		c.Close()
		return nil, err
	}
	c.kubelets = kubelet.New(c.kube, c.readyHosts(), kubelet.Options{Grace: 4 * time.Second, Lifecycle: true})
	return c, nil
}

// stamp is the creation time the demo's API server gives a new object.
func (c *Cluster) stamp() metav1.Time { return metav1.NewTime(c.opts.Now()) }

// readyHosts are the hosts whose kubelets report: every node but the one still joining.
func (c *Cluster) readyHosts() map[string]kubelet.Host {
	out := map[string]kubelet.Host{}
	for _, w := range c.Nodes {
		if !w.Joining {
			out[NodeName(w.IP)] = c.Hosts[NodeName(w.IP)]
		}
	}
	return out
}

func newKey() ([]byte, ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate demo key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "wmcon demo")
	if err != nil {
		return nil, nil, fmt.Errorf("encode demo key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, fmt.Errorf("demo signer: %w", err)
	}
	return pem.EncodeToMemory(block), signer, nil
}

func kubeObjects(nodes []WindowsNode, keyPEM []byte, signer ssh.Signer, now time.Time) []runtime.Object {
	day := 24 * time.Hour
	objs := []runtime.Object{
		&corev1.Namespace{ObjectMeta: meta(config.OperatorNamespace, "", 9*day, now)},
		&corev1.Namespace{ObjectMeta: meta(config.MachineAPINamespace, "", 40*day, now)},
		&corev1.Namespace{ObjectMeta: meta(config.OpenShiftConfigNS, "", 40*day, now)},
	}
	for i := 0; i < 3; i++ {
		objs = append(objs, linuxNode(fmt.Sprintf("ip-127-0-1-%d.ec2.internal", 10+i), fmt.Sprintf("127.0.1.%d", 10+i), "master", 40*day, now))
		objs = append(objs, linuxNode(fmt.Sprintf("ip-127-0-1-%d.ec2.internal", 20+i), fmt.Sprintf("127.0.1.%d", 20+i), "worker", 40*day-time.Hour, now))
	}
	for i, w := range nodes {
		if w.Joining {
			continue
		}
		objs = append(objs, configuredBy(windowsNode(w, time.Duration(20-3*i)*day, now), w, signer))
	}
	authorized := string(ssh.MarshalAuthorizedKey(signer.PublicKey()))
	objs = append(objs,
		secret(config.PrivateKeySecret, config.OperatorNamespace, config.PrivateKeySecretKey, keyPEM, corev1.SecretTypeOpaque, now),
		secret(config.UserDataSecret, config.MachineAPINamespace, config.UserDataSecretKey, userdata.Script(authorized, "AWS"), corev1.SecretTypeOpaque, now),
		secret(config.PullSecret, config.OpenShiftConfigNS, config.PullSecretKey, pullSecretJSON(), corev1.SecretTypeDockerConfigJson, now),
		byohConfigMap(nodes, now),
		trustedCA(now),
		operatorDeployment(now),
	)
	return objs
}

func machineObjects(nodes []WindowsNode, now time.Time) []runtime.Object {
	day := 24 * time.Hour
	linuxSet := InfraID + "-worker-" + zoneA
	objs := []runtime.Object{
		machineSet(machineSetName(zoneA), zoneA, 2, true, 20*day, now),
		machineSet(machineSetName(zoneB), zoneB, 2, true, 14*day, now),
		machineSet(linuxSet, zoneA, 3, false, 40*day, now),
	}
	for i := 0; i < 3; i++ {
		node := fmt.Sprintf("ip-127-0-1-%d.ec2.internal", 20+i)
		objs = append(objs, machine(fmt.Sprintf("%s-%c%c%d", linuxSet, 'a'+i, 'k'+i, 4+i), linuxSet, false, "Running", node, 40*day, now))
	}
	for _, w := range nodes {
		switch {
		case w.BYOH, w.Standalone:
		case w.Joining:
			objs = append(objs, machine(w.Machine, w.MachineSet, true, "Provisioning", "", time.Minute, now))
		default:
			objs = append(objs, machine(w.Machine, w.MachineSet, true, "Running", NodeName(w.IP), 14*day, now))
		}
	}
	return objs
}

// Run plays the demo's live changes until ctx ends: the joining Windows Machine provisions, its node
// registers NotReady, and WMCO finishes configuring it, so every pane visibly updates.
func (c *Cluster) Run(ctx context.Context) {
	go c.varyLoad(ctx) // the hosts' CPU and network move, so the console's sparklines do
	go c.kubelets.Run(ctx)
	go c.ControlPlane.Run(ctx)
	go scheduler.New(c.kube).Run(ctx, time.Second)                                             // binds pods created without a node, as kube-scheduler would
	go c.keepReplicas(ctx, time.Second)                                                        // an evicted workload pod is replaced, as by its ReplicaSet
	go c.cloudController().Run(ctx, max(c.opts.Step/4, 200*time.Millisecond))                  // AWS's: initializes the nodes it finds
	go (&ovn.SubnetAllocator{Kube: c.kube}).Run(ctx, max(c.opts.Step/4, 200*time.Millisecond)) // hybrid overlay subnets
	if c.olm != nil {
		go c.olm.Run(ctx, max(c.opts.Step/2, 10*time.Millisecond))
	}
	if c.Machines == nil {
		go c.syncMachineSets(ctx) // the machine API's counts follow the demo's Machines and nodes
	}
	if c.Machines != nil {
		go c.Machines.Run(ctx, max(c.opts.Step/4, 10*time.Millisecond))
		go c.operator().Run(ctx, max(c.opts.Step/4, 10*time.Millisecond))
		go c.startOperatorPod(ctx)
	}
	for _, w := range c.Nodes {
		if w.Joining {
			c.join(ctx, w)
		}
	}
}

// syncMachineSets reports the MachineSets' replicas as their controller would, every second, until ctx
// ends: a Machine that provisions or a node that turns NotReady changes the counts.
func (c *Cluster) syncMachineSets(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		c.growMachineSets(ctx)
		_ = machineapi.SyncStatuses(ctx, c.kube, c.machine) // the demo only stops updating the counts
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *Cluster) join(ctx context.Context, w WindowsNode) {
	steps := []func(context.Context, WindowsNode) error{
		func(ctx context.Context, w WindowsNode) error { return c.setPhase(ctx, w, "Provisioned", "") },
		func(ctx context.Context, w WindowsNode) error { return c.registerNode(ctx, w) },
		func(ctx context.Context, w WindowsNode) error { return c.setPhase(ctx, w, "Running", NodeName(w.IP)) },
		func(ctx context.Context, w WindowsNode) error { return c.nodeConfigured(ctx, w) },
	}
	for _, step := range steps {
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.opts.Step):
		}
		if err := step(ctx, w); err != nil {
			return // the demo only stops changing; nothing else depends on it
		}
	}
}

func (c *Cluster) setPhase(ctx context.Context, w WindowsNode, phase, node string) error {
	ms := c.machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	m, err := ms.Get(ctx, w.Machine, metav1.GetOptions{})
	if err != nil {
		return err
	}
	m.Status.Phase = ptr.To(phase)
	if node != "" {
		m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node}
	}
	_, err = ms.UpdateStatus(ctx, m, metav1.UpdateOptions{})
	return err
}

// configuredBy annotates a node WMCO configured with the hash of the key it used (pub-key-hash), as WMCO
// does; a standalone node (wmcon configured it without WMCO) has none.
func configuredBy(n *corev1.Node, w WindowsNode, key ssh.Signer) *corev1.Node {
	if !w.Standalone {
		n.Annotations[config.PubKeyHashAnnotation] = sshkey.PubKeyHash(key.PublicKey())
	}
	return n
}

// registerNode adds the new node as the kubelet would: NotReady until WMCO has configured its services.
func (c *Cluster) registerNode(ctx context.Context, w WindowsNode) error {
	n := windowsNode(w, 0, c.opts.Now())
	delete(n.Annotations, config.VersionAnnotation)
	n.Status.Conditions[0] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
		Message: "container runtime network not ready: NetworkReady=false", LastHeartbeatTime: metav1.NewTime(c.opts.Now()),
		LastTransitionTime: metav1.NewTime(c.opts.Now())}
	_, err := c.kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	return err
}

func (c *Cluster) nodeConfigured(ctx context.Context, w WindowsNode) error {
	nodes := c.kube.CoreV1().Nodes()
	n, err := nodes.Get(ctx, NodeName(w.IP), metav1.GetOptions{})
	if err != nil {
		return err
	}
	n.Annotations[config.VersionAnnotation] = w.Version
	n = configuredBy(n, w, c.PrivateKey)
	if n, err = nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		return err
	}
	n.Status.Conditions = conditions(true, c.opts.Now())
	n.Status.Conditions[0].LastTransitionTime = metav1.NewTime(c.opts.Now())
	if _, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return err
	}
	c.kubelets.Add(n.Name, c.nodeHost(n.Name)) // from now on its kubelet reports like the others'
	return nil
}

// The fake clientsets of openshift/client-go cannot stream lists (client-go's watch-list); these wrappers
// tell the reflector so, as client-go's own fakes do, and it falls back to list + watch.
type plainListMachine struct{ *machinefake.Clientset }

func (plainListMachine) IsWatchListSemanticsUnSupported() bool { return true }

type plainListConfig struct{ *configfake.Clientset }

func (plainListConfig) IsWatchListSemanticsUnSupported() bool { return true }

// byohConfigMap is windows-instances, WMCO's list of Bring-Your-Own-Host instances.
func byohConfigMap(nodes []WindowsNode, now time.Time) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: meta(config.BYOHConfigMap, config.OperatorNamespace, 11*24*time.Hour, now), Data: map[string]string{}}
	for _, w := range nodes {
		if w.BYOH {
			cm.Data[w.IP] = "username=" + config.DefaultSSHUser
		}
	}
	return cm
}
