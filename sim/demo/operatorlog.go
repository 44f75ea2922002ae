package demo

import (
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/wmcon/wmcon/config"
)

// operatorPodName is the demo operator's pod (its Deployment's ReplicaSet names it so).
const operatorPodName = config.OperatorName + "-6d9f7c8b5-x2kq4"

// operatorPod is the operator's running pod: ready, restarted once a day ago after running out of memory.
func operatorPod(now time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: meta(operatorPodName, config.OperatorNamespace, 9*24*time.Hour, now)}
	p.Labels = map[string]string{"name": config.OperatorName}
	p.Spec.Containers = []corev1.Container{{Name: config.OperatorContainer, Image: "registry.redhat.io/openshift4-wincw/windows-machine-config-rhel9-operator:v" + OperatorVersion}}
	p.Spec.NodeName = "ip-127-0-1-10.ec2.internal"
	started := metav1.NewTime(now.Add(-9 * 24 * time.Hour))
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
		ContainerStatuses: []corev1.ContainerStatus{{Name: config.OperatorContainer, Ready: true, RestartCount: 1,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137,
				FinishedAt: metav1.NewTime(now.Add(-26 * time.Hour))}}}}}
	return p
}

// operatorLog is what the demo's operator pod logs: a reconcile of each seeded Windows node every few
// seconds, and the operator stand-in's own lines as it configures hosts (the fresh demo's), kept in order.
type operatorLog struct {
	nodes []WindowsNode
	mu    sync.Mutex
	lines []stampedLine // the stand-in's, at most maxOperatorLines
}

type stampedLine struct {
	at   time.Time
	text string
}

const maxOperatorLines = 500

// add keeps one of the operator stand-in's lines.
func (l *operatorLog) add(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, stampedLine{at: time.Now(), text: text})
	if len(l.lines) > maxOperatorLines {
		l.lines = append([]stampedLine(nil), l.lines[len(l.lines)-maxOperatorLines:]...)
	}
}

// serveOperatorLog answers the operator pod's log requests with what WMCO would be logging (in wmcon's
// words; the fake clientset's own answer is "fake logs").
func serveOperatorLog(kube *kubefake.Clientset, log *operatorLog, now func() time.Time) {
	kube.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "log" || a.GetNamespace() != config.OperatorNamespace {
			return false, nil, nil
		}
		opts, _ := a.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions)
		return true, &runtime.Unknown{Raw: []byte(log.text(now(), opts))}, nil
	})
}

// text is the operator's recent log: the reconcile lines, then the stand-in's lines since opts.SinceTime.
func (l *operatorLog) text(now time.Time, opts *corev1.PodLogOptions) string {
	var lines []string
	for i := 40; i >= 1 && len(l.nodes) > 0; i-- {
		w := l.nodes[i%len(l.nodes)]
		at := now.Add(-time.Duration(i) * 3 * time.Second)
		lines = append(lines, stamp(at, opts)+reconcileLine(w, at))
	}
	l.mu.Lock()
	for _, sl := range l.lines {
		if opts == nil || opts.SinceTime == nil || !sl.at.Before(opts.SinceTime.Time) {
			lines = append(lines, stamp(sl.at, opts)+sl.text)
		}
	}
	l.mu.Unlock()
	if opts != nil && opts.TailLines != nil && int(*opts.TailLines) < len(lines) {
		lines = lines[len(lines)-int(*opts.TailLines):]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

func stamp(at time.Time, opts *corev1.PodLogOptions) string {
	if opts != nil && opts.Timestamps {
		return at.UTC().Format(time.RFC3339Nano) + " "
	}
	return ""
}

// reconcileLine is what the operator says about one node when it looks at it.
func reconcileLine(w WindowsNode, at time.Time) string {
	ts := at.UTC().Format("2006-01-02T15:04:05Z")
	who := fmt.Sprintf(`"node": %q, "address": %q`, NodeName(w.IP), w.IP)
	switch {
	case w.Standalone:
		return fmt.Sprintf(`%s	INFO	controllers.node	not ours: no Machine and not in windows-instances	{%s}`, ts, who)
	case w.Joining:
		return fmt.Sprintf(`%s	INFO	controllers.machine	configuring the instance	{%s, "machine": %q}`, ts, who, w.Machine)
	case w.KubeletOff:
		return fmt.Sprintf(`%s	ERROR	controllers.node	node is not Ready: the kubelet service is stopped	{%s}`, ts, who)
	case w.Version != currentWMCO:
		return fmt.Sprintf(`%s	INFO	controllers.node	waiting to upgrade: another Machine of the MachineSet is not healthy	{%s, "version": %q}`, ts, who, w.Version)
	}
	return fmt.Sprintf(`%s	INFO	controllers.node	instance is up to date	{%s, "version": %q}`, ts, who, w.Version)
}
