// Package kubeletsim stands in for the kubelets of simulated Windows hosts and for the node lifecycle
// controller: it keeps each Node's Ready condition in step with its host through the API server. While the
// host is up and its kubelet service runs the node is Ready; when heartbeats stop (host down, kubelet
// stopped) the node turns Unknown after a grace period, as on a real cluster. Tests and the demo use it.
package kubeletsim

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Host is what the simulated kubelet needs to know about its Windows host (winsim.Host has it).
type Host interface {
	Up() bool
	ServiceRunning(name string) bool
}

// Options tune the simulation; zero values take the defaults.
type Options struct {
	Interval time.Duration // how often each host is checked (default 500ms)
	Grace    time.Duration // heartbeat age after which a node turns Unknown (default 2s; real clusters: 40s)
	Now      func() time.Time
}

// Kubelets runs one simulated kubelet per node.
type Kubelets struct {
	kube kubernetes.Interface
	opts Options

	mu       sync.Mutex
	nodes    map[string]Host
	lastBeat map[string]time.Time
}

// New prepares simulated kubelets for nodes (node name → host); Run starts them.
func New(kube kubernetes.Interface, nodes map[string]Host, opts Options) *Kubelets {
	if opts.Interval <= 0 {
		opts.Interval = 500 * time.Millisecond
	}
	if opts.Grace <= 0 {
		opts.Grace = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	k := &Kubelets{kube: kube, opts: opts, nodes: map[string]Host{}, lastBeat: map[string]time.Time{}}
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
}

// Run checks every host each Interval until ctx ends.
func (k *Kubelets) Run(ctx context.Context) {
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
	}
}

// sync writes the node's Ready condition only when it must change, as the kubelet reports transitions and
// the lifecycle controller marks silence; a steady cluster sees no writes.
func (k *Kubelets) sync(ctx context.Context, name string, h Host) error {
	now := k.opts.Now()
	alive := h.Up() && h.ServiceRunning("kubelet")
	k.mu.Lock()
	if alive {
		k.lastBeat[name] = now
	}
	silent := now.Sub(k.lastBeat[name])
	k.mu.Unlock()

	switch {
	case alive:
		return k.setReady(ctx, name, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status")
	case silent > k.opts.Grace:
		return k.setReady(ctx, name, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.")
	}
	return nil
}

func (k *Kubelets) setReady(ctx context.Context, name string, status corev1.ConditionStatus, reason, msg string) error {
	nodes := k.kube.CoreV1().Nodes()
	n, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil // not registered (yet)
	}
	if err != nil {
		return fmt.Errorf("get node %s: %w", name, err)
	}
	i := readyIndex(n)
	if i >= 0 && n.Status.Conditions[i].Status == status {
		return nil
	}
	now := metav1.NewTime(k.opts.Now())
	cond := corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: reason, Message: msg,
		LastHeartbeatTime: now, LastTransitionTime: now}
	if i < 0 {
		n.Status.Conditions = append(n.Status.Conditions, cond)
	} else {
		if status == corev1.ConditionUnknown {
			cond.LastHeartbeatTime = n.Status.Conditions[i].LastHeartbeatTime
		}
		n.Status.Conditions[i] = cond
	}
	if _, err := nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
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
