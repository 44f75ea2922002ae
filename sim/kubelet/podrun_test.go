package kubelet_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/scheduler"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// podHost is a host whose kubelet and containerd run, with a containerd configuration file.
type podHost struct {
	containerd atomic.Bool
	mu         sync.Mutex
	files      map[string][]byte
}

func (h *podHost) Up() bool { return true }
func (h *podHost) ServiceRunning(s string) bool {
	return s == "kubelet" || (s == "containerd" && h.containerd.Load())
}
func (h *podHost) ReadFile(p string) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d, ok := h.files[p]; ok {
		return d, nil
	}
	return nil, &notFoundErr{p}
}

type notFoundErr struct{ p string }

func (e *notFoundErr) Error() string { return e.p + ": The system cannot find the file specified." }

// windowsRuntimeClass is the documented RuntimeClass for Windows Server 2022 nodes, with a handler.
func windowsRuntimeClass(name, handler, build string) *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler,
		Scheduling: &nodev1.Scheduling{
			NodeSelector: map[string]string{config.OSLabel: "windows", config.WindowsBuildLabel: build},
			Tolerations:  []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "Windows", Effect: corev1.TaintEffectNoSchedule}},
		}}
}

func appPod(name string, mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"}}
	p.Spec.AutomountServiceAccountToken = new(bool)
	p.Spec.Containers = []corev1.Container{{Name: "web", Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func podEvents(ctx context.Context, kube kubernetes.Interface, name string) []corev1.Event {
	l, err := kube.CoreV1().Events("apps").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String()})
	if err != nil {
		return nil
	}
	return l.Items
}

func hasEvent(ctx context.Context, kube kubernetes.Interface, pod, reason, msgPart string) bool {
	for _, e := range podEvents(ctx, kube, pod) {
		if e.Reason == reason && strings.Contains(e.Message, msgPart) {
			return true
		}
	}
	return false
}

func getPod(ctx context.Context, kube kubernetes.Interface, name string) *corev1.Pod {
	p, err := kube.CoreV1().Pods("apps").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

// The real API server decides admission (RuntimeClass scheduling merged, unknown RuntimeClasses refused),
// binding and deletion; the scheduler stand-in binds, the simulated kubelet runs or refuses.
func TestPodsRunOnSimulatedWindowsNodes(t *testing.T) {
	srv := kubeapi.Start(t, kubeapi.WithNamespaces("apps"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	_, err := kube.CoreV1().ServiceAccounts("apps").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	win := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1", Labels: map[string]string{
		config.OSLabel: "windows", config.WindowsBuildLabel: "10.0.20348", corev1.LabelHostname: "win-1"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "os", Value: "Windows", Effect: corev1.TaintEffectNoSchedule}}}}
	lin := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "linux-1", Labels: map[string]string{config.OSLabel: "linux"}}}
	for _, n := range []*corev1.Node{win, lin} {
		_, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for _, rc := range []*nodev1.RuntimeClass{
		windowsRuntimeClass("windows-2022", "runhcs-wcow-process", "10.0.20348"),
		windowsRuntimeClass("windows-custom", "runhcs-wcow-custom", "10.0.20348"),
		windowsRuntimeClass("windows-2019", "runhcs-wcow-process", "10.0.17763"),
	} {
		_, err := kube.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	host := &podHost{files: map[string][]byte{}}
	host.containerd.Store(true)
	kubelets := kubelet.New(kube, map[string]kubelet.Host{"win-1": host, "linux-1": host},
		kubelet.Options{Interval: 100 * time.Millisecond, Grace: time.Hour})
	go kubelets.Run(ctx)
	poll(t, "the nodes Ready", 20*time.Second, func(ctx context.Context) bool {
		return readyStatusOf(ctx, kube, "win-1") == corev1.ConditionTrue && readyStatusOf(ctx, kube, "linux-1") == corev1.ConditionTrue
	})
	// The API server's TaintNodesByCondition admission tainted the new nodes not-ready; with no node
	// lifecycle controller in this test, the test lifts the taint as that controller does once they are Ready.
	for _, name := range []string{"win-1", "linux-1"} {
		n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		var kept []corev1.Taint
		for _, tn := range n.Spec.Taints {
			if tn.Key != corev1.TaintNodeNotReady {
				kept = append(kept, tn)
			}
		}
		require.Len(t, kept, len(n.Spec.Taints)-1, "the API server tainted %s not-ready", name)
		n.Spec.Taints = kept
		_, err = kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	sched := scheduler.New(kube)
	sched.OnError = func(err error) { t.Log("scheduler:", err) }
	go sched.Run(ctx, 100*time.Millisecond)

	create := func(p *corev1.Pod) {
		t.Helper()
		_, err := kube.CoreV1().Pods("apps").Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	t.Run("a pod with the Windows RuntimeClass is scheduled onto the Windows node and runs", func(t *testing.T) {
		create(appPod("iis", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("windows-2022") }))
		poll(t, "iis Running", 30*time.Second, func(ctx context.Context) bool {
			p := getPod(ctx, kube, "iis")
			return p != nil && p.Status.Phase == corev1.PodRunning
		})
		p := getPod(ctx, kube, "iis")
		assert.Equal(t, "win-1", p.Spec.NodeName)
		assert.Equal(t, "windows", p.Spec.NodeSelector[config.OSLabel], "the API server's RuntimeClass admission added the scheduling")
		require.Len(t, p.Status.ContainerStatuses, 1)
		cs := p.Status.ContainerStatuses[0]
		assert.Equal(t, "web", cs.Name)
		assert.True(t, cs.Ready)
		assert.True(t, ptr.Deref(cs.Started, false))
		assert.NotNil(t, cs.State.Running)
		assert.Equal(t, "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022", cs.Image)
		assert.True(t, strings.HasPrefix(cs.ContainerID, "containerd://"))
		assert.NotEmpty(t, p.Status.PodIP)
		assert.True(t, hasEvent(ctx, kube, "iis", "Scheduled", "Successfully assigned apps/iis to win-1"))
		assert.True(t, hasEvent(ctx, kube, "iis", "Started", "Started container web"))

		require.NoError(t, kube.CoreV1().Pods("apps").Delete(ctx, "iis", metav1.DeleteOptions{}))
		poll(t, "iis gone", 20*time.Second, func(ctx context.Context) bool {
			_, err := kube.CoreV1().Pods("apps").Get(ctx, "iis", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	})

	t.Run("a pod that does not tolerate the Windows taint is not scheduled", func(t *testing.T) {
		create(appPod("no-toleration", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{config.OSLabel: "windows"} }))
		want := "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {os: Windows}. " +
			"preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
		poll(t, "FailedScheduling", 20*time.Second, func(ctx context.Context) bool {
			return hasEvent(ctx, kube, "no-toleration", "FailedScheduling", want)
		})
		p := getPod(ctx, kube, "no-toleration")
		assert.Empty(t, p.Spec.NodeName)
		assert.Contains(t, p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: want, LastTransitionTime: p.Status.Conditions[0].LastTransitionTime})
	})

	t.Run("a RuntimeClass for another Windows build matches no node", func(t *testing.T) {
		create(appPod("wrong-build", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("windows-2019") }))
		poll(t, "FailedScheduling", 20*time.Second, func(ctx context.Context) bool {
			return hasEvent(ctx, kube, "wrong-build", "FailedScheduling", "2 node(s) didn't match Pod's node affinity/selector")
		})
	})

	t.Run("the API server refuses a RuntimeClass that does not exist", func(t *testing.T) {
		_, err := kube.CoreV1().Pods("apps").Create(ctx, appPod("missing-rc", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("windows-nope") }), metav1.CreateOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `RuntimeClass "windows-nope" not found`)
	})

	t.Run("a handler containerd does not have fails the sandbox", func(t *testing.T) {
		create(appPod("custom", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("windows-custom") }))
		poll(t, "FailedCreatePodSandBox", 20*time.Second, func(ctx context.Context) bool {
			return hasEvent(ctx, kube, "custom", "FailedCreatePodSandBox", `no runtime for "runhcs-wcow-custom" is configured`)
		})
		p := getPod(ctx, kube, "custom")
		assert.Equal(t, corev1.PodPending, p.Status.Phase)
		require.Len(t, p.Status.ContainerStatuses, 1)
		require.NotNil(t, p.Status.ContainerStatuses[0].State.Waiting)
		assert.Equal(t, "ContainerCreating", p.Status.ContainerStatuses[0].State.Waiting.Reason)

		// Once containerd's configuration declares the runtime (and the pod is retried), it runs.
		host.mu.Lock()
		host.files[`C:\k\containerd\containerd_conf.toml`] = []byte("version = 2\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n" +
			"    [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runhcs-wcow-custom]\n        runtime_type = \"io.containerd.runhcs.v1\"\n")
		host.mu.Unlock()
		poll(t, "custom Running", 20*time.Second, func(ctx context.Context) bool {
			p := getPod(ctx, kube, "custom")
			return p != nil && p.Status.Phase == corev1.PodRunning
		})
	})

	t.Run("a pod bound directly to a node it does not select is rejected by the kubelet", func(t *testing.T) {
		create(appPod("bound-wrong", func(p *corev1.Pod) {
			p.Spec.NodeName = "win-1"
			p.Spec.NodeSelector = map[string]string{config.WindowsBuildLabel: "10.0.17763"}
		}))
		poll(t, "bound-wrong Failed", 20*time.Second, func(ctx context.Context) bool {
			p := getPod(ctx, kube, "bound-wrong")
			return p != nil && p.Status.Phase == corev1.PodFailed
		})
		p := getPod(ctx, kube, "bound-wrong")
		assert.Equal(t, "NodeAffinity", p.Status.Reason)
		assert.Equal(t, "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector", p.Status.Message)
		assert.True(t, hasEvent(ctx, kube, "bound-wrong", "NodeAffinity", "node(s) didn't match"))
	})

	t.Run("an image of another Windows release cannot start", func(t *testing.T) {
		create(appPod("old-image", func(p *corev1.Pod) {
			p.Spec.RuntimeClassName = ptr.To("windows-2022")
			p.Spec.Containers[0].Image = "mcr.microsoft.com/windows/nanoserver:ltsc2019"
		}))
		poll(t, "CreateContainerError", 20*time.Second, func(ctx context.Context) bool {
			p := getPod(ctx, kube, "old-image")
			return p != nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
				p.Status.ContainerStatuses[0].State.Waiting.Reason == "CreateContainerError"
		})
		assert.True(t, hasEvent(ctx, kube, "old-image", "Failed", "The container operating system does not match the host operating system"))
	})

	t.Run("without containerd no sandbox is created", func(t *testing.T) {
		host.containerd.Store(false)
		defer host.containerd.Store(true)
		create(appPod("no-runtime", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("windows-2022") }))
		poll(t, "FailedCreatePodSandBox", 20*time.Second, func(ctx context.Context) bool {
			return hasEvent(ctx, kube, "no-runtime", "FailedCreatePodSandBox", "containerd-containerd")
		})
		assert.NotEqual(t, corev1.PodRunning, getPod(ctx, kube, "no-runtime").Status.Phase)
	})
}
