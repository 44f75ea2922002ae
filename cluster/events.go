package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/model"
)

// EventInfo is one core/v1 event about a node or its Machine (model's type, which the console shows too).
type EventInfo = model.EventInfo

// DefaultEventLimit bounds how many events NodeEvents returns when asked for 0 or fewer.
const DefaultEventLimit = 20

// NodeEvents returns the recent events of a node and, when machine ("<namespace>/<name>") is set, of its
// Machine: newest first, at most limit. The API server filters with field selectors; the result is
// filtered again because the demo's fake clientsets ignore field selectors.
func NodeEvents(ctx context.Context, kube kubernetes.Interface, node, machine string, limit int) ([]EventInfo, error) {
	if limit <= 0 {
		limit = DefaultEventLimit
	}
	// The API server accepts events about cluster-scoped objects only in "default".
	out, err := objectEvents(ctx, kube, metav1.NamespaceDefault, "Node", node)
	if err != nil {
		return nil, fmt.Errorf("list events of node %s: %w", node, err)
	}
	if ns, name, ok := strings.Cut(machine, "/"); ok && name != "" {
		mev, err := objectEvents(ctx, kube, ns, "Machine", name)
		if err != nil {
			return nil, fmt.Errorf("list events of machine %s: %w", machine, err)
		}
		out = append(out, mev...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// objectEvents lists the events in namespace whose involvedObject is kind/name.
func objectEvents(ctx context.Context, kube kubernetes.Interface, namespace, kind, name string) ([]EventInfo, error) {
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}.AsSelector().String()
	list, err := kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, err
	}
	var out []EventInfo
	for i := range list.Items {
		e := &list.Items[i]
		if e.InvolvedObject.Kind != kind || e.InvolvedObject.Name != name {
			continue
		}
		out = append(out, eventInfo(e))
	}
	return out, nil
}

func eventInfo(e *corev1.Event) EventInfo {
	obj := e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name
	if e.InvolvedObject.Namespace != "" {
		obj = e.InvolvedObject.Kind + "/" + e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
	}
	src := e.Source.Component
	if src == "" {
		src = e.ReportingController
	}
	return EventInfo{Time: eventTime(e), Type: e.Type, Reason: e.Reason, Message: e.Message, Object: obj,
		Count: e.Count, Source: src}
}

// eventTime is when an event was last seen: core/v1 events fill lastTimestamp, events written through
// events.k8s.io fill eventTime (and series), and every event has its creation time.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
