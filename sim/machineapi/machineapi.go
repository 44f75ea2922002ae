// Package machineapi plays the OpenShift machine API's part for tests and the demo: the MachineSet
// controller (Machines created and deleted to match replicas), the cloud actuator (a Machine gets an
// "instance": a simulated Windows Server, sim/windows, on the next free loopback address) and the nodelink
// controller (a Machine whose Node has registered gets its nodeRef and goes Running).
//
// It is honest about user data: a Machine's instance boots with the SSH key its providerSpec's
// userDataSecret puts into administrators_authorized_keys (found with sshkey.FindInUserData, as wmcon's
// checks read it). A missing secret fails the create as the actuator does (an event, retried), and a script
// the platform would not run (no <powershell> wrapper except on GCP) or without a key gives an instance
// nobody can log in to — as a real one. Instances listen only on loopback addresses, which Options.Addresses
// lists; nothing else is ever used. It works on the real kube-apiserver (with the machine API CRDs) and on
// the demo's fake clients alike, one reconcile pass at a time (Reconcile, or Run).
package machineapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	machineclient "github.com/openshift/client-go/machine/clientset/versioned"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote/sshkey"
	"github.com/wmcon/wmcon/sim/windows"
)

// Finalizer is the machine controller's finalizer: a deleted Machine goes once its instance is gone.
const Finalizer = "machine.machine.openshift.io"

// Options say where instances live and what runs on them.
type Options struct {
	// Addresses are the loopback addresses instances get, in order (for example 127.0.0.20–127.0.0.39).
	// Anything but a loopback address is refused by New.
	Addresses []string
	// Platform is the cloud ("AWS", "Azure", "GCP", "VSphere", "Nutanix"): the instances' platform, the
	// providerID's form and whether user data needs the <powershell> wrapper.
	Platform string
	// Programs run behind executables on every instance (typically "kubelet.exe": kubelet.Kubelet).
	Programs map[string]windows.Program
	// RebootDowntime and LogInterval tune the instances (winsim's defaults when 0).
	RebootDowntime, LogInterval time.Duration
	// OnError, when set, is told about each failed reconcile pass (tests log them).
	OnError func(error)
	// Tune, when set, adjusts each instance's options before it starts.
	Tune func(*windows.Options)
}

// Controller is the machine API stand-in.
type Controller struct {
	kube    kubernetes.Interface
	machine machineclient.Interface
	opts    Options

	mu        sync.Mutex
	instances map[string]*instance // Machine name → its instance
	failed    map[string]string    // Machine name → the create error already reported
}

// instance is a Machine's simulated cloud instance.
type instance struct {
	host *windows.Host
	ip   string
	uid  string // the Machine's UID, so a Machine recreated with the same name gets a new instance
	id   string // the cloud's instance ID (17 hex digits)
}

// New prepares the controller over the clients.
func New(kube kubernetes.Interface, machine machineclient.Interface, opts Options) (*Controller, error) {
	for _, a := range opts.Addresses {
		if ip := net.ParseIP(a); ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("machinesim: instance address %q is not a loopback address", a)
		}
	}
	if opts.Platform == "" {
		opts.Platform = "AWS"
	}
	return &Controller{kube: kube, machine: machine, opts: opts, instances: map[string]*instance{}, failed: map[string]string{}}, nil
}

// Run reconciles every interval until ctx ends, then stops the instances.
func (c *Controller) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := c.Reconcile(ctx); err != nil && c.opts.OnError != nil && ctx.Err() == nil {
			c.opts.OnError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Reconcile makes one pass: MachineSets to their replicas, Machines provisioned, linked to their Node, or
// torn down once deleted.
func (c *Controller) Reconcile(ctx context.Context) error {
	var errs []error
	sets, err := c.machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("machinesim: list MachineSets: %w", err)
	}
	for i := range sets.Items {
		errs = append(errs, c.scale(ctx, &sets.Items[i]))
	}
	machines, err := c.machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("machinesim: list Machines: %w", err)
	}
	live := map[string]bool{}
	for i := range machines.Items {
		m := &machines.Items[i]
		live[m.Name] = m.DeletionTimestamp == nil
		errs = append(errs, c.reconcileMachine(ctx, m))
	}
	c.reapOrphans(ctx, live)
	for i := range sets.Items {
		errs = append(errs, c.setStatus(ctx, &sets.Items[i]))
	}
	return errors.Join(errs...)
}

// Hosts are the running instances by Machine name.
func (c *Controller) Hosts() map[string]*windows.Host {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]*windows.Host, len(c.instances))
	for name, in := range c.instances {
		out[name] = in.host
	}
	return out
}

// HostAt is the running instance whose address is ip, nil when there is none.
func (c *Controller) HostAt(ip string) *windows.Host {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, in := range c.instances {
		if in.ip == ip {
			return in.host
		}
	}
	return nil
}

// Addrs maps each instance's address, host name (lowercase, the node name its kubelet registers) and
// Machine name to its SSH address ("127.0.0.N:port").
func (c *Controller) Addrs() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]string, 3*len(c.instances))
	for name, in := range c.instances {
		out[in.ip] = in.host.Addr()
		out[strings.ToLower(in.host.Hostname())] = in.host.Addr()
		out[in.host.NodeName()] = in.host.Addr() // the name its kubelet registers under (AWS: the metadata's)
		out[name] = in.host.Addr()
	}
	return out
}

// Close stops every instance.
func (c *Controller) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, in := range c.instances {
		_ = in.host.Close()
		delete(c.instances, name)
	}
}

// scale creates or deletes the MachineSet's Machines to match its replicas.
func (c *Controller) scale(ctx context.Context, ms *machinev1beta1.MachineSet) error {
	if ms.DeletionTimestamp != nil {
		return nil
	}
	owned, err := c.owned(ctx, ms)
	if err != nil {
		return err
	}
	want := int(ptr.Deref(ms.Spec.Replicas, 1))
	machines := c.machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	for n := len(owned); n < want; n++ {
		if _, err := machines.Create(ctx, newMachine(ms), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("machinesim: create a Machine of %s: %w", ms.Name, err)
		}
	}
	if len(owned) > want {
		// The default delete policy (Random) prefers Machines without a node, then the newest.
		sort.SliceStable(owned, func(i, j int) bool {
			if (owned[i].Status.NodeRef == nil) != (owned[j].Status.NodeRef == nil) {
				return owned[i].Status.NodeRef == nil
			}
			return owned[j].CreationTimestamp.Before(&owned[i].CreationTimestamp)
		})
		for _, m := range owned[:len(owned)-want] {
			if err := machines.Delete(ctx, m.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("machinesim: delete Machine %s of %s: %w", m.Name, ms.Name, err)
			}
		}
	}
	return nil
}

// owned are the MachineSet's live Machines (see ownedMachines).
func (c *Controller) owned(ctx context.Context, ms *machinev1beta1.MachineSet) ([]machinev1beta1.Machine, error) {
	return ownedMachines(ctx, c.machine, ms)
}

func newMachine(ms *machinev1beta1.MachineSet) *machinev1beta1.Machine {
	m := &machinev1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name: ms.Name + "-" + suffix(), Namespace: ms.Namespace,
			Labels: copyMap(ms.Spec.Template.Labels), Annotations: copyMap(ms.Spec.Template.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ms, machinev1beta1.GroupVersion.WithKind("MachineSet"))},
		},
		Spec: *ms.Spec.Template.Spec.DeepCopy(),
	}
	return m
}

// instanceID is a new EC2-style instance ID's digits: 17 hex, the first 0.
func instanceID() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	return "0" + hex.EncodeToString(b)[:16]
}

// suffix is five lowercase letters and digits, as the MachineSet controller's generated names end.
func suffix() string {
	const chars = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b)
}

func copyMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// setStatus reports the MachineSet's replicas as its controller does (see syncStatus).
func (c *Controller) setStatus(ctx context.Context, ms *machinev1beta1.MachineSet) error {
	return syncStatus(ctx, c.kube, c.machine, ms)
}

// reconcileMachine moves one Machine on: finalizer, instance, addresses and phase, node link; or, deleted,
// tears its instance and Node down and lets it go.
func (c *Controller) reconcileMachine(ctx context.Context, m *machinev1beta1.Machine) error {
	if m.DeletionTimestamp != nil {
		return c.teardown(ctx, m)
	}
	if ptr.Deref(m.Status.Phase, "") == "Running" && m.Status.NodeRef != nil {
		return nil // provisioned before this controller ran (the demo's Linux workers), or done
	}
	machines := c.machine.MachineV1beta1().Machines(m.Namespace)
	if !hasFinalizer(m) {
		m.Finalizers = append(m.Finalizers, Finalizer)
		updated, err := machines.Update(ctx, m, metav1.UpdateOptions{})
		if err != nil {
			return ignoreConflict(err, "add the finalizer to Machine "+m.Name)
		}
		m = updated
	}
	in, err := c.ensureInstance(ctx, m)
	if err != nil {
		return err
	}
	if in == nil {
		return c.setPhase(ctx, m, "Provisioning", nil)
	}
	node := c.nodeOf(ctx, in.ip)
	phase := "Provisioned"
	if node != nil {
		phase = "Running"
		if err := c.linkNode(ctx, node, m); err != nil {
			return err
		}
	}
	return c.setPhase(ctx, m, phase, func(st *machinev1beta1.MachineStatus) {
		st.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.ip},
			{Type: corev1.NodeInternalDNS, Address: dnsName(in.ip)}, {Type: corev1.NodeHostName, Address: dnsName(in.ip)}}
		if node != nil {
			st.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node.Name, UID: node.UID}
		}
	})
}

func hasFinalizer(m *machinev1beta1.Machine) bool {
	for _, f := range m.Finalizers {
		if f == Finalizer {
			return true
		}
	}
	return false
}

func ignoreConflict(err error, what string) error {
	if err == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // retried on the next pass
	}
	return fmt.Errorf("machinesim: %s: %w", what, err)
}

// dnsName is the AWS-style private DNS name of an address.
func dnsName(ip string) string {
	return "ip-" + strings.ReplaceAll(ip, ".", "-") + ".ec2.internal"
}

// ensureInstance returns the Machine's instance, creating it when its user data allows; nil (and an event
// on the Machine) when the create fails.
func (c *Controller) ensureInstance(ctx context.Context, m *machinev1beta1.Machine) (*instance, error) {
	c.mu.Lock()
	in := c.instances[m.Name]
	c.mu.Unlock()
	if in != nil && in.uid == string(m.UID) {
		return in, nil
	}
	keys, err := c.userDataKeys(ctx, m)
	if err != nil {
		c.reportFailedCreate(ctx, m, err)
		return nil, nil
	}
	ip, err := c.freeAddress()
	if err != nil {
		c.reportFailedCreate(ctx, m, err)
		return nil, nil
	}
	wo := windows.Options{Addr: net.JoinHostPort(ip, "0"), AuthorizedKeys: keys, Platform: c.opts.Platform,
		Programs: c.opts.Programs, RebootDowntime: c.opts.RebootDowntime, LogInterval: c.opts.LogInterval}
	if c.opts.Tune != nil {
		c.opts.Tune(&wo)
	}
	h, err := windows.Start(wo)
	if err != nil {
		return nil, fmt.Errorf("machinesim: start the instance of Machine %s at %s: %w", m.Name, ip, err)
	}
	in = &instance{host: h, ip: ip, uid: string(m.UID), id: instanceID()}
	c.mu.Lock()
	c.instances[m.Name] = in
	delete(c.failed, m.Name)
	c.mu.Unlock()
	c.event(ctx, m, corev1.EventTypeNormal, "Create", "Created Machine "+m.Name)
	return in, nil
}

// userDataKeys are the keys the Machine's user data authorizes on its instance: none when the script would
// not run on the platform or holds no key (an instance nobody can log in to), an error when the secret is
// missing (the actuator cannot create the instance).
func (c *Controller) userDataKeys(ctx context.Context, m *machinev1beta1.Machine) ([]ssh.PublicKey, error) {
	name := userDataSecretName(m)
	if name == "" {
		return nil, errors.New("providerSpec has no userDataSecret")
	}
	sec, err := c.kube.CoreV1().Secrets(m.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to get user data: secret %s/%s: %w", m.Namespace, name, err)
	}
	script := sec.Data[config.UserDataSecretKey]
	if userdata.Runs(script, c.opts.Platform) != nil {
		return nil, nil // the boot agent does not run it: no OpenSSH, no key
	}
	key, err := sshkey.FindInUserData(string(script))
	if err != nil {
		return nil, nil
	}
	return []ssh.PublicKey{key}, nil
}

func userDataSecretName(m *machinev1beta1.Machine) string {
	if m.Spec.ProviderSpec.Value == nil {
		return ""
	}
	var spec struct {
		UserDataSecret *struct {
			Name string `json:"name"`
		} `json:"userDataSecret"`
	}
	if err := json.Unmarshal(m.Spec.ProviderSpec.Value.Raw, &spec); err != nil || spec.UserDataSecret == nil {
		return ""
	}
	return spec.UserDataSecret.Name
}

// freeAddress is the first address of Options.Addresses no instance has.
func (c *Controller) freeAddress() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	used := map[string]bool{}
	for _, in := range c.instances {
		used[in.ip] = true
	}
	for _, a := range c.opts.Addresses {
		if !used[a] {
			return a, nil
		}
	}
	return "", fmt.Errorf("InsufficientInstanceCapacity: no free address among the %d the simulated cloud has", len(c.opts.Addresses))
}

func (c *Controller) reportFailedCreate(ctx context.Context, m *machinev1beta1.Machine, err error) {
	c.mu.Lock()
	same := c.failed[m.Name] == err.Error()
	c.failed[m.Name] = err.Error()
	c.mu.Unlock()
	if !same {
		c.event(ctx, m, corev1.EventTypeWarning, "FailedCreate", fmt.Sprintf("%s: reconciler failed to Create machine: %v", m.Name, err))
	}
}

// nodeOf is the Node whose InternalIP is the instance's address (nil while none registered).
func (c *Controller) nodeOf(ctx context.Context, ip string) *corev1.Node {
	nodes, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	for i := range nodes.Items {
		for _, a := range nodes.Items[i].Status.Addresses {
			if a.Type == corev1.NodeInternalIP && a.Address == ip {
				return &nodes.Items[i]
			}
		}
	}
	return nil
}

// linkNode annotates the Node with its Machine, as the nodelink controller does.
func (c *Controller) linkNode(ctx context.Context, n *corev1.Node, m *machinev1beta1.Machine) error {
	want := m.Namespace + "/" + m.Name
	if n.Annotations[config.MachineAnnotation] == want {
		return nil
	}
	n = n.DeepCopy()
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[config.MachineAnnotation] = want
	_, err := c.kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return ignoreConflict(err, "link Node "+n.Name+" to Machine "+m.Name)
}

// setPhase writes the Machine's phase, providerID and whatever more fill adds, when they change.
func (c *Controller) setPhase(ctx context.Context, m *machinev1beta1.Machine, phase string, fill func(*machinev1beta1.MachineStatus)) error {
	st := m.Status.DeepCopy()
	st.Phase = ptr.To(phase)
	if fill != nil {
		fill(st)
	}
	providerID := m.Spec.ProviderID
	c.mu.Lock()
	in := c.instances[m.Name]
	c.mu.Unlock()
	if in != nil && providerID == nil {
		providerID = ptr.To(c.providerID(m, in))
	}
	if ptr.Deref(m.Status.Phase, "") == phase && equalAddresses(m.Status.Addresses, st.Addresses) &&
		(m.Status.NodeRef == nil) == (st.NodeRef == nil) && ptr.Equal(providerID, m.Spec.ProviderID) {
		return nil
	}
	machines := c.machine.MachineV1beta1().Machines(m.Namespace)
	if !ptr.Equal(providerID, m.Spec.ProviderID) {
		m = m.DeepCopy()
		m.Spec.ProviderID = providerID
		updated, err := machines.Update(ctx, m, metav1.UpdateOptions{})
		if err != nil {
			return ignoreConflict(err, "set the providerID of Machine "+m.Name)
		}
		m = updated
	}
	m = m.DeepCopy()
	now := metav1.Now()
	st.LastUpdated = &now
	m.Status = *st
	_, err := machines.UpdateStatus(ctx, m, metav1.UpdateOptions{})
	return ignoreConflict(err, "update the status of Machine "+m.Name)
}

func equalAddresses(a, b []corev1.NodeAddress) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// providerID is the instance's ID in the platform's form.
func (c *Controller) providerID(m *machinev1beta1.Machine, in *instance) string {
	switch strings.ToLower(c.opts.Platform) {
	case "aws":
		return "aws:///" + zoneOf(m) + "/i-" + in.id
	case "azure":
		return "azure:///subscriptions/sim/resourceGroups/sim-rg/providers/Microsoft.Compute/virtualMachines/" + m.Name
	case "gcp":
		return "gce://sim-project/" + zoneOf(m) + "/" + m.Name
	}
	return strings.ToLower(c.opts.Platform) + "://" + m.Name
}

func zoneOf(m *machinev1beta1.Machine) string {
	if m.Spec.ProviderSpec.Value == nil {
		return ""
	}
	var spec struct {
		Placement struct {
			AvailabilityZone string `json:"availabilityZone"`
		} `json:"placement"`
		Zone string `json:"zone"`
	}
	_ = json.Unmarshal(m.Spec.ProviderSpec.Value.Raw, &spec)
	if spec.Placement.AvailabilityZone != "" {
		return spec.Placement.AvailabilityZone
	}
	return spec.Zone
}

// teardown stops a deleted Machine's instance, deletes its Node (the machine controller drains and deletes
// it) and removes the finalizer so the Machine goes.
func (c *Controller) teardown(ctx context.Context, m *machinev1beta1.Machine) error {
	c.stopInstance(ctx, m.Name)
	if m.Status.NodeRef != nil {
		err := c.kube.CoreV1().Nodes().Delete(ctx, m.Status.NodeRef.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("machinesim: delete Node %s of Machine %s: %w", m.Status.NodeRef.Name, m.Name, err)
		}
	}
	if !hasFinalizer(m) {
		return nil
	}
	m = m.DeepCopy()
	var kept []string
	for _, f := range m.Finalizers {
		if f != Finalizer {
			kept = append(kept, f)
		}
	}
	m.Finalizers = kept
	_, err := c.machine.MachineV1beta1().Machines(m.Namespace).Update(ctx, m, metav1.UpdateOptions{})
	return ignoreConflict(err, "remove the finalizer of Machine "+m.Name)
}

func (c *Controller) stopInstance(ctx context.Context, name string) {
	c.mu.Lock()
	in := c.instances[name]
	delete(c.instances, name)
	delete(c.failed, name)
	c.mu.Unlock()
	if in == nil {
		return
	}
	_ = in.host.Close()
	if n := c.nodeOf(ctx, in.ip); n != nil {
		_ = c.kube.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
	}
}

// reapOrphans stops the instances of Machines that are gone (a fake clientset deletes at once, without
// waiting for the finalizer).
func (c *Controller) reapOrphans(ctx context.Context, live map[string]bool) {
	c.mu.Lock()
	var gone []string
	for name := range c.instances {
		if _, ok := live[name]; !ok {
			gone = append(gone, name)
		}
	}
	c.mu.Unlock()
	for _, name := range gone {
		c.stopInstance(ctx, name)
	}
}

// event records an event about the Machine, as the machine controller does.
func (c *Controller) event(ctx context.Context, m *machinev1beta1.Machine, typ, reason, msg string) {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", m.Name, time.Now().UnixNano()), Namespace: m.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Machine", APIVersion: machinev1beta1.GroupVersion.String(), Namespace: m.Namespace,
			Name: m.Name, UID: m.UID},
		Reason: reason, Message: msg, Type: typ, Source: corev1.EventSource{Component: strings.ToLower(c.opts.Platform) + "-controller"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1, ReportingController: strings.ToLower(c.opts.Platform) + "-controller",
	}
	_, _ = c.kube.CoreV1().Events(m.Namespace).Create(ctx, ev, metav1.CreateOptions{})
}
