package kubelet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"k8s.io/kubectl/pkg/util/qos"

	"github.com/wmcon/wmcon/config"
)

// PodHost is what running pods needs from a host: its services (containerd must run) and its files
// (containerd's configuration says which runtime handlers exist). windows.Host and windows.Process have both.
type PodHost interface {
	ServiceRunning(name string) bool
	ReadFile(winPath string) ([]byte, error)
}

// containerdConfigPath is where WMCO puts containerd's configuration.
const containerdConfigPath = `C:\k\containerd\containerd_conf.toml`

// containerdDefaultHandlers are the runtime handlers containerd 1.7 on Windows has without any
// configuration; a configuration file adds to them (its runtimes table is merged over the defaults).
var containerdDefaultHandlers = []string{"runhcs-wcow-process", "runhcs-wcow-hypervisor"}

// podRunner is one node's kubelet running the pods bound to that node: it admits each pod as the kubelet
// does (node selector and required node affinity, NoExecute taints), creates its sandbox with the
// RuntimeClass's handler (which containerd must know), starts its containers, and reports Running with
// each container's state — or the kubelet's events and status when one of these fails. It never schedules:
// a pod reaches it only once bound (spec.nodeName), by a scheduler or by whoever created it.
type podRunner struct {
	kube kubernetes.Interface
	node string
	host PodHost // nil: a host that cannot be read (containerd's defaults are assumed)

	mu       sync.Mutex
	reported map[types.UID]map[string]bool // events already recorded per pod (reason/message), recorded once
	ips      map[types.UID]string
	nextIP   int
}

func newPodRunner(kube kubernetes.Interface, node string, host PodHost) *podRunner {
	return &podRunner{kube: kube, node: node, host: host, reported: map[types.UID]map[string]bool{}, ips: map[types.UID]string{}}
}

// podInformer watches the pods bound to node and calls seen with each added or changed one.
func podInformer(ctx context.Context, kube kubernetes.Interface, node string, seen func(*corev1.Pod)) cache.SharedInformer {
	pods := kube.CoreV1().Pods(metav1.NamespaceAll)
	sel := fields.OneTermEqualSelector("spec.nodeName", node).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return pods.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedInformer(cache.ToListWatcherWithWatchListSemantics(lw, kube), &corev1.Pod{}, 0)
	call := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName == node { // fake clientsets ignore field selectors
			seen(p)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    call,
		UpdateFunc: func(_, obj any) { call(obj) },
	})
	go inf.RunWithContext(ctx)
	return inf
}

// sync moves one pod of this node on as far as it can go now; it is called again on every change of the
// pod and on the kubelet's periodic resync, and does nothing once the pod runs or has ended.
func (r *podRunner) sync(ctx context.Context, p *corev1.Pod) {
	if p.Spec.NodeName != r.node {
		return
	}
	if p.DeletionTimestamp != nil {
		finalizePod(ctx, r.kube, p)
		r.forget(p.UID)
		return
	}
	if podRunningAll(p) {
		runOnHost(r.host, p) // its containers run on the host (containers.go)
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || podRunningAll(p) {
		return
	}
	node, err := r.kube.CoreV1().Nodes().Get(ctx, r.node, metav1.GetOptions{})
	if err != nil {
		return // retried on the next resync
	}
	if reason, msg := admit(node, p); reason != "" {
		r.reject(ctx, p, reason, msg)
		return
	}
	if msg := r.sandboxProblem(ctx, p); msg != "" {
		r.event(ctx, p, "", corev1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: "+msg)
		r.update(ctx, p, r.pendingStatus(p, node, "ContainerCreating", ""))
		return
	}
	r.startContainers(ctx, p, node)
}

// admit is the kubelet's admission of a pod bound to it: the node must match the pod's node selector and
// required node affinity, and the pod must tolerate the node's NoExecute taints (NoSchedule taints are the
// scheduler's business: a pod bound directly is run despite them, as by a real kubelet).
func admit(node *corev1.Node, p *corev1.Pod) (reason, message string) {
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(p).Match(node); !ok {
		return "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
	}
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute && !toleratedBy(t, p.Spec.Tolerations) {
			return "Taint", fmt.Sprintf("Predicate TaintToleration failed: node(s) had untolerated taint {%s: %s}", t.Key, t.Value)
		}
	}
	if p.Spec.OS != nil && p.Spec.OS.Name != corev1.Windows {
		return "PodOSNotSupported", fmt.Sprintf("Failed to admit pod as the OS field doesn't match node OS: pod OS %s, node OS windows", p.Spec.OS.Name)
	}
	return "", ""
}

func toleratedBy(t corev1.Taint, tols []corev1.Toleration) bool {
	for i := range tols {
		if tols[i].ToleratesTaint(klogDiscard, &t, false) {
			return true
		}
	}
	return false
}

// reject fails the pod as the kubelet rejects one it may not run: phase Failed, the reason, and an event.
func (r *podRunner) reject(ctx context.Context, p *corev1.Pod, reason, msg string) {
	r.event(ctx, p, "", corev1.EventTypeWarning, reason, msg)
	st := p.Status.DeepCopy()
	st.Phase, st.Reason, st.Message = corev1.PodFailed, reason, "Pod was rejected: "+msg
	r.update(ctx, p, *st)
}

// sandboxProblem says why the pod's sandbox cannot be created ("" when it can): containerd must run and
// know the handler of the pod's RuntimeClass.
func (r *podRunner) sandboxProblem(ctx context.Context, p *corev1.Pod) string {
	if r.host != nil && !r.host.ServiceRunning("containerd") {
		return `rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: open \\\\.\\pipe\\containerd-containerd: The system cannot find the file specified."`
	}
	if p.Spec.RuntimeClassName == nil || *p.Spec.RuntimeClassName == "" {
		return ""
	}
	rc, err := r.kube.NodeV1().RuntimeClasses().Get(ctx, *p.Spec.RuntimeClassName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("RuntimeClass %q not found", *p.Spec.RuntimeClassName)
	}
	if err != nil {
		return fmt.Sprintf("failed to look up RuntimeClass %q: %v", *p.Spec.RuntimeClassName, err)
	}
	for _, h := range r.runtimeHandlers() {
		if h == rc.Handler {
			return ""
		}
	}
	return fmt.Sprintf("rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for %q is configured", rc.Handler)
}

// runtimeHandlers are the runtimes containerd has: its defaults plus those its configuration file declares.
func (r *podRunner) runtimeHandlers() []string {
	out := append([]string(nil), containerdDefaultHandlers...)
	if r.host == nil {
		return out
	}
	data, err := r.host.ReadFile(containerdConfigPath)
	if err != nil {
		return out
	}
	var conf struct {
		Plugins map[string]struct {
			Containerd struct {
				Runtimes map[string]any `toml:"runtimes"`
			} `toml:"containerd"`
		} `toml:"plugins"`
	}
	if err := toml.Unmarshal(data, &conf); err != nil {
		return out
	}
	for name := range conf.Plugins["io.containerd.grpc.v1.cri"].Containerd.Runtimes {
		out = append(out, name)
	}
	return out
}

// startContainers pulls and starts each container, or leaves the pod Pending with the container runtime's
// error when an image cannot run on this host.
func (r *podRunner) startContainers(ctx context.Context, p *corev1.Pod, node *corev1.Node) {
	build := node.Labels[config.WindowsBuildLabel]
	for _, c := range p.Spec.Containers {
		if msg := imageProblem(c.Image, build); msg != "" {
			r.event(ctx, p, c.Name, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", c.Image))
			r.event(ctx, p, c.Name, corev1.EventTypeWarning, "Failed", "Error: "+msg)
			r.update(ctx, p, r.pendingStatus(p, node, "CreateContainerError", msg))
			return
		}
	}
	for _, c := range p.Spec.Containers {
		r.event(ctx, p, c.Name, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", c.Image))
		r.event(ctx, p, c.Name, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Successfully pulled image %q", c.Image))
		r.event(ctx, p, c.Name, corev1.EventTypeNormal, "Created", "Created container: "+c.Name)
		r.event(ctx, p, c.Name, corev1.EventTypeNormal, "Started", "Started container "+c.Name)
	}
	r.update(ctx, p, r.runningStatus(p, node))
}

// imageProblem is the error Windows gives when a process-isolated container's image was built for another
// Windows Server release than the host's ("" when the tag names none, or the host's).
func imageProblem(image, build string) string {
	releases := map[string]string{"ltsc2019": "10.0.17763", "1809": "10.0.17763", "ltsc2022": "10.0.20348", "ltsc2025": "10.0.26100"}
	ref := image
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		ref = ref[i+1:]
	}
	_, tag, ok := strings.Cut(ref, ":")
	if !ok || build == "" {
		return ""
	}
	for rel, b := range releases {
		if strings.Contains(tag, rel) && !strings.HasPrefix(build, b) {
			return "failed to create containerd container: hcs::CreateComputeSystem: The container operating system does not match the host operating system."
		}
	}
	return ""
}

// pendingStatus is a pod whose containers wait (reason and message as the kubelet reports them).
func (r *podRunner) pendingStatus(p *corev1.Pod, node *corev1.Node, reason, msg string) corev1.PodStatus {
	st := r.baseStatus(p, node)
	st.Phase = corev1.PodPending
	for _, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}, Started: new(bool)})
	}
	notReady := "containers with unready status: [" + containerNames(p) + "]"
	st.Conditions = conditions(p, map[corev1.PodConditionType]corev1.ConditionStatus{corev1.PodReadyToStartContainers: ifTrue(reason != "ContainerCreating"),
		corev1.PodInitialized: corev1.ConditionTrue, corev1.ContainersReady: corev1.ConditionFalse, corev1.PodReady: corev1.ConditionFalse}, "ContainersNotReady", notReady)
	return st
}

// runningStatus is the pod with every container running and ready.
func (r *podRunner) runningStatus(p *corev1.Pod, node *corev1.Node) corev1.PodStatus {
	st := r.baseStatus(p, node)
	st.Phase = corev1.PodRunning
	now := metav1.Now()
	started := true
	for _, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID: c.Image + "@sha256:" + digest(c.Image), ContainerID: "containerd://" + ContainerID(string(p.UID), c.Name),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}, Ready: true, Started: &started})
	}
	st.Conditions = conditions(p, map[corev1.PodConditionType]corev1.ConditionStatus{corev1.PodReadyToStartContainers: corev1.ConditionTrue,
		corev1.PodInitialized: corev1.ConditionTrue, corev1.ContainersReady: corev1.ConditionTrue, corev1.PodReady: corev1.ConditionTrue}, "", "")
	return st
}

func (r *podRunner) baseStatus(p *corev1.Pod, node *corev1.Node) corev1.PodStatus {
	// The QoS class follows from the spec; the API server refuses any other (status.qosClass is immutable).
	st := corev1.PodStatus{QOSClass: qos.ComputePodQOS(p), StartTime: p.Status.StartTime}
	if st.StartTime == nil {
		now := metav1.Now()
		st.StartTime = &now
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			st.HostIP = a.Address
			st.HostIPs = []corev1.HostIP{{IP: a.Address}}
			break
		}
	}
	if ip := r.podIP(p, node); ip != "" {
		st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	}
	return st
}

// podIP gives the pod an address of the node's hybrid overlay subnet (127.132.0.0/24 when the node has none
// yet), one per pod, as the CNI's IPAM does.
func (r *podRunner) podIP(p *corev1.Pod, node *corev1.Node) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ip, ok := r.ips[p.UID]; ok {
		return ip
	}
	_, subnet, err := net.ParseCIDR(node.Annotations[config.HybridOverlaySubnet])
	if err != nil {
		_, subnet, _ = net.ParseCIDR("127.132.0.0/24")
	}
	ip := subnet.IP.To4()
	if ip == nil {
		return ""
	}
	r.nextIP++
	out := net.IPv4(ip[0], ip[1], ip[2], byte(3+r.nextIP%250)).String() // .1 gateway, .2 management port
	r.ips[p.UID] = out
	return out
}

func conditions(p *corev1.Pod, want map[corev1.PodConditionType]corev1.ConditionStatus, reason, msg string) []corev1.PodCondition {
	now := metav1.Now()
	out := []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		c := corev1.PodCondition{Type: t, Status: want[t], LastTransitionTime: now}
		if c.Status != corev1.ConditionTrue && (t == corev1.ContainersReady || t == corev1.PodReady) {
			c.Reason, c.Message = reason, msg
		}
		for _, old := range p.Status.Conditions {
			if old.Type == t && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		out = append(out, c)
	}
	return out
}

func ifTrue(b bool) corev1.ConditionStatus {
	if b {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

func containerNames(p *corev1.Pod) string {
	var names []string
	for _, c := range p.Spec.Containers {
		names = append(names, c.Name)
	}
	return strings.Join(names, " ")
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func podRunningAll(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil {
			return false
		}
	}
	return true
}

// update writes the pod's status when it changed (a conflict is retried on the next resync).
func (r *podRunner) update(ctx context.Context, p *corev1.Pod, st corev1.PodStatus) {
	if samePhaseAndContainers(p.Status, st) {
		return
	}
	p = p.DeepCopy()
	p.Status = st
	_, _ = r.kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
}

func samePhaseAndContainers(a, b corev1.PodStatus) bool {
	if a.Phase != b.Phase || a.Reason != b.Reason || len(a.ContainerStatuses) != len(b.ContainerStatuses) {
		return false
	}
	for i := range a.ContainerStatuses {
		x, y := a.ContainerStatuses[i].State, b.ContainerStatuses[i].State
		if (x.Running == nil) != (y.Running == nil) || (x.Waiting == nil) != (y.Waiting == nil) {
			return false
		}
		if x.Waiting != nil && (x.Waiting.Reason != y.Waiting.Reason || x.Waiting.Message != y.Waiting.Message) {
			return false
		}
	}
	return true
}

// event records an event about the pod (or one of its containers) once, as the kubelet reports it.
func (r *podRunner) event(ctx context.Context, p *corev1.Pod, container, typ, reason, msg string) {
	r.mu.Lock()
	seen := r.reported[p.UID]
	if seen == nil {
		seen = map[string]bool{}
		r.reported[p.UID] = seen
	}
	key := container + "/" + reason + "/" + msg
	if seen[key] {
		r.mu.Unlock()
		return
	}
	seen[key] = true
	r.mu.Unlock()
	now := metav1.Now()
	ref := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID, ResourceVersion: p.ResourceVersion}
	if container != "" {
		ref.FieldPath = "spec.containers{" + container + "}"
	}
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", p.Name, time.Now().UnixNano()), Namespace: p.Namespace},
		InvolvedObject: ref, Reason: reason, Message: msg, Type: typ,
		Source:         corev1.EventSource{Component: "kubelet", Host: r.node},
		FirstTimestamp: now, LastTimestamp: now, Count: 1, ReportingController: "kubelet", ReportingInstance: r.node,
	}
	if _, err := r.kube.CoreV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		r.mu.Lock()
		delete(seen, key) // recorded on a later try
		r.mu.Unlock()
	}
}

func (r *podRunner) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.reported, uid)
	delete(r.ips, uid)
}

// finalizePod confirms a pod's deletion as its kubelet does once the containers stopped: grace period 0,
// only for that very pod (a pod recreated with the same name is left alone).
func finalizePod(ctx context.Context, kube kubernetes.Interface, p *corev1.Pod) {
	uid := p.UID
	opts := metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: &metav1.Preconditions{UID: &uid}}
	_ = kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, opts) // gone already, or retried next resync
}

// klogDiscard is the logger the toleration helpers ask for; nothing here logs through klog.
var klogDiscard = klog.Background()
