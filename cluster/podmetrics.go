package cluster

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/wmcon/wmcon/model"
)

// KubeletSummary reads a node's kubelet summary (GET /api/v1/nodes/NODE/proxy/stats/summary): the pods'
// and containers' CPU, memory and network as the kubelet has them from the container runtime. It needs
// `get nodes/proxy`; the API server's refusal comes back as its status error (apierrors.IsForbidden).
func KubeletSummary(ctx context.Context, kube kubernetes.Interface, node string) ([]byte, error) {
	if kube == nil {
		return nil, errors.New("no cluster client: the node proxy needs an API server")
	}
	rc, ok := kube.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		return nil, errors.New("this cluster client cannot reach the node proxy (demo cluster)")
	}
	res := rc.Get().AbsPath("/api/v1/nodes", node, "proxy", "stats", "summary").Do(ctx)
	// Result.Error decodes the API server's Status, so a refusal carries the authorizer's words.
	if err := res.Error(); err != nil {
		return nil, fmt.Errorf("read the kubelet summary of %s through the node proxy: %w", node, err)
	}
	body, err := res.Raw()
	if err != nil {
		return nil, fmt.Errorf("read the kubelet summary of %s through the node proxy: %w", node, err)
	}
	return body, nil
}

// WorkloadPods lists the running pods on the given nodes (all nodes when nil), in namespace ("" for
// all): one list of the cluster's running pods, or of one node's when one is given.
func WorkloadPods(ctx context.Context, kube kubernetes.Interface, namespace string, nodes map[string]bool) ([]model.WorkloadPod, error) {
	sel := fields.Set{"status.phase": string(corev1.PodRunning)}
	if len(nodes) == 1 {
		for n := range nodes {
			sel["spec.nodeName"] = n
		}
	}
	list, err := kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		where := "in every namespace"
		if namespace != "" {
			where = "in namespace " + namespace
		}
		return nil, fmt.Errorf("list the running pods %s: %w", where, err)
	}
	var out []model.WorkloadPod
	for i := range list.Items {
		p := &list.Items[i]
		// The demo's fake clientset ignores field selectors.
		if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" || (nodes != nil && !nodes[p.Spec.NodeName]) {
			continue
		}
		out = append(out, WorkloadPodOf(p))
	}
	return out, nil
}

// WorkloadPodOf is what the pod metrics need of a pod: its node, its containers' IDs from their statuses
// and their requests and limits from the spec (init containers left out: they have ended).
func WorkloadPodOf(p *corev1.Pod) model.WorkloadPod {
	ids := make(map[string]string, len(p.Status.ContainerStatuses))
	for _, cs := range p.Status.ContainerStatuses {
		ids[cs.Name] = cs.ContainerID
	}
	w := model.WorkloadPod{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), Node: p.Spec.NodeName}
	for _, c := range p.Spec.Containers {
		w.Containers = append(w.Containers, model.WorkloadContainer{Name: c.Name, ID: ids[c.Name],
			Requests: resourcesOf(c.Resources.Requests), Limits: resourcesOf(c.Resources.Limits)})
	}
	return w
}

func resourcesOf(l corev1.ResourceList) model.Resources {
	var r model.Resources
	if q, ok := l[corev1.ResourceCPU]; ok {
		r.CPUCores = q.AsApproximateFloat64()
	}
	if q, ok := l[corev1.ResourceMemory]; ok {
		r.MemoryBytes = q.AsApproximateFloat64()
	}
	return r
}
