package operator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/nodeconfig/hoststep"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/remote/sshkey"
	"github.com/wmcon/wmcon/sim/windows"
)

// NodeOptions turn on the stand-in's node controllers, WMCO's Windows Machine and BYOH controllers: once
// the operator is installed and cloud-private-key holds a usable key, every provisioned Windows Machine
// and every windows-instances host whose node is not a Ready node carrying the operator's version is
// configured over SSH with that key — by wmcon's own configuration engine (configure.Configure), which
// does what WMCO does on a host: payload, configuration files, services, the kubelet's CSRs approved, the
// node labelled and annotated with the operator's version. A host the key does not open, or whose
// services fail, is not configured: the failure is logged and retried, as WMCO requeues.
type NodeOptions struct {
	// Host is the simulated host at an address (a Machine's InternalIP or a windows-instances entry): where
	// its SSH server listens and its host key, which is checked. nil when no host is there (retried).
	Host func(addr string) *windows.Host
	// Payload is what the operator's image carries for the hosts.
	Payload func(ctx context.Context) (*payload.Payload, error)
	// CSRTimeout and ReadyTimeout bound each configuration's waits (the engine's defaults when 0).
	CSRTimeout, ReadyTimeout time.Duration
	// Retry is how long a failed host waits before it is tried again (default 10s).
	Retry time.Duration
	// Log, when set, gets the operator's log lines about the hosts it configures (WMCO's log, in words).
	Log func(line string)
}

// nodeControllers are the node controllers' state: which hosts are being configured and which failed when.
type nodeControllers struct {
	mu     sync.Mutex
	busy   map[string]bool      // address → a configuration is running
	failed map[string]time.Time // address → when its last configuration failed
	wg     sync.WaitGroup
	// byohProblems are the windows-instances problems last logged ("" = none).
	byohProblems string
}

// target is a host the operator owns: a Windows Machine's instance or a windows-instances entry.
type target struct {
	addr, user string
	owner      string // "Machine openshift-machine-api/x" or "windows-instances"
	byoh       bool
}

// reconcileNodes starts a configuration for each owned host that needs one and is not being configured.
func (o *Operator) reconcileNodes(ctx context.Context, keyPEM []byte, version string) error {
	targets, err := o.targets(ctx)
	if err != nil {
		return err
	}
	nodes, err := o.Clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("operatorsim: list nodes: %w", err)
	}
	for _, t := range targets {
		if configured(nodes.Items, t.addr, version) || !o.claim(t.addr) {
			continue
		}
		o.nodes.wg.Add(1)
		go func() {
			defer o.nodes.wg.Done()
			o.configure(ctx, t, keyPEM, version)
		}()
	}
	return nil
}

// targets are the hosts the operator owns, Machines first, each once.
func (o *Operator) targets(ctx context.Context) ([]target, error) {
	var out []target
	ms, err := o.Clients.Machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx,
		metav1.ListOptions{LabelSelector: config.MachineOSIDLabel + "=" + config.WindowsOSID})
	if err != nil {
		return nil, fmt.Errorf("operatorsim: list Windows Machines: %w", err)
	}
	for i := range ms.Items {
		if addr := provisioned(&ms.Items[i]); addr != "" {
			out = append(out, target{addr: addr, user: remote.DefaultUser(o.Platform),
				owner: "Machine " + config.MachineAPINamespace + "/" + ms.Items[i].Name})
		}
	}
	cm, err := o.Clients.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("operatorsim: read %s: %w", config.BYOHConfigMap, err)
	}
	if err == nil {
		hosts, problems := cluster.ParseBYOH(cm.Data)
		if o.byohStalled(problems) {
			return out, nil // WMCO's ConfigMap controller fails on the whole ConfigMap: no BYOH host is configured
		}
		sort.Slice(hosts, func(i, j int) bool { return hosts[i].Address < hosts[j].Address })
		for _, h := range hosts {
			out = append(out, target{addr: h.Address, user: h.User, owner: config.BYOHConfigMap, byoh: true})
		}
	}
	return out, nil
}

// byohStalled reports whether windows-instances has an invalid entry, and says so in the operator's log once
// each time the problems change: WMCO's ConfigMap controller parses the whole ConfigMap before it configures
// any host, so one bad entry stops every BYOH host (Machines are another controller's, and go on).
func (o *Operator) byohStalled(problems []string) bool {
	text := strings.Join(problems, "; ")
	o.nodes.mu.Lock()
	changed := text != o.nodes.byohProblems
	o.nodes.byohProblems = text
	o.nodes.mu.Unlock()
	if len(problems) == 0 {
		return false
	}
	if changed {
		o.logf(target{owner: config.BYOHConfigMap, byoh: true}, "error parsing "+config.BYOHConfigMap+
			", no instance is configured until it is fixed: "+text)
	}
	return true
}

// provisioned is the InternalIP of a Machine whose instance is up (phase Provisioned or Running), or "".
func provisioned(m *machinev1beta1.Machine) string {
	if m.DeletionTimestamp != nil || m.Status.Phase == nil {
		return ""
	}
	if p := *m.Status.Phase; p != "Provisioned" && p != "Running" {
		return ""
	}
	for _, a := range m.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && net.ParseIP(a.Address).To4() != nil {
			return a.Address
		}
	}
	return ""
}

// configured says whether the node at addr is Ready and carries the operator's version: nothing to do.
func configured(nodes []corev1.Node, addr, version string) bool {
	for i := range nodes {
		if n := cluster.NodeInfoFrom(&nodes[i], ""); n.InternalIP == addr {
			return n.WMCOVersion == version && n.Status == model.NodeReady
		}
	}
	return false
}

// claim marks addr busy unless it is, or failed less than Retry ago.
func (o *Operator) claim(addr string) bool {
	retry := o.Nodes.Retry
	if retry <= 0 {
		retry = 10 * time.Second
	}
	o.nodes.mu.Lock()
	defer o.nodes.mu.Unlock()
	if o.nodes.busy == nil {
		o.nodes.busy, o.nodes.failed = map[string]bool{}, map[string]time.Time{}
	}
	if o.nodes.busy[addr] || time.Since(o.nodes.failed[addr]) < retry {
		return false
	}
	o.nodes.busy[addr] = true
	return true
}

// configure runs the configuration engine on one host and records how it ended.
func (o *Operator) configure(ctx context.Context, t target, keyPEM []byte, version string) {
	o.logf(t, "configuring the instance")
	err := o.configureHost(ctx, t, keyPEM, version)
	o.nodes.mu.Lock()
	delete(o.nodes.busy, t.addr)
	if err != nil {
		o.nodes.failed[t.addr] = time.Now()
	} else {
		delete(o.nodes.failed, t.addr)
	}
	o.nodes.mu.Unlock()
	switch {
	case err != nil && ctx.Err() == nil:
		o.logf(t, "error configuring the instance, will retry: "+err.Error())
		if o.OnError != nil {
			o.OnError(err)
		}
	case err == nil:
		o.logf(t, "instance has been configured as a worker node, version "+version)
	}
}

func (o *Operator) configureHost(ctx context.Context, t target, keyPEM []byte, version string) error {
	h, pool, err := o.dial(t, keyPEM)
	if err != nil {
		return err
	}
	defer pool.Close()
	hn, err := h.Hostname(ctx)
	if err != nil {
		return fmt.Errorf("reach %s: %w", t.addr, err)
	}
	ops := cluster.NewOps(o.Clients)
	// The stand-in is WMCO: the host follows its published contract, as WMCO's node daemon does.
	nf, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{Version: version, OperatorContract: true})
	if err != nil {
		return err
	}
	data, err := nf.Facts.ServicesContract()
	if err != nil {
		return err
	}
	// The node's name and the kubelet's address come from the host, as WMCO's pre-scripts give them.
	host, err := hoststep.PrepareHost(ctx, h, data, nil, t.addr, t.byoh, hoststep.Options{ServiceNetwork: nf.Facts.ServiceNetwork})
	if err != nil {
		return err
	}
	name := host.NodeName
	p, err := o.Nodes.Payload(ctx)
	if err != nil {
		return fmt.Errorf("the operator's payload: %w", err)
	}
	signer, err := sshkey.Parse(keyPEM, nil)
	if err != nil {
		return err
	}
	req := configure.ConfigureRequest{Facts: nf.Facts, BootstrapIdentity: nf.BootstrapIdentity,
		Host:      host,
		HostNames: []string{name, strings.ToLower(strings.TrimSpace(hn))}, Payload: p.NodeFiles(), PubKeyHash: sshkey.PubKeyHash(signer.PublicKey()),
		CSRTimeout: o.Nodes.CSRTimeout, ReadyTimeout: o.Nodes.ReadyTimeout}
	if t.byoh {
		// WMCO keeps the user it logs in as on a BYOH node in an annotation, encrypted with cloud-private-key
		// (cluster.EncryptUsername), to log in again when it deconfigures the node.
		if req.Username, err = cluster.EncryptUsername(t.user, keyPEM); err != nil {
			return fmt.Errorf("unable to encrypt username for instance %s: %w", t.addr, err)
		}
	}
	if _, err = configure.Configure(ctx, ops, h, req, event.EmitFunc(func(e event.Event) { o.logEvent(t, name, e) })); err != nil {
		return err
	}
	// WMCO then runs its node daemon on the host, which the engine leaves to the operator.
	if sim := o.Nodes.Host(t.addr); sim != nil {
		return sim.InstallWICD()
	}
	return nil
}

// dial logs in to the host with cloud-private-key, checking the simulated host's own host key.
// The pool is the configuration's own, closed when it ends.
func (o *Operator) dial(t target, keyPEM []byte) (remote.Host, *remote.Pool, error) {
	sim := o.Nodes.Host(t.addr)
	if sim == nil {
		return nil, nil, fmt.Errorf("no instance answers at %s yet", t.addr)
	}
	pool, err := remote.NewPool(remote.Config{Auth: remote.Auth{KeyPEM: keyPEM, KeyPEMName: config.PrivateKeySecret},
		User: t.user, HostKeys: knownKey{sim.HostKey()}})
	if err != nil {
		return nil, nil, err
	}
	h, err := pool.Host(remote.Target{Addr: sim.Addr(), User: t.user, Platform: o.Platform})
	if err != nil {
		_ = pool.Close()
		return nil, nil, err
	}
	return h, pool, nil
}

// knownKey is a host key store that knows one host's key: the stand-in never trusts a key on first use.
type knownKey struct{ key ssh.PublicKey }

func (k knownKey) Lookup(context.Context, string) (ssh.PublicKey, bool, error) {
	return k.key, true, nil
}
func (k knownKey) Pin(context.Context, string, ssh.PublicKey) error {
	return errors.New("operatorsim: the host key is known, never pinned")
}

// logEvent turns the engine's step events into the operator's log lines.
func (o *Operator) logEvent(t target, node string, e event.Event) {
	switch e.Kind {
	case event.StepDone, event.StepFailed:
	default:
		return
	}
	o.logf(t, fmt.Sprintf("%s: %s (node %s)", e.Step, e.Message, node))
}

func (o *Operator) logf(t target, msg string) {
	if o.Nodes.Log == nil {
		return
	}
	ctrl := "controllers.machine"
	if t.byoh {
		ctrl = "controllers.configmap"
	}
	o.Nodes.Log(fmt.Sprintf("%s\tINFO\t%s\t%s\t{\"address\": %q, \"owner\": %q}",
		time.Now().UTC().Format("2006-01-02T15:04:05Z"), ctrl, msg, t.addr, t.owner))
}
