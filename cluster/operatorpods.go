package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
)

// OperatorPod is the health of one of the operator's pods: configuration failures show up in its log
// first, and a crashing operator configures nothing.
type OperatorPod struct {
	Name       string
	Phase      string
	Ready      bool
	Restarts   int32
	LastExit   string // why its container last ended ("OOMKilled, exit 137, 5m ago"), "" when it never did
	Started    time.Time
	Containers int
}

// operatorRecentLines is how many of the operator's last log lines operator status shows.
const operatorRecentLines = 15

// readOperatorPods fills st.Pods and, from the first Running pod, st.Log (its last lines) or st.LogErr.
func (o *OLM) readOperatorPods(ctx context.Context, st *OperatorState) error {
	pods, err := o.Kube.CoreV1().Pods(config.OperatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: config.OperatorPodSelector})
	if err != nil {
		return fmt.Errorf("list the operator's pods: %w", err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	var running *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		st.Pods = append(st.Pods, operatorPod(p))
		if running == nil && p.Status.Phase == corev1.PodRunning {
			running = p
		}
	}
	if running == nil {
		return nil
	}
	tail := int64(operatorRecentLines)
	raw, err := o.Kube.CoreV1().Pods(running.Namespace).GetLogs(running.Name,
		&corev1.PodLogOptions{Container: config.OperatorContainer, TailLines: &tail}).DoRaw(ctx)
	if err != nil {
		st.LogErr = fmt.Sprintf("cannot read the log of %s: %v", running.Name, err)
		return nil
	}
	for _, l := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		if l != "" {
			st.Log = append(st.Log, l)
		}
	}
	return nil
}

func operatorPod(p *corev1.Pod) OperatorPod {
	op := OperatorPod{Name: p.Name, Phase: string(p.Status.Phase), Containers: len(p.Spec.Containers)}
	if p.Status.StartTime != nil {
		op.Started = p.Status.StartTime.Time
	}
	ready := 0
	for _, c := range p.Status.ContainerStatuses {
		op.Restarts += c.RestartCount
		if c.Ready {
			ready++
		}
		if t := c.LastTerminationState.Terminated; t != nil {
			op.LastExit = fmt.Sprintf("%s, exit %d at %s", t.Reason, t.ExitCode, t.FinishedAt.UTC().Format(time.RFC3339))
		}
	}
	op.Ready = len(p.Status.ContainerStatuses) > 0 && ready == len(p.Status.ContainerStatuses)
	return op
}
