// Package scheduler stands in for kube-scheduler where none runs (the real API server tier of the tests and
// the demo): it binds each unscheduled pod to a node that fits it, by the default scheduler's filters that
// matter for Windows nodes — the node is schedulable and Ready, the pod tolerates the node's NoSchedule and
// NoExecute taints (os=Windows:NoSchedule on every Windows node), and the node matches the pod's node
// selector and required node affinity (kubernetes.io/os=windows, node.kubernetes.io/windows-build, as a
// RuntimeClass's scheduling adds them at admission). A pod no node fits gets what the real scheduler gives
// it: a FailedScheduling event and the PodScheduled=False condition, with the real message
// ("0/4 nodes are available: 1 node(s) had untolerated taint {os: Windows}, ...").
//
// It does not weigh resources, ports, volumes, spreading or priorities, and it binds one pass at a time:
// call Reconcile, or Run to reconcile every interval. Pods naming another schedulerName are left alone.
// Once bound, a pod is the business of its node's kubelet (sim/kubelet).
package scheduler

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// SchedulerName is the scheduler whose pods this stand-in binds.
const SchedulerName = corev1.DefaultSchedulerName

// Scheduler binds unscheduled pods to fitting nodes.
type Scheduler struct {
	kube kubernetes.Interface
	// OnError, when set, is told about each failed pass (tests log them).
	OnError func(error)

	mu       sync.Mutex
	reported map[types.UID]string // the last FailedScheduling message recorded per pod
}

// New returns a scheduler over kube.
func New(kube kubernetes.Interface) *Scheduler {
	return &Scheduler{kube: kube, reported: map[types.UID]string{}}
}

// Run reconciles every interval until ctx ends.
func (s *Scheduler) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := s.Reconcile(ctx); err != nil && s.OnError != nil && ctx.Err() == nil {
			s.OnError(err) // retried on the next tick
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Reconcile makes one scheduling pass over every unscheduled pod.
func (s *Scheduler) Reconcile(ctx context.Context) error {
	pods, err := s.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "").String()})
	if err != nil {
		return fmt.Errorf("list unscheduled pods: %w", err)
	}
	nodes, err := s.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	load := podsPerNode(ctx, s.kube)
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || !ours(p) ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if err := s.schedule(ctx, p, nodes.Items, load); err != nil {
			return err
		}
	}
	return nil
}

func ours(p *corev1.Pod) bool {
	return p.Spec.SchedulerName == "" || p.Spec.SchedulerName == SchedulerName
}

// podsPerNode counts the pods bound to each node, so pods spread over nodes that fit equally.
func podsPerNode(ctx context.Context, kube kubernetes.Interface) map[string]int {
	out := map[string]int{}
	all, err := kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return out
	}
	for _, p := range all.Items {
		if p.Spec.NodeName != "" {
			out[p.Spec.NodeName]++
		}
	}
	return out
}

// schedule binds p to the least loaded node that fits, or reports why none does.
func (s *Scheduler) schedule(ctx context.Context, p *corev1.Pod, nodes []corev1.Node, load map[string]int) error {
	var best *corev1.Node
	reasons := map[string]int{}
	for i := range nodes {
		if why := Fit(p, &nodes[i]); why != "" {
			reasons[why]++
			continue
		}
		if best == nil || load[nodes[i].Name] < load[best.Name] {
			best = &nodes[i]
		}
	}
	if best == nil {
		return s.unschedulable(ctx, p, len(nodes), reasons)
	}
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
		Target: corev1.ObjectReference{Kind: "Node", Name: best.Name}}
	if err := s.kube.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil // deleted or bound meanwhile
		}
		return fmt.Errorf("bind pod %s/%s to %s: %w", p.Namespace, p.Name, best.Name, err)
	}
	load[best.Name]++
	s.record(ctx, p, corev1.EventTypeNormal, "Scheduled", fmt.Sprintf("Successfully assigned %s/%s to %s", p.Namespace, p.Name, best.Name))
	return nil
}

// Fit says why node cannot take p ("" when it can), in the words of the default scheduler's first filter
// that fails: NodeUnschedulable, TaintToleration, NodeAffinity (a NotReady node carries the not-ready
// taint, which the node lifecycle controller adds; it is checked here even where no such controller runs).
func Fit(p *corev1.Pod, node *corev1.Node) string {
	if node.Spec.Unschedulable && !tolerates(p, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}) {
		return "node(s) were unschedulable"
	}
	for _, t := range node.Spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !tolerates(p, t) {
			return fmt.Sprintf("node(s) had untolerated taint {%s: %s}", t.Key, t.Value)
		}
	}
	if !ready(node) {
		t := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
		if !tolerates(p, t) {
			return "node(s) had untolerated taint {" + corev1.TaintNodeNotReady + ": }"
		}
	}
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(p).Match(node); !ok {
		return "node(s) didn't match Pod's node affinity/selector"
	}
	return ""
}

func tolerates(p *corev1.Pod, t corev1.Taint) bool {
	for i := range p.Spec.Tolerations {
		if p.Spec.Tolerations[i].ToleratesTaint(klog.Background(), &t, false) {
			return true
		}
	}
	return false
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// unschedulable records FailedScheduling (once per distinct message) and the PodScheduled=False condition.
func (s *Scheduler) unschedulable(ctx context.Context, p *corev1.Pod, total int, reasons map[string]int) error {
	msg := FailedSchedulingMessage(total, reasons)
	s.mu.Lock()
	same := s.reported[p.UID] == msg
	s.reported[p.UID] = msg
	s.mu.Unlock()
	if same {
		return nil
	}
	s.record(ctx, p, corev1.EventTypeWarning, "FailedScheduling", msg)
	p = p.DeepCopy()
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: msg, LastTransitionTime: metav1.Now()}
	replaced := false
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			p.Status.Conditions[i], replaced = cond, true
		}
	}
	if !replaced {
		p.Status.Conditions = append(p.Status.Conditions, cond)
	}
	p.Status.Phase = corev1.PodPending
	if _, err := s.kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("update status of pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// FailedSchedulingMessage is the default scheduler's message for a pod no node fits: the count of nodes
// per reason, reasons sorted, then what preemption could do (nothing here: no pod has lower priority).
func FailedSchedulingMessage(total int, reasons map[string]int) string {
	var parts []string
	for r, n := range reasons {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	msg := fmt.Sprintf("0/%d nodes are available", total)
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, ", ")
	}
	return msg + fmt.Sprintf(". preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling.", total, total)
}

func (s *Scheduler) record(ctx context.Context, p *corev1.Pod, typ, reason, msg string) {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", p.Name, time.Now().UnixNano()), Namespace: p.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID,
			ResourceVersion: p.ResourceVersion},
		Reason: reason, Message: msg, Type: typ, Source: corev1.EventSource{Component: SchedulerName},
		FirstTimestamp: now, LastTimestamp: now, Count: 1, ReportingController: SchedulerName, ReportingInstance: SchedulerName + "-schedsim",
		Action: "Scheduling",
	}
	if reason == "Scheduled" {
		ev.Action = "Binding"
	}
	_, _ = s.kube.CoreV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}) // events are best effort, as in the scheduler
}
