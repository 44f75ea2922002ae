// Package cloudprovider plays the part of a cluster's external cloud controller manager that decides whether
// a new node is a known instance: its node controller. A kubelet run with --cloud-provider=external registers
// its Node tainted node.cloudprovider.kubernetes.io/uninitialized (NoSchedule); the controller looks the
// node's instance up by the Node's name, as AWS's cloud provider looks an instance up by its private DNS name
// (the metadata's local-hostname), and once found gives the Node its providerID and removes the taint. A node
// registered under another name (a Windows host's own EC2AMAZ-… name) is never found: the taint stays and
// nothing is scheduled there, as on a real cluster.
package cloudprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TaintUninitialized is the taint of a node the cloud provider has not initialized.
const TaintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"

// Instance is a cloud instance as the cloud provider knows it.
type Instance struct {
	Name       string // the name the cloud provider finds it by (AWS: its private DNS name)
	ProviderID string // e.g. aws:///us-east-1a/i-0123456789abcdef0
}

// NodeController initializes the nodes whose instances it knows.
type NodeController struct {
	Kube kubernetes.Interface
	// Find, when set, finds the instance a node name names among instances that come and go (the demo's);
	// AddInstance's are looked up first.
	Find func(node string) (Instance, bool)
	// OnMiss, when set, is told about a node it could not find an instance for (its log).
	OnMiss func(node, why string)

	mu        sync.Mutex
	instances map[string]Instance // by lower-case name
}

// AddInstance makes an instance known (a Machine the cloud started, a host a test stands up).
func (c *NodeController) AddInstance(i Instance) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.instances == nil {
		c.instances = map[string]Instance{}
	}
	c.instances[strings.ToLower(i.Name)] = i
}

func (c *NodeController) instance(node string) (Instance, bool) {
	c.mu.Lock()
	i, ok := c.instances[strings.ToLower(node)]
	c.mu.Unlock()
	if !ok && c.Find != nil {
		return c.Find(node)
	}
	return i, ok
}

// Run reconciles every interval until ctx ends.
func (c *NodeController) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		_ = c.Reconcile(ctx) // retried on the next tick
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Reconcile initializes every uninitialized node whose instance is known, and reports the others.
func (c *NodeController) Reconcile(ctx context.Context) error {
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cloudprovider: list nodes: %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if !uninitialized(n) {
			continue
		}
		inst, ok := c.instance(n.Name)
		if !ok {
			if c.OnMiss != nil {
				c.OnMiss(n.Name, fmt.Sprintf("failed to get instance metadata: getInstanceByNodeName failed for %q with \"instance not found\"", n.Name))
			}
			continue
		}
		if err := c.initialize(ctx, n, inst); err != nil {
			return err
		}
	}
	return nil
}

func uninitialized(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == TaintUninitialized {
			return true
		}
	}
	return false
}

// initialize gives the Node its provider ID and removes the taint, in one patch of the spec.
func (c *NodeController) initialize(ctx context.Context, n *corev1.Node, inst Instance) error {
	if err := initializeNode(ctx, c.Kube, n, inst); err != nil {
		return fmt.Errorf("cloudprovider: initialize node %s: %w", n.Name, err)
	}
	return nil
}

// initializeNode is what a cloud provider's node controller does to a new Node, with kube's credentials:
// one merge patch of the spec that removes the uninitialized taint and sets the provider ID if unset.
func initializeNode(ctx context.Context, kube kubernetes.Interface, n *corev1.Node, inst Instance) error {
	var taints []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Key != TaintUninitialized {
			taints = append(taints, t)
		}
	}
	spec := map[string]any{"taints": taints}
	if n.Spec.ProviderID == "" {
		spec["providerID"] = inst.ProviderID
	}
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	_, err = kube.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}
