package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
)

// OperatorLogLine is a line of the operator's pod log, with the time the container runtime stamped on it.
type OperatorLogLine struct {
	Time time.Time
	Text string
}

// OperatorLogOptions say which lines of the operator's log OperatorLog returns.
type OperatorLogOptions struct {
	// Since is the time of the last line already seen: lines stamped before it are not read (zero: the
	// last Tail lines).
	Since time.Time
	Tail  int64
	// About are the host's address, node name and Machine name: a line is returned when it names one of
	// them as a whole word (WMCO's loggers are "wc <address>" and "nc <address>", its key-values name the
	// node and the Machine).
	About []string
}

// OperatorLog reads the operator's pod log (the Running pod selected by config.OperatorPodSelector in the
// operator's namespace, container config.OperatorContainer) and returns its lines about one host, oldest
// first. No pod (the operator is not running, or it is not installed) gives no lines and no error.
func (o *Ops) OperatorLog(ctx context.Context, opts OperatorLogOptions) ([]OperatorLogLine, error) {
	pods, err := o.c.Kube.CoreV1().Pods(config.OperatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: config.OperatorPodSelector})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the operator's pods: %w", err)
	}
	var pod *corev1.Pod
	for i := range pods.Items {
		if pods.Items[i].Status.Phase == corev1.PodRunning {
			pod = &pods.Items[i]
			break
		}
	}
	if pod == nil {
		return nil, nil
	}
	lo := &corev1.PodLogOptions{Container: config.OperatorContainer, Timestamps: true}
	if opts.Since.IsZero() {
		tail := opts.Tail
		if tail <= 0 {
			tail = 200
		}
		lo.TailLines = &tail
	} else {
		t := metav1.NewTime(opts.Since)
		lo.SinceTime = &t
	}
	raw, err := o.c.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, lo).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the operator's log (pod %s/%s): %w", pod.Namespace, pod.Name, err)
	}
	return aboutHost(raw, opts), nil
}

// aboutHost parses "<RFC3339 time> <line>" lines and keeps those naming one of opts.About, at or after
// opts.Since (the API's sinceTime has a resolution of a second).
func aboutHost(raw []byte, opts OperatorLogOptions) []OperatorLogLine {
	var words []*regexp.Regexp
	for _, a := range opts.About {
		if a != "" {
			words = append(words, regexp.MustCompile(`(^|[^A-Za-z0-9.\-])`+regexp.QuoteMeta(a)+`($|[^A-Za-z0-9\-.]|\.($|[^0-9A-Za-z]))`))
		}
	}
	var out []OperatorLogLine
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		stamp, text, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil || t.Before(opts.Since) {
			continue
		}
		for _, w := range words {
			if w.MatchString(text) {
				out = append(out, OperatorLogLine{Time: t, Text: text})
				break
			}
		}
	}
	return out
}
