// Package ovn plays the two parts of OVN-Kubernetes' hybrid overlay a Windows node meets: the cluster
// manager, which gives every Windows Node a subnet of the hybrid cluster network in the annotation
// k8s.ovn.org/hybrid-overlay-node-subnet (SubnetAllocator), and hybrid-overlay-node on the host, which waits
// for its Node's subnet and then creates the HNS networks for it (HybridOverlayNode, a winsim program). Order
// matters on a real cluster: no subnet, no HNS network, and WMCO's network step (kube-proxy's pre-script)
// waits in vain; the simulator keeps that order.
package ovn

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/windows"
)

// DefaultNetwork is the hybrid cluster network the allocator hands /24s out of when none is given: loopback,
// as every address the simulator hands out.
const DefaultNetwork = "127.140.0.0/16"

// SubnetAllocator gives Windows Nodes (label kubernetes.io/os=windows) without one a /24 of Network.
type SubnetAllocator struct {
	Kube    kubernetes.Interface
	Network string // a CIDR in 127.0.0.0/8 of at most /24; "" = DefaultNetwork
}

// Run reconciles every interval until ctx ends, and plays network-node-identity beside it (NodeIdentity:
// hybrid-overlay-node's certificates), as OVN-Kubernetes' control plane runs both on a cluster.
func (a *SubnetAllocator) Run(ctx context.Context, interval time.Duration) {
	id := NodeIdentity{Kube: a.Kube}
	granted := false
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		_ = a.Reconcile(ctx) // retried on the next tick
		if !granted {
			granted = id.GrantNodeAccess(ctx) == nil
		}
		_ = id.Decide(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Reconcile annotates every Windows Node that has no hybrid overlay subnet with the first free one.
func (a *SubnetAllocator) Reconcile(ctx context.Context) error {
	network := a.Network
	if network == "" {
		network = DefaultNetwork
	}
	_, pool, err := net.ParseCIDR(network)
	if err != nil || !pool.IP.IsLoopback() {
		return fmt.Errorf("ovn: hybrid cluster network %q is not a CIDR in 127.0.0.0/8", network)
	}
	if ones, _ := pool.Mask.Size(); ones > 24 {
		return fmt.Errorf("ovn: hybrid cluster network %s is smaller than one /24", network)
	}
	nodes, err := a.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: corev1.LabelOSStable + "=windows"})
	if err != nil {
		return fmt.Errorf("ovn: list nodes: %w", err)
	}
	used := map[string]bool{}
	for _, n := range nodes.Items {
		if s := n.Annotations[config.HybridOverlaySubnet]; s != "" {
			used[s] = true
		}
	}
	for _, n := range nodes.Items {
		if n.Annotations[config.HybridOverlaySubnet] != "" {
			continue
		}
		subnet, ok := free(pool, used)
		if !ok {
			return fmt.Errorf("ovn: hybrid cluster network %s is full", network)
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{config.HybridOverlaySubnet: subnet}}})
		if _, err := a.Kube.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("ovn: annotate node %s: %w", n.Name, err)
		}
		used[subnet] = true
	}
	return nil
}

// free is the first /24 of pool not in used.
func free(pool *net.IPNet, used map[string]bool) (string, bool) {
	base := binary.BigEndian.Uint32(pool.IP.To4())
	for s := uint32(0); s <= 0xffff; s++ {
		c := make(net.IP, 4)
		binary.BigEndian.PutUint32(c, base+s<<8)
		if !pool.Contains(c) {
			return "", false
		}
		if cidr := c.String() + "/24"; !used[cidr] {
			return cidr, true
		}
	}
	return "", false
}

// nodePoll is how often hybrid-overlay-node reads its Node while it waits for the subnet.
var nodePoll = 200 * time.Millisecond

// HybridOverlayNode is the program behind a simulated host's hybrid-overlay-node.exe: it gets its own client
// certificate (ownClient: --bootstrap-kubeconfig, --cert-dir, --cert-duration) and exits as the real one does
// when it cannot, then reads its Node (--node) with it until the Node has its hybrid overlay subnet, creates
// the host's HNS networks with it, and runs until stopped.
func HybridOverlayNode(opts NodeOptions) windows.Program {
	opts.applyDefaults()
	return func(ctx context.Context, p *windows.Process) error {
		node, ok := p.Flag("node")
		if !ok || node == "" {
			return errors.New("hybrid-overlay-node: --node is required")
		}
		kube, err := ownClient(ctx, p, node, opts)
		if err != nil || ctx.Err() != nil {
			return err
		}
		waiting := false
		for {
			n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err == nil && n.Annotations[config.HybridOverlaySubnet] != "" {
				subnet := n.Annotations[config.HybridOverlaySubnet]
				if err := p.CreateHybridOverlayNetworks(subnet); err != nil {
					return err
				}
				p.Log('I', "node.go:160", fmt.Sprintf("Created HNS network %s with subnet %s", "OVNKubernetesHybridOverlayNetwork", subnet))
				<-ctx.Done()
				return nil
			}
			if err != nil && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)) {
				return fmt.Errorf("failed to get node %s: %w", node, err)
			}
			if !waiting {
				p.Log('I', "node.go:112", fmt.Sprintf("Waiting for node %s to have annotation %s", node, config.HybridOverlaySubnet))
				waiting = true
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(nodePoll):
			}
		}
	}
}
