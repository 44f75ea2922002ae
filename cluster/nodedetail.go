package cluster

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

// NodeDetail reads what the node details view shows beyond the snapshot: the pods on the node, its and
// its Machine's recent events, and the Node as YAML. Each part is read on its own; a part that fails says
// why in its Err field and the others are still returned. Only an unknown node is an error.
func NodeDetail(ctx context.Context, kube kubernetes.Interface, name string) (model.NodeDetail, error) {
	n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return model.NodeDetail{}, fmt.Errorf("read node %s: %w", name, err)
	}
	d := model.NodeDetail{Node: name, Read: time.Now()}
	if d.YAML, err = NodeYAML(n); err != nil {
		d.YAMLErr = err.Error()
	}
	if d.Pods, err = NodePods(ctx, kube, name); err != nil {
		d.PodsErr = err.Error()
	}
	if d.Events, err = NodeEvents(ctx, kube, name, n.Annotations[config.MachineAnnotation], DefaultEventLimit); err != nil {
		d.EventsErr = err.Error()
	}
	return d, nil
}

// NodePods lists the pods scheduled on a node, by namespace and name. The API server filters with a field
// selector; the result is filtered again because the demo's fake clientsets ignore field selectors.
func NodePods(ctx context.Context, kube kubernetes.Interface, node string) ([]model.PodInfo, error) {
	sel := fields.OneTermEqualSelector("spec.nodeName", node).String()
	list, err := kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list the pods on %s: %w", node, err)
	}
	var out []model.PodInfo
	for i := range list.Items {
		if p := &list.Items[i]; p.Spec.NodeName == node {
			out = append(out, podInfo(p))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func podInfo(p *corev1.Pod) model.PodInfo {
	info := model.PodInfo{Namespace: p.Namespace, Name: p.Name, Phase: string(p.Status.Phase), Reason: p.Status.Reason,
		Total: len(p.Spec.Containers), Created: p.CreationTimestamp.Time}
	if c := metav1.GetControllerOf(p); c != nil {
		info.Owner = c.Kind
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			info.Ready++
		}
		info.Restarts += cs.RestartCount
		switch {
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
			info.Reason = cs.State.Waiting.Reason
		case cs.State.Terminated != nil && cs.State.Terminated.Reason != "" && info.Reason == "":
			info.Reason = cs.State.Terminated.Reason
		}
	}
	return info
}

// NodeYAML is the Node as `oc get node -o yaml` prints it, without managedFields, and with every label or
// annotation that could carry a credential masked: a Node holds no secrets by design, but annotations are
// free-form and anyone's tool may have put one there.
func NodeYAML(n *corev1.Node) (string, error) {
	c := n.DeepCopy()
	c.APIVersion, c.Kind = "v1", "Node"
	c.ManagedFields = nil
	c.Annotations = maskSensitive(c.Annotations)
	c.Labels = maskSensitive(c.Labels)
	b, err := yaml.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("render node %s as YAML: %w", n.Name, err)
	}
	return string(b), nil
}

// Masked replaces a sensitive value in what wmcon shows.
const Masked = "(masked)"

// sensitiveKey matches keys whose values are credentials; WMCO's encrypted username annotation is one.
var sensitiveKey = regexp.MustCompile(`(?i)(password|passwd|secret|token|credential|private[-_.]?key|auth|username)`)

// maskSensitive copies m with sensitive values masked: by key, or by content (a PEM private key).
func maskSensitive(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if sensitiveKey.MatchString(k) || strings.Contains(v, "PRIVATE KEY") {
			v = Masked
		}
		out[k] = v
	}
	return out
}
