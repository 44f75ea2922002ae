package demo

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// keepReplicas plays the ReplicaSet controller for the demo's workloads: a pod of a ReplicaSet that was
// evicted or deleted (a drain, a reboot) is replaced by a new one without a node, which the scheduler
// binds to a node that takes it, so the demo's workloads come back as a cluster's do.
func (c *Cluster) keepReplicas(ctx context.Context, every time.Duration) {
	want := seededReplicas(c.Nodes, c.opts.Now())
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		have := c.replicaCounts(ctx)
		for owner, w := range want {
			for i := have[owner].count; i < w.count; i++ {
				p := replacement(w.sample, fmt.Sprintf("%x%03d", time.Now().Unix()%0xfff, n*10+i))
				_, _ = c.kube.CoreV1().Pods(appsNamespace).Create(ctx, p, metav1.CreateOptions{}) // a clash: the next tick retries
			}
		}
	}
}

// seededReplicas are the demo's ReplicaSets as seeded: the pods each keeps.
func seededReplicas(nodes []WindowsNode, now time.Time) map[string]replicas {
	out := map[string]replicas{}
	for _, o := range workloads(nodes, now) {
		p, ok := o.(*corev1.Pod)
		if !ok {
			continue
		}
		owner := metav1.GetControllerOf(p)
		r := out[owner.Name]
		r.count++
		r.sample = *p
		out[owner.Name] = r
	}
	return out
}

// replicas are a ReplicaSet's live pods: how many, and one of them to copy.
type replicas struct {
	count  int
	sample corev1.Pod
}

// replicaCounts counts the live pods (not finished) of each ReplicaSet in the demo's workloads namespace.
func (c *Cluster) replicaCounts(ctx context.Context) map[string]replicas {
	out := map[string]replicas{}
	list, err := c.kube.CoreV1().Pods(appsNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return out
	}
	for _, p := range list.Items {
		owner := metav1.GetControllerOf(&p)
		if owner == nil || owner.Kind != "ReplicaSet" || p.DeletionTimestamp != nil ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		r := out[owner.Name]
		r.count++
		r.sample = p
		out[owner.Name] = r
	}
	return out
}

// replacement is a new pod of the same ReplicaSet: its template (labels, owner, spec) without a node or
// a status, as the controller creates it.
func replacement(sample corev1.Pod, suffix string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sample.Labels["app"] + "-" + suffix, Namespace: sample.Namespace,
		Labels: sample.Labels, OwnerReferences: sample.OwnerReferences}}
	p.Spec = *sample.Spec.DeepCopy()
	p.Spec.NodeName = ""
	p.Status = corev1.PodStatus{Phase: corev1.PodPending}
	return p
}
