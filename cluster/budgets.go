package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// BlockingBudgets lists the PodDisruptionBudgets that allow no disruption now and select pods still on the
// node: what keeps a drain of it (the operator's, or anyone's) from finishing. DaemonSet pods, which a
// drain leaves, are not counted.
func (o *Ops) BlockingBudgets(ctx context.Context, node string) ([]Budget, error) {
	pods, err := o.c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return nil, fmt.Errorf("list the pods on %s: %w", node, err)
	}
	byKey := map[string]corev1.Pod{}
	var keys []string
	for _, p := range pods.Items {
		if ownedByDaemonSet(p) || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		k := p.Namespace + "/" + p.Name
		byKey[k] = p
		keys = append(keys, k)
	}
	var out []Budget
	for _, b := range o.describeBlock(ctx, keys, byKey, "").Budgets {
		if b.DisruptionsAllowed == 0 {
			out = append(out, b)
		}
	}
	return out, nil
}

func ownedByDaemonSet(p corev1.Pod) bool {
	for _, r := range p.OwnerReferences {
		if r.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}
