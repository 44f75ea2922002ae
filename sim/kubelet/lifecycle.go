package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The node lifecycle controller's part, played where none runs (the demo; Options.Lifecycle): a node
// whose Ready is Unknown gets the node.kubernetes.io/unreachable taints, NoSchedule and NoExecute, and a
// NodeNotReady event; when it is Ready again the taints go and a NodeReady event says so. Against a real
// kube-controller-manager the real controller does this, so tests there leave Lifecycle off.

// TaintUnreachable is the key the node lifecycle controller taints an unreachable node with.
const TaintUnreachable = "node.kubernetes.io/unreachable"

// syncLifecycle brings name's unreachable taints in line with ready, recording the change as an event
// dated when the Ready condition last changed.
func (k *Kubelets) syncLifecycle(ctx context.Context, name string, ready bool) error {
	nodes := k.kube.CoreV1().Nodes()
	n, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil // gone or not registered: nothing to taint
	}
	if hasUnreachableTaint(n) != ready {
		return nil // already in line
	}
	since := k.opts.Now()
	if i := readyIndex(n); i >= 0 {
		since = n.Status.Conditions[i].LastTransitionTime.Time
	}
	n.Spec.Taints = withoutUnreachable(n.Spec.Taints)
	reason := "NodeReady"
	if !ready {
		added := metav1.NewTime(since)
		n.Spec.Taints = append(n.Spec.Taints,
			corev1.Taint{Key: TaintUnreachable, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &added},
			corev1.Taint{Key: TaintUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added})
		reason = "NodeNotReady"
	}
	// A patch of the taints alone: an update of the whole Node read above could undo what another writer
	// (a cordon, an annotation) changed meanwhile.
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"taints": n.Spec.Taints}})
	if err != nil {
		return err
	}
	if _, err := nodes.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("taint node %s: %w", name, err)
	}
	return k.recordNodeEvent(ctx, n, reason, since)
}

func hasUnreachableTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == TaintUnreachable {
			return true
		}
	}
	return false
}

func withoutUnreachable(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Key != TaintUnreachable {
			out = append(out, t)
		}
	}
	return out
}

// recordNodeEvent writes the event the node controller records on a status change: in "default", about
// the Node (whose events carry the node's name as UID), from node-controller.
func (k *Kubelets) recordNodeEvent(ctx context.Context, n *corev1.Node, reason string, at time.Time) error {
	when := metav1.NewTime(at)
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", n.Name, at.UnixNano()), Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: n.Name, UID: types.UID(n.Name)},
		Reason:         reason,
		Message:        fmt.Sprintf("Node %s status is now: %s", n.Name, reason),
		Source:         corev1.EventSource{Component: "node-controller"},
		FirstTimestamp: when, LastTimestamp: when, Count: 1, Type: corev1.EventTypeNormal,
	}
	if _, err := k.kube.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, e, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("record %s event for %s: %w", reason, n.Name, err)
	}
	return nil
}
