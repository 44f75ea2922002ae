package actions_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/session"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/ovn"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// srv is one real etcd + kube-apiserver shared by this package's tests.
var srv *kubeapi.Server

func TestMain(m *testing.M) { kubeapi.Main(m, &srv) }

// env is a test's cluster: clients of the real API server, wmcon's node operations, a namespace of its own.
type env struct {
	t       *testing.T
	ctx     context.Context
	kube    kubernetes.Interface
	clients cluster.Clients
	ops     *cluster.Ops
	ns      string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clients, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, kube: clients.Kube, clients: clients, ops: cluster.NewOps(clients), ns: "t-" + dns(t.Name()) + "-" + strings.ToLower(rand.Text()[:5])}
	_, err = e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	e.ops.DrainRetryDelay = 100 * time.Millisecond // PodDisruptionBudget retries, fast
	// No controller-manager runs: create the ServiceAccount that pod admission looks for, and remove the pods
	// at the end ourselves (no namespace or pod GC controller would), so a later run's drain does not find
	// them bound to a node of the same name.
	_, err = e.kube.CoreV1().ServiceAccounts(e.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = e.kube.CoreV1().Pods(e.ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{})
	})
	return e
}

func dns(s string) string {
	b := []byte{}
	for _, c := range []byte(s) {
		switch {
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b = append(b, c)
		default:
			b = append(b, '-')
		}
	}
	if len(b) > 50 {
		b = b[len(b)-50:]
	}
	return string(b)
}

// node registers a Node, Windows or Linux, Ready, on address ip.
func (e *env) node(name, ip string, windows bool) {
	e.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{config.OSLabel: "linux"}}}
	if windows {
		n.Labels = map[string]string{config.OSLabel: "windows", config.WindowsBuildLabel: "10.0.20348"}
	}
	created, err := e.kube.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = e.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	now := metav1.Now()
	created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: now, LastTransitionTime: now}}
	_, err = e.kube.CoreV1().Nodes().UpdateStatus(e.ctx, created, metav1.UpdateOptions{})
	require.NoError(e.t, err)
}

// pod runs a Ready pod on node, owned by a ReplicaSet (or by owner when given), with labels app=<app>.
func (e *env) pod(name, node, app string, owner *metav1.OwnerReference) *corev1.Pod {
	e.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{"app": app}}}
	if owner == nil {
		owner = &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-rs", UID: types.UID(fmt.Sprintf("0a0a0a0a-0000-0000-0000-%012d", len(app))), Controller: ptr.To(true)}
	}
	p.OwnerReferences = []metav1.OwnerReference{*owner}
	p.Spec.NodeName = node
	p.Spec.AutomountServiceAccountToken = ptr.To(false)
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/servercore:ltsc2022"}}
	created, err := e.kube.CoreV1().Pods(e.ns).Create(e.ctx, p, metav1.CreateOptions{})
	require.NoError(e.t, err)
	created.Status.Phase = corev1.PodRunning
	created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	created, err = e.kube.CoreV1().Pods(e.ns).UpdateStatus(e.ctx, created, metav1.UpdateOptions{})
	require.NoError(e.t, err)
	return created
}

// daemonSet creates a real DaemonSet (the drain helper looks it up) and returns a controller reference to it.
func (e *env) daemonSet(name string) *metav1.OwnerReference {
	e.t.Helper()
	labels := map[string]string{"app": name}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}}
	ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	ds.Spec.Template.Labels = labels
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/servercore:ltsc2022"}}
	created, err := e.kube.AppsV1().DaemonSets(e.ns).Create(e.ctx, ds, metav1.CreateOptions{})
	require.NoError(e.t, err)
	return &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: name, UID: created.UID, Controller: ptr.To(true)}
}

// blockingPDB creates a PodDisruptionBudget over app=<app> that allows no disruption, with the status the
// disruption controller would write (no controller-manager runs here), so the API server refuses evictions.
func (e *env) blockingPDB(name, app string) {
	e.t.Helper()
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}}
	pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(1))
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	created, err := e.kube.PolicyV1().PodDisruptionBudgets(e.ns).Create(e.ctx, pdb, metav1.CreateOptions{})
	require.NoError(e.t, err)
	created.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: created.Generation, DisruptionsAllowed: 0,
		CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	_, err = e.kube.PolicyV1().PodDisruptionBudgets(e.ns).UpdateStatus(e.ctx, created, metav1.UpdateOptions{})
	require.NoError(e.t, err)
}

// podsOn lists the names of the pods of the test's namespace bound to node.
func (e *env) podsOn(node string) []string {
	e.t.Helper()
	l, err := e.kube.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	require.NoError(e.t, err)
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Name)
	}
	return out
}

func (e *env) nodeInfo(name string) model.NodeInfo {
	e.t.Helper()
	n, err := e.ops.Node(e.ctx, name)
	require.NoError(e.t, err)
	return n
}

// hosts is a fleet of simulated Windows hosts behind a real SSH pool, and their simulated kubelets.
type hosts struct {
	t        *testing.T
	signer   ssh.Signer
	pool     *remote.Pool
	resolver *session.PoolResolver
	kubelets *kubelet.Kubelets
	sims     map[string]*windows.Host
	kube     kubernetes.Interface
}

func (e *env) hosts() *hosts {
	e.t.Helper()
	return e.hostsWith(kubelet.Options{Interval: 50 * time.Millisecond, Grace: 300 * time.Millisecond})
}

// hostsWith is hosts with simulated kubelets tuned by opts (for example kubelets that report late).
func (e *env) hostsWith(opts kubelet.Options) *hosts {
	t := e.t
	t.Helper()
	signer, pool := newTestPool(t)
	k := kubelet.New(e.kube, nil, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go k.Run(ctx)
	// OVN-Kubernetes' hybrid overlay: Windows nodes get their subnets (WMCO's network step waits for them).
	go func() { (&ovn.SubnetAllocator{Kube: e.kube}).Run(ctx, 200*time.Millisecond); close(done) }()
	return &hosts{t: t, signer: signer, pool: pool, kubelets: k, sims: map[string]*windows.Host{}, kube: e.kube,
		resolver: &session.PoolResolver{Pool: pool, Addrs: map[string]string{}}}
}

// add starts a configured Windows host for node on ip (a fresh port) and its simulated kubelet.
func (h *hosts) add(node, ip string, opts windows.Options) *windows.Host {
	h.t.Helper()
	opts.Addr = ip + ":0"
	opts.Configured = true
	opts.AuthorizedKeys = append(opts.AuthorizedKeys, h.signer.PublicKey())
	if opts.RebootDowntime == 0 {
		opts.RebootDowntime = time.Second
	}
	if opts.LogInterval == 0 {
		opts.LogInterval = time.Hour
	}
	if opts.ServicePending == 0 {
		opts.ServicePending = 20 * time.Millisecond
	}
	sim, err := windows.Start(opts)
	require.NoError(h.t, err)
	h.t.Cleanup(func() { sim.Close() })
	h.sims[node] = sim
	h.resolver.Addrs[node] = sim.Addr()
	h.kubelets.Add(node, sim)
	return sim
}

// rebootOpts are fast reboot options for tests, with the audit log in the test's temp dir.
func rebootOpts(t *testing.T) (actions.RebootOptions, string) {
	path := filepath.Join(t.TempDir(), "state", "wmcon", "audit.log")
	o := actions.RebootOptions{
		Drain:        request.DefaultDrainOptions(),
		DownTimeout:  10 * time.Second,
		UpTimeout:    20 * time.Second,
		ReadyTimeout: 20 * time.Second,
		PollInterval: 100 * time.Millisecond,
		Platform:     "None",
		Audit:        &actions.AuditLog{Path: path},
		User:         "alice",
	}
	return o, path
}

// recorder is a Sink that keeps every event and answers questions with answer.
type recorder struct {
	mu        sync.Mutex
	events    []event.Event
	questions []event.Question
	answer    func(event.Question) string
	onEvent   func(event.Event) // called outside the lock
}

func (r *recorder) Emit(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	on := r.onEvent
	r.mu.Unlock()
	if on != nil {
		on(e)
	}
}

func (r *recorder) Ask(ctx context.Context, q event.Question) (string, error) {
	r.mu.Lock()
	r.questions = append(r.questions, q)
	answer := r.answer
	r.mu.Unlock()
	if answer == nil {
		return q.Choices[0].Key, nil
	}
	a := answer(q)
	if a == "" { // wait for the question to be withdrawn
		<-ctx.Done()
		return "", ctx.Err()
	}
	return a, nil
}

func (r *recorder) all() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}

func (r *recorder) asked() []event.Question {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Question(nil), r.questions...)
}

// of filters the events of one target and kind ("" = any).
func (r *recorder) of(target string, kind event.Kind) []event.Event {
	var out []event.Event
	for _, e := range r.all() {
		if (target == "" || e.Target == target) && (kind == "" || e.Kind == kind) {
			out = append(out, e)
		}
	}
	return out
}

// final is the Finished event of target.
func (r *recorder) final(t *testing.T, target string) event.Event {
	t.Helper()
	f := r.of(target, event.Finished)
	require.Len(t, f, 1, "one Finished event for %s; events:\n%s", target, r.dump())
	return f[0]
}

// steps lists the steps that started, in order.
func (r *recorder) steps(target string) []string {
	var out []string
	for _, e := range r.of(target, event.StepStarted) {
		out = append(out, e.Step)
	}
	return out
}

func (r *recorder) dump() string {
	s := ""
	for _, e := range r.all() {
		s += event.Format(e) + "\n"
	}
	return s
}

// newTestPool is an SSH pool logging in with a fresh key (which the simulated hosts authorise) and pinning
// host keys in the test's temp dir; it is closed when the test ends.
func newTestPool(t testing.TB) (ssh.Signer, *remote.Pool) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "wmcon-test")
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	dir := t.TempDir()
	pool, err := remote.NewPool(remote.Config{
		Auth:              remote.Auth{KeyPEM: pem.EncodeToMemory(block), KeyPEMName: "cloud-private-key"},
		HostKeys:          remote.NewKnownHostsStore(filepath.Join(dir, "known_hosts")),
		BastionHostKeys:   remote.NewKnownHostsStore(filepath.Join(dir, "bastion_known_hosts")),
		DialTimeout:       2 * time.Second,
		KeepaliveInterval: -1,
		CommandTimeout:    20 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(func() { pool.Close() })
	return signer, pool
}
