package setup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

func init() {
	actions.Register(runRuntimeClassEnsure)
	actions.Register(runSmokeTest)
}

// windowsToleration is the toleration of the taint every Windows node carries (os=Windows:NoSchedule).
var windowsToleration = corev1.Toleration{Key: "os", Operator: corev1.TolerationOpEqual, Value: "Windows", Effect: corev1.TaintEffectNoSchedule}

// WindowsRuntimeClass is the RuntimeClass that sends pods to Windows nodes of build: the documented
// nodeSelector (kubernetes.io/os=windows, node.kubernetes.io/windows-build) and the toleration of the
// os=Windows:NoSchedule taint. Its handler is containerd's default runtime (runhcs-wcow-process).
func WindowsRuntimeClass(name, build string) *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "node.k8s.io/v1", Kind: "RuntimeClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Handler:    "runhcs-wcow-process",
		Scheduling: &nodev1.Scheduling{
			NodeSelector: map[string]string{config.OSLabel: "windows", config.WindowsBuildLabel: build},
			Tolerations:  []corev1.Toleration{windowsToleration},
		},
	}
}

// RuntimeClassFits says why rc does not send pods to Windows nodes of build, "" when it does.
func RuntimeClassFits(rc *nodev1.RuntimeClass, build string) string {
	if rc.Scheduling == nil {
		return "it has no scheduling (nodeSelector and tolerations)"
	}
	sel := rc.Scheduling.NodeSelector
	if sel[config.OSLabel] != "windows" {
		return "its nodeSelector does not require " + config.OSLabel + "=windows"
	}
	if sel[config.WindowsBuildLabel] != build {
		return fmt.Sprintf("its nodeSelector's %s is %q, not %q", config.WindowsBuildLabel, sel[config.WindowsBuildLabel], build)
	}
	for _, t := range rc.Scheduling.Tolerations {
		if tolerates(t, "os", "Windows", corev1.TaintEffectNoSchedule) {
			return ""
		}
	}
	return "it does not tolerate the os=Windows:NoSchedule taint"
}

// newestWindowsBuild is the build of the newest Ready Windows node, and its name.
func newestWindowsBuild(ctx context.Context, ops actions.SetupCluster) (string, string, error) {
	f, err := ops.SetupFacts(ctx)
	if err != nil {
		return "", "", err
	}
	n := newestReady(f.Nodes)
	if n == nil {
		return "", "", errors.New("no Windows node is Ready: the RuntimeClass is made for a Ready node's Windows build")
	}
	if n.WindowsBuild == "" {
		return "", "", fmt.Errorf("node %s has no %s label", n.Name, config.WindowsBuildLabel)
	}
	return n.WindowsBuild, n.Name, nil
}

func runRuntimeClassEnsure(ctx context.Context, b actions.Backends, req request.RuntimeClassEnsure, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Targets()[0]}
	s, err := b.GuidedSetup()
	if err != nil {
		return r.Fail("runtimeclass", err, "")
	}
	build := req.Build
	if build == "" {
		if build, _, err = newestWindowsBuild(ctx, s.Ops); err != nil {
			return r.Fail("runtimeclass", err, "")
		}
	}
	name := req.Name
	if name == "" {
		name = request.DefaultRuntimeClassName(build)
	}
	r.Target = name
	want := WindowsRuntimeClass(name, build)
	have, err := s.Ops.RuntimeClass(ctx, name)
	if err != nil {
		return r.Fail("runtimeclass", err, "")
	}
	if have != nil {
		if why := RuntimeClassFits(have, build); why != "" {
			return r.Fail("runtimeclass", fmt.Errorf("RuntimeClass %s exists but does not fit Windows build %s: %s", name, build, why),
				"choose another name (--runtime-class NAME), or fix it: oc edit runtimeclass "+name)
		}
	}
	if req.Preview {
		plan := event.Plan{Title: "RuntimeClass " + name + " for Windows build " + build, YAML: yamlOf(want),
			Commands: []string{"oc create -f FILE   # FILE holding the YAML above"}}
		if have != nil {
			plan.Summary = []string{"RuntimeClass " + name + " already exists and fits: it is reused, nothing is created"}
			plan.YAML = yamlOf(have)
		} else {
			plan.Summary = []string{"create RuntimeClass " + name + ": pods naming it run on Windows nodes of build " + build + " (nodeSelector) despite their os=Windows:NoSchedule taint (toleration)"}
		}
		return showPlan(r, plan)
	}
	r.Started("runtimeclass", "RuntimeClass "+name+" for Windows build "+build)
	if have != nil {
		r.Done("runtimeclass", "RuntimeClass "+name+" already exists and fits: reused")
		r.Finish(event.Succeeded, "pods with runtimeClassName: "+name+" run on Windows build "+build, "")
		return nil
	}
	if err := s.Ops.CreateRuntimeClass(ctx, want); err != nil {
		return r.Fail("runtimeclass", err, "")
	}
	r.Done("runtimeclass", "created RuntimeClass "+name)
	r.Finish(event.Succeeded, "pods with runtimeClassName: "+name+" run on Windows build "+build, "")
	return nil
}

// showPlan reports a preview: one PlanShown event, then Finished. Nothing was changed.
func showPlan(r event.Reporter, p event.Plan) error {
	r.Emit(event.Event{Kind: event.PlanShown, Step: "plan", Message: p.Title, Plan: &p})
	r.Finish(event.Succeeded, "preview: nothing changed", "")
	return nil
}

func yamlOf(obj any) string {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return "# " + err.Error()
	}
	return string(b)
}

// smokeImage is the small Windows image of a build: the nanoserver image whose tag matches the node's
// Windows Server release (process isolation needs the host's build).
func smokeImage(build string) string {
	switch {
	case strings.HasPrefix(build, "10.0.17763"):
		return "mcr.microsoft.com/windows/nanoserver:ltsc2019"
	case strings.HasPrefix(build, "10.0.26100"):
		return "mcr.microsoft.com/windows/nanoserver:ltsc2025"
	}
	return "mcr.microsoft.com/windows/nanoserver:ltsc2022"
}

// smokePod is the smoke test's pod: one container that stays up, on the node, with the RuntimeClass.
func smokePod(req request.SmokeTest, build string) *corev1.Pod {
	image := req.Image
	if image == "" {
		image = smokeImage(build)
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: smokePodName(req.Node), Namespace: req.Namespace,
			Labels: map[string]string{"app.kubernetes.io/name": "wmcon-smoke-test", "app.kubernetes.io/managed-by": "wmcon"}},
		Spec: corev1.PodSpec{
			RuntimeClassName: ptr.To(req.RuntimeClass),
			// Bound to the node directly: the smoke test is about this node, not about the scheduler (the
			// RuntimeClass admission adds its nodeSelector and toleration, which the kubelet checks).
			NodeName:                      req.Node,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers: []corev1.Container{{Name: "smoke", Image: image,
				Command: []string{"cmd.exe", "/c", "echo wmcon smoke test & ping -t 127.0.0.1 > nul"}}},
		},
	}
}

// smokePodName is the smoke-test pod's name for node: the same in the preview and the run, and a pod a
// crashed run left behind is found again (and replaced).
func smokePodName(node string) string {
	name := "wmcon-smoke-" + strings.ToLower(node)
	if len(name) > 63 {
		name = name[:63]
	}
	return strings.TrimRight(name, "-.")
}

func runSmokeTest(ctx context.Context, b actions.Backends, req request.SmokeTest, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Node}
	s, err := b.GuidedSetup()
	if err != nil {
		return r.Fail("smoke-test", err, "")
	}
	if req.Node == "" || req.RuntimeClass == "" {
		return r.Fail("smoke-test", errors.New("the smoke test needs a node and a RuntimeClass"), "")
	}
	if req.Namespace == "" {
		req.Namespace = "default"
	}
	build, err := nodeBuild(ctx, s.Ops, req.Node)
	if err != nil {
		return r.Fail("smoke-test", err, "")
	}
	pod := smokePod(req, build)
	if req.Preview {
		return showPlan(r, event.Plan{Title: "smoke test: a Windows pod on " + req.Node,
			Summary: []string{"create pod " + req.Namespace + "/" + pod.Name + " (" + pod.Spec.Containers[0].Image + ") with RuntimeClass " + req.RuntimeClass + " on node " + req.Node,
				"wait until it is Running (its events if it is not), then delete it"},
			YAML: yamlOf(pod), Commands: []string{"oc create -f FILE   # FILE holding the YAML above", "oc delete pod -n " + cmdline.Quote(req.Namespace) + " " + cmdline.Quote(pod.Name)}})
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	r.Started("create", "pod "+req.Namespace+"/"+pod.Name+" with RuntimeClass "+req.RuntimeClass)
	if old, err := s.Ops.Pod(ctx, pod.Namespace, pod.Name); err == nil && old != nil && old.Labels["app.kubernetes.io/managed-by"] == "wmcon" {
		r.Log("create", "removing the smoke-test pod an earlier run left")
		if err := s.Ops.DeletePod(ctx, pod.Namespace, pod.Name); err != nil {
			return r.Fail("create", err, "")
		}
		if err := waitGone(ctx, s.Ops, pod.Namespace, pod.Name); err != nil {
			return r.Fail("create", err, "")
		}
	}
	created, err := s.Ops.CreatePod(ctx, pod)
	if err != nil {
		return r.Fail("create", err, "")
	}
	r.Done("create", "created pod "+req.Namespace+"/"+created.Name)
	runErr := waitRunning(ctx, s.Ops, created, timeout, r)
	// The pod is removed whatever happened, with a context of its own: a cancelled run still cleans up.
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	r.Started("delete", "removing the smoke-test pod")
	if err := s.Ops.DeletePod(cleanup, created.Namespace, created.Name); err != nil {
		r.Failed("delete", err, "delete it: oc delete pod -n "+created.Namespace+" "+created.Name)
		if runErr == nil {
			runErr = err
		}
	} else {
		r.Done("delete", "pod "+created.Name+" deleted")
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			r.Finish(event.Cancelled, "smoke test cancelled; its pod was removed", "")
			return runErr
		}
		r.Finish(event.Failed, "the smoke-test pod did not run on "+req.Node, "see the events above; check the node: "+event.Run("triage", req.Node))
		return runErr
	}
	r.Finish(event.Succeeded, "a Windows pod ran on "+req.Node+" with RuntimeClass "+req.RuntimeClass+", and was removed", "")
	return nil
}

func nodeBuild(ctx context.Context, ops actions.SetupCluster, node string) (string, error) {
	f, err := ops.SetupFacts(ctx)
	if err != nil {
		return "", err
	}
	for _, n := range f.Nodes {
		if n.Name == node {
			if n.Status != model.NodeReady {
				return "", fmt.Errorf("node %s is not Ready", node)
			}
			return n.WindowsBuild, nil
		}
	}
	return "", fmt.Errorf("no Windows node %s", node)
}

// waitRunning reports the pod until it is Running with every container running, or fails with its events
// and conditions when it is not within timeout (or ends as Failed/Succeeded).
func waitRunning(ctx context.Context, ops actions.SetupCluster, pod *corev1.Pod, timeout time.Duration, r event.Reporter) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.Started("run", "waiting for the pod to run on "+pod.Spec.NodeName)
	last, seen := "", map[string]bool{}
	for {
		p, err := ops.Pod(ctx, pod.Namespace, pod.Name)
		if err != nil && ctx.Err() == nil {
			return failStep(r, "run", err, "")
		}
		if p == nil && err == nil {
			return failStep(r, "run", errors.New("the pod disappeared"), "")
		}
		if p != nil {
			if msg := podState(p); msg != last {
				r.Progress("run", 0, 0, msg)
				last = msg
			}
			if podEvents(ctx, ops, p, seen, r); podRunning(p) {
				r.Done("run", "pod "+p.Name+" Running on "+p.Spec.NodeName)
				return nil
			}
			if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
				return failStep(r, "run", fmt.Errorf("the pod ended %s: %s", p.Status.Phase, last), "")
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return failStep(r, "run", fmt.Errorf("not Running after %s: %s", timeout, last), "")
			}
			r.Failed("run", ctx.Err(), "")
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func failStep(r event.Reporter, step string, err error, hint string) error {
	r.Emit(event.FailedStep(step, "the pod did not run", err, hint))
	return err
}

// waitGone waits (up to a minute) until the pod no longer exists.
func waitGone(ctx context.Context, ops actions.SetupCluster, ns, name string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		p, err := ops.Pod(ctx, ns, name)
		if err == nil && p == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pod %s/%s is still there: %w", ns, name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func podEvents(ctx context.Context, ops actions.SetupCluster, p *corev1.Pod, seen map[string]bool, r event.Reporter) {
	evs, err := ops.PodEvents(ctx, p.Namespace, p.Name)
	if err != nil {
		return
	}
	for _, e := range evs {
		k := e.Reason + "/" + e.Message
		if !seen[k] {
			seen[k] = true
			r.Log("run", fmt.Sprintf("event %s %s: %s", e.Type, e.Reason, e.Message))
		}
	}
}

func podRunning(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil {
			return false
		}
	}
	return true
}

// podState is one line: the phase, where it is scheduled, unmet conditions and each container's state.
func podState(p *corev1.Pod) string {
	parts := []string{"phase " + string(p.Status.Phase)}
	if p.Status.Phase == "" {
		parts[0] = "phase Pending"
	}
	if p.Spec.NodeName != "" {
		parts = append(parts, "on "+p.Spec.NodeName)
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			parts = append(parts, string(c.Type)+": "+c.Message)
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Running != nil:
			parts = append(parts, "container "+c.Name+" running")
		case c.State.Waiting != nil:
			parts = append(parts, "container "+c.Name+" waiting: "+c.State.Waiting.Reason+orEmpty(" ", c.State.Waiting.Message))
		case c.State.Terminated != nil:
			parts = append(parts, fmt.Sprintf("container %s terminated: %s (exit %d)", c.Name, c.State.Terminated.Reason, c.State.Terminated.ExitCode))
		}
	}
	return strings.Join(parts, ", ")
}

// tolerates says whether t tolerates the taint key=value:effect (an empty effect or key matches all, as the
// API defines).
func tolerates(t corev1.Toleration, key, value string, effect corev1.TaintEffect) bool {
	if t.Effect != "" && t.Effect != effect {
		return false
	}
	if t.Key != "" && t.Key != key {
		return false
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpEqual, "":
		return t.Value == value
	}
	return false
}
