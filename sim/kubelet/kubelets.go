// Package kubelet holds the kubelets of simulated Windows hosts.
//
// Kubelet (kubelet.go) is the honest one: the program behind a winsim host's kubelet.exe, it joins a real
// API server with exactly the files written on the host (TLS bootstrap, Node, Lease, serving certificate).
//
// Kubelets (this file) stands in for the kubelets of pre-registered nodes and for the node lifecycle
// controller: it keeps each Node's Ready condition in step with its host through the API server. While the
// host is up and its kubelet service runs the node is Ready; when heartbeats stop (host down, kubelet
// stopped) the node turns Unknown after a grace period, as on a real cluster. Tests and the demo use it.
//
// Like a kubelet it runs the pods bound to its node (pods.go: admission, sandbox with the RuntimeClass's
// handler, containers Running, or the kubelet's events when one fails) and finishes their graceful
// deletion: the API server keeps a deleted pod that is bound to a node "Terminating" until that node's
// kubelet confirms (deletes it with grace period 0). The simulated kubelet of a node whose host is up does
// both as soon as it sees the pod, through a watch on the pods with spec.nodeName=<node>; pods bound or
// deleted while the host is down are handled when it comes back. Scheduling is not a kubelet's job: see
// sim/scheduler for the stand-in that binds unscheduled pods.
package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Host is what the simulated kubelet needs to know about its Windows host (windows.Host has it).
type Host interface {
	Up() bool
	ServiceRunning(name string) bool
}

// Clock is a Host with its own clock (windows.Host has): the heartbeats posted for it are stamped with it,
// as a real kubelet stamps them with its host's, unless Options.Now is given.
type Clock interface {
	Now() time.Time
}

// Booter is a Host that knows its boots (windows.Host does): the simulated kubelet then reports a new
// status.nodeInfo.bootID after each boot, as a real kubelet does.
type Booter interface {
	BootID() string
}

// Processes is a Host that tells its services' process IDs (windows.Host does): a kubelet process that
// starts posts its node status at once, as a real one does, so a restarted kubelet's heartbeat is fresh.
type Processes interface {
	ServicePID(name string) int
}

// NetworkReadiness is a Host that knows whether its runtime's network is ready (windows.Host does): without a
// CNI configuration the kubelet reports the node NotReady, with the network plugin's reason.
type NetworkReadiness interface {
	CNINetworkReady() bool
}

// Options tune the simulation; zero values take the defaults.
type Options struct {
	Interval time.Duration // how often each host is checked (default 500ms)
	Grace    time.Duration // heartbeat age after which a node turns Unknown (default 2s; real clusters: 40s)
	// ReportDelay is how long a kubelet takes, after its host booted and its service runs, to post its first
	// status (default 0: at once). With a long Grace, the Ready from before a reboot stands until then.
	ReportDelay time.Duration
	Now         func() time.Time
	// Lifecycle plays the node lifecycle controller where none runs (the demo): unreachable taints and
	// NodeNotReady / NodeReady events (see lifecycle.go).
	Lifecycle bool
}

// Kubelets runs one simulated kubelet per node.
type Kubelets struct {
	kube       kubernetes.Interface
	opts       Options
	hostClocks bool // heartbeats are stamped with each host's clock (Options.Now not given)

	mu       sync.Mutex
	nodes    map[string]Host
	lastBeat map[string]time.Time
	booted   map[string]bootSeen             // node → the boot its kubelet runs in, and since when
	runCtx   context.Context                 // set by Run; pod watches start under it
	pods     map[string]cache.SharedInformer // node → its pods' informer, while Run runs
	runners  map[string]*podRunner           // node → its kubelet's pod runner, while Run runs
}

// New prepares simulated kubelets for nodes (node name → host); Run starts them.
func New(kube kubernetes.Interface, nodes map[string]Host, opts Options) *Kubelets {
	if opts.Interval <= 0 {
		opts.Interval = 500 * time.Millisecond
	}
	if opts.Grace <= 0 {
		opts.Grace = 2 * time.Second
	}
	hostClocks := opts.Now == nil
	if opts.Now == nil {
		opts.Now = time.Now
	}
	k := &Kubelets{kube: kube, opts: opts, hostClocks: hostClocks, nodes: map[string]Host{}, lastBeat: map[string]time.Time{},
		booted: map[string]bootSeen{}, pods: map[string]cache.SharedInformer{}, runners: map[string]*podRunner{}}
	for name, h := range nodes {
		k.Add(name, h)
	}
	return k
}

// Add starts simulating the kubelet of one more node (a node that joins later).
func (k *Kubelets) Add(node string, h Host) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nodes[node] = h
	k.lastBeat[node] = k.opts.Now()
	if k.runCtx != nil {
		k.watchPodsLocked(k.runCtx, node)
	}
}

// Run checks every host each Interval, and watches every node's pods, until ctx ends.
func (k *Kubelets) Run(ctx context.Context) {
	k.mu.Lock()
	k.runCtx = ctx
	for node := range k.nodes {
		k.watchPodsLocked(ctx, node)
	}
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.runCtx = nil
		k.pods = map[string]cache.SharedInformer{}
		k.runners = map[string]*podRunner{}
		k.mu.Unlock()
	}()
	t := time.NewTicker(k.opts.Interval)
	defer t.Stop()
	for {
		k.tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (k *Kubelets) tick(ctx context.Context) {
	k.mu.Lock()
	nodes := make(map[string]Host, len(k.nodes))
	for n, h := range k.nodes {
		nodes[n] = h
	}
	k.mu.Unlock()
	for name, h := range nodes {
		if ctx.Err() != nil {
			return
		}
		_ = k.sync(ctx, name, h) // a failed write is retried on the next tick
		k.syncPods(ctx, name, h)
	}
}

// watchPodsLocked starts the informer of one node's pods (k.mu held).
func (k *Kubelets) watchPodsLocked(ctx context.Context, node string) {
	if _, ok := k.pods[node]; ok {
		return
	}
	var ph PodHost
	if h, ok := k.nodes[node].(PodHost); ok {
		ph = h
	}
	run := newPodRunner(k.kube, node, ph)
	k.runners[node] = run
	k.pods[node] = podInformer(ctx, k.kube, node, func(p *corev1.Pod) { k.podChanged(ctx, node, run, p) })
}

// podChanged runs (or finalizes the deletion of) a pod of node, if the node's kubelet is alive.
func (k *Kubelets) podChanged(ctx context.Context, node string, run *podRunner, p *corev1.Pod) {
	k.mu.Lock()
	h := k.nodes[node]
	k.mu.Unlock()
	if h == nil || !h.Up() || !h.ServiceRunning("kubelet") {
		return // resynced by syncPods once the host is back
	}
	run.sync(ctx, p)
}

// syncPods resyncs the pods of a live node: deletions and pods bound while it was down, and pods that
// waited for something (a RuntimeClass, containerd).
func (k *Kubelets) syncPods(ctx context.Context, node string, h Host) {
	k.mu.Lock()
	inf, run := k.pods[node], k.runners[node]
	k.mu.Unlock()
	if inf == nil || run == nil || !h.Up() || !h.ServiceRunning("kubelet") {
		return
	}
	for _, obj := range inf.GetStore().List() {
		if p, ok := obj.(*corev1.Pod); ok {
			run.sync(ctx, p)
		}
	}
	if inf.HasSynced() {
		reapContainers(run.host, inf.GetStore().List())
	}
}

// sync writes the node's Ready condition only when it must change, as the kubelet reports transitions and
// the lifecycle controller marks silence; a steady cluster sees no writes.
func (k *Kubelets) sync(ctx context.Context, name string, h Host) error {
	now := k.opts.Now()
	alive := h.Up() && h.ServiceRunning("kubelet")
	boot, pid := bootIDOf(h), kubeletPID(h)
	k.mu.Lock()
	seen := k.booted[name]
	if alive && seen.id != boot {
		seen = bootSeen{id: boot, since: now, pid: seen.pid}
		k.booted[name] = seen
	}
	// A new kubelet process (a restart, an upgrade) posts at once; until that post is written (an update
	// conflict is retried on the next tick) it is still new.
	started := alive && seen.pid != pid
	reporting := alive && now.Sub(seen.since) >= k.opts.ReportDelay
	if reporting {
		k.lastBeat[name] = now
	}
	silent := now.Sub(k.lastBeat[name])
	k.mu.Unlock()

	status, reason, msg := corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"
	if n, ok := h.(NetworkReadiness); ok && !n.CNINetworkReady() {
		status, reason, msg = corev1.ConditionFalse, "KubeletNotReady", NetworkNotReadyMessage
	}
	switch {
	case reporting:
		err := k.setReady(ctx, name, k.stamp(h), status, reason, msg, boot, started)
		if err == nil && started {
			k.mu.Lock()
			s := k.booted[name]
			s.pid = pid
			k.booted[name] = s
			k.mu.Unlock()
		}
		if err == nil && k.opts.Lifecycle {
			err = k.syncLifecycle(ctx, name, true)
		}
		return err
	case !reporting && silent > k.opts.Grace:
		err := k.setReady(ctx, name, k.stamp(h), corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.", "", false)
		if err == nil && k.opts.Lifecycle {
			err = k.syncLifecycle(ctx, name, false)
		}
		return err
	}
	return nil
}

// stamp is the time a heartbeat for h carries: its host's clock when it has one (Clock) and no clock was
// given in Options.
func (k *Kubelets) stamp(h Host) time.Time {
	if c, ok := h.(Clock); ok && k.hostClocks {
		return c.Now()
	}
	return k.opts.Now()
}

// bootSeen is one boot of a host as its kubelet saw it, and the kubelet process last seen in it.
type bootSeen struct {
	id    string
	since time.Time
	pid   int
}

// kubeletPID is the kubelet's process ID (0 when the host does not tell).
func kubeletPID(h Host) int {
	if p, ok := h.(Processes); ok {
		return p.ServicePID("kubelet")
	}
	return 0
}

// bootIDOf is the host's boot identity ("" when the host does not count boots).
func bootIDOf(h Host) string {
	if b, ok := h.(Booter); ok {
		return b.BootID()
	}
	return ""
}

// setReady writes the Ready condition when it changes, when the kubelet reports a new boot (bootID; ""
// keeps the node's), or when a new kubelet process posts its first status (fresh).
func (k *Kubelets) setReady(ctx context.Context, name string, at time.Time, status corev1.ConditionStatus, reason, msg, bootID string, fresh bool) error {
	nodes := k.kube.CoreV1().Nodes()
	n, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil // not registered (yet)
	}
	if err != nil {
		return fmt.Errorf("get node %s: %w", name, err)
	}
	i := readyIndex(n)
	newBoot := bootID != "" && n.Status.NodeInfo.BootID != bootID
	if i >= 0 && n.Status.Conditions[i].Status == status && !newBoot && !fresh {
		return nil
	}
	if bootID != "" {
		n.Status.NodeInfo.BootID = bootID
	}
	now := metav1.NewTime(at)
	cond := corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: reason, Message: msg,
		LastHeartbeatTime: now, LastTransitionTime: now}
	if i < 0 {
		n.Status.Conditions = append(n.Status.Conditions, cond)
	} else {
		if status == corev1.ConditionUnknown {
			cond.LastHeartbeatTime = n.Status.Conditions[i].LastHeartbeatTime
		}
		if n.Status.Conditions[i].Status == status {
			cond.LastTransitionTime = n.Status.Conditions[i].LastTransitionTime // a new boot, not a transition
		}
		n.Status.Conditions[i] = cond
	}
	// A patch of the conditions and node info alone, as a real kubelet patches its status: an update of the
	// whole Node read above could undo a label or annotation written meanwhile (the demo's fake clientset
	// has no optimistic concurrency to refuse it).
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": n.Status.Conditions, "nodeInfo": map[string]string{"bootID": n.Status.NodeInfo.BootID}}})
	if err != nil {
		return err
	}
	if _, err := nodes.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("update status of node %s: %w", name, err)
	}
	return nil
}

func readyIndex(n *corev1.Node) int {
	for i, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return i
		}
	}
	return -1
}
