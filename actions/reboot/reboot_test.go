package reboot_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/nodeops"
	"github.com/wmcon/wmcon/actions/reboot"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

func mustNode(o runtime.Object) *corev1.Node {
	n, _ := o.(*corev1.Node)
	return n
}

// watchReadiness records whether node was ever seen not Ready, by watching it until the test ends.
func watchReadiness(t *testing.T, e *actiontest.Env, node string) *atomic.Bool {
	var sawNotReady atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := e.Kube.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", node).String()})
	require.NoError(t, err)
	go func() {
		for ev := range w.ResultChan() {
			if n := mustNode(ev.Object); n != nil && n.Name == node && cluster.NodeInfoFrom(n, "").Status != model.NodeReady {
				sawNotReady.Store(true)
			}
		}
	}()
	t.Cleanup(w.Stop)
	return &sawNotReady
}

func TestRebootEndToEnd(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	const node, other = "win-e2e", "win-e2e-other"
	e.Node(node, "127.0.0.121", true)
	e.Node(other, "127.0.0.122", true)
	// Down for ten times the kubelets' grace, so the NotReady is seen even on a loaded machine.
	sim := h.Add(node, "127.0.0.121", windows.Options{RebootDowntime: 3 * time.Second})
	e.Pod("web-1", node, "web", nil)
	e.Pod("web-2", node, "web", nil)
	e.Pod("web-3", other, "web", nil)
	sawNotReady := watchReadiness(t, e, node)

	opts, auditPath := rebootOpts(t)
	rec := &actiontest.Recorder{}
	err := reboot.Reboot(e.Ctx, e.Ops, h.Resolver, node, opts, actiontest.Audited(rec, auditPath))
	require.NoError(t, err, rec.Dump())

	assert.Equal(t, reboot.RebootSteps, rec.Steps(node), "every step, in order")
	for _, step := range reboot.RebootSteps {
		done := false
		for _, ev := range rec.Of(node, event.StepDone) {
			done = done || ev.Step == step
		}
		assert.True(t, done, "step %s done", step)
	}
	f := rec.Final(t, node)
	assert.Equal(t, event.Succeeded, f.Outcome)
	assert.Equal(t, 1, sim.Reboots(), "the host restarted once")
	assert.True(t, sawNotReady.Load(), "the node went NotReady while its host was down")
	n := e.NodeInfo(node)
	assert.Equal(t, model.NodeReady, n.Status)
	assert.False(t, n.Unschedulable, "uncordoned at the end")
	assert.Empty(t, e.PodsOn(node), "the node's pods were evicted")
	assert.Equal(t, []string{"web-3"}, e.PodsOn(other), "the other node's pod stays")

	var evicted []string
	for _, ev := range rec.Of(node, event.StepProgress) {
		if strings.HasPrefix(ev.Message, "evicted ") {
			evicted = append(evicted, ev.Message)
		}
	}
	assert.ElementsMatch(t, []string{"evicted " + e.NS + "/web-1", "evicted " + e.NS + "/web-2"}, evicted, "each pod's eviction is shown")

	records, err := actions.ReadAudit(auditPath)
	require.NoError(t, err)
	require.Len(t, records, 1)
	r := records[0]
	assert.Equal(t, "reboot", r.Action)
	assert.Equal(t, node, r.Node)
	assert.Equal(t, "alice", r.User)
	assert.Equal(t, event.Succeeded, r.Outcome)
	var steps []string
	for _, s := range r.Steps {
		steps = append(steps, s.Step)
		assert.Equal(t, "done", s.Outcome)
	}
	assert.Equal(t, reboot.RebootSteps, steps)
	assert.Greater(t, r.Duration, 1.0, "the reboot took the host's downtime at least")
	assert.Greater(t, r.Steps[4].Duration, 0.5, "the up step waited for the host")
}

func TestRebootRefusesLinuxAndUnknownNodes(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	e.Node("linux-1", "127.0.0.123", false)
	opts, auditPath := rebootOpts(t)
	rec := &actiontest.Recorder{}
	err := reboot.Reboot(e.Ctx, e.Ops, h.Resolver, "linux-1", opts, actiontest.Audited(rec, auditPath))
	var notWin *nodeops.NotWindowsError
	require.ErrorAs(t, err, &notWin)
	assert.Contains(t, err.Error(), "wmcon reboots Windows nodes over SSH only")
	assert.False(t, e.NodeInfo("linux-1").Unschedulable, "not cordoned")
	assert.Empty(t, rec.Of("linux-1", event.StepStarted), "no step ran")

	err = reboot.Reboot(e.Ctx, e.Ops, h.Resolver, "no-such-node", opts, actiontest.Audited(rec, auditPath))
	var nf *cluster.NodeNotFoundError
	require.ErrorAs(t, err, &nf)
	assert.Contains(t, rec.Final(t, "no-such-node").Hint, "oc get nodes")

	err = reboot.RebootMany(e.Ctx, e.Ops, h.Resolver, []string{"linux-1", "no-such-node"}, 1, opts, actiontest.Audited(rec, auditPath))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing rebooted")

	records, err := actions.ReadAudit(auditPath)
	require.NoError(t, err)
	assert.Len(t, records, 2, "refusals are audited too")
}

func TestRebootAWSReaddsMetadataRoute(t *testing.T) {
	// Not parallel: it sets the cluster-wide Infrastructure to AWS.
	e := actiontest.NewEnv(t)
	infra := &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	created, err := e.Clients.Config.ConfigV1().Infrastructures().Create(e.Ctx, infra, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = e.Clients.Config.ConfigV1().Infrastructures().Delete(context.Background(), "cluster", metav1.DeleteOptions{})
	})
	created.Status.PlatformStatus = &configv1.PlatformStatus{Type: configv1.AWSPlatformType}
	created.Status.ControlPlaneTopology = configv1.HighlyAvailableTopologyMode
	created.Status.InfrastructureTopology = configv1.HighlyAvailableTopologyMode
	_, err = e.Clients.Config.ConfigV1().Infrastructures().UpdateStatus(e.Ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
	platform, err := e.Ops.Platform(e.Ctx)
	require.NoError(t, err)
	require.Equal(t, "AWS", platform)

	h := e.Hosts()
	const node = "win-aws"
	e.Node(node, "127.0.0.124", true)
	sim := h.Add(node, "127.0.0.124", windows.Options{Platform: "AWS", LoseMetadataRouteOnReboot: true, Gateway: "127.0.3.1"})
	require.True(t, sim.HasMetadataRoute())

	opts, _ := rebootOpts(t)
	opts.Platform = "" // read from the cluster
	rec := &actiontest.Recorder{}
	require.NoError(t, reboot.Reboot(e.Ctx, e.Ops, h.Resolver, node, opts, rec), rec.Dump())
	assert.True(t, sim.HasMetadataRoute(), "the route is back")
	var done string
	for _, ev := range rec.Of(node, event.StepDone) {
		if ev.Step == reboot.StepMetadataRoute {
			done = ev.Message
		}
	}
	assert.Equal(t, "added 169.254.169.254/32 via 127.0.3.1", done, "added through the host's own gateway")
	var added bool
	for _, c := range sim.Executed() {
		added = added || strings.Contains(c, "route add 169.254.169.254") && strings.Contains(c, "127.0.3.1")
	}
	assert.True(t, added, "the host ran route add through its gateway; ran %q", sim.Executed())
}

func TestRebootHostNeverReturns(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	const node = "win-gone"
	e.Node(node, "127.0.0.125", true)
	sim := h.Add(node, "127.0.0.125", windows.Options{RebootDowntime: 200 * time.Millisecond})
	sim.SetNeverReturn(true)
	opts, auditPath := rebootOpts(t)
	opts.UpTimeout = 1500 * time.Millisecond
	rec := &actiontest.Recorder{}
	err := reboot.Reboot(e.Ctx, e.Ops, h.Resolver, node, opts, actiontest.Audited(rec, auditPath))
	var partial *nodeops.PartialError
	require.ErrorAs(t, err, &partial, rec.Dump())
	assert.Contains(t, partial.State, "cordoned")

	failed := rec.Of(node, event.StepFailed)
	require.Len(t, failed, 1)
	assert.Equal(t, reboot.StepUp, failed[0].Step)
	assert.Contains(t, failed[0].Err, "did not come back")
	assert.Contains(t, failed[0].Hint, "node left cordoned: run wmcon uncordon "+node)
	f := rec.Final(t, node)
	assert.Equal(t, event.Failed, f.Outcome)
	assert.Contains(t, f.Message, "node left cordoned")
	assert.True(t, e.NodeInfo(node).Unschedulable, "left cordoned")

	records, err := actions.ReadAudit(auditPath)
	require.NoError(t, err)
	require.Len(t, records, 1)
	assert.Equal(t, event.Failed, records[0].Outcome)
	last := records[0].Steps[len(records[0].Steps)-1]
	assert.Equal(t, actions.AuditStep{Step: reboot.StepUp, Outcome: "failed", Error: failed[0].Err}, actions.AuditStep{Step: last.Step, Outcome: last.Outcome, Error: last.Error})
}

func TestRebootCancelledWhileHostIsDown(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	const node = "win-cancel-reboot"
	e.Node(node, "127.0.0.126", true)
	h.Add(node, "127.0.0.126", windows.Options{RebootDowntime: 3 * time.Second})
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	rec := &actiontest.Recorder{OnEvent: func(ev event.Event) {
		if ev.Kind == event.StepStarted && ev.Step == reboot.StepUp {
			cancel()
		}
	}}
	opts, _ := rebootOpts(t)
	err := reboot.Reboot(ctx, e.Ops, h.Resolver, node, opts, rec)
	var partial *nodeops.PartialError
	require.ErrorAs(t, err, &partial, rec.Dump())
	assert.ErrorIs(t, err, context.Canceled)
	f := rec.Final(t, node)
	assert.Equal(t, event.Cancelled, f.Outcome)
	assert.Contains(t, f.Message, "cancelled at step up")
	assert.Contains(t, f.Message, "node left cordoned, host restarting")
	assert.Contains(t, f.Hint, "node left cordoned: run wmcon uncordon "+node)
	failed := rec.Of(node, event.StepFailed)
	require.Len(t, failed, 1)
	assert.NotEmpty(t, failed[0].Hint)
	assert.True(t, e.NodeInfo(node).Unschedulable)
}

// TestRebootAbortedByBudgetNamesTheFlags: the hint after a budget stopped the reboot's drain names the
// headless flags that delete the pods past it, never a console key.
func TestRebootAbortedByBudgetNamesTheFlags(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	const node = "win-reboot-pdb-abort"
	e.Node(node, "127.0.0.128", true)
	sim := h.Add(node, "127.0.0.128", windows.Options{})
	e.Pod("db-0", node, "db", nil)
	e.BlockingPDB("db-pdb", "db")
	rec := &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceAbort }}
	opts, _ := rebootOpts(t)
	err := reboot.Reboot(e.Ctx, e.Ops, h.Resolver, node, opts, rec)
	var partial *nodeops.PartialError
	require.ErrorAs(t, err, &partial, rec.Dump())
	f := rec.Final(t, node)
	assert.Equal(t, event.Failed, f.Outcome)
	assert.Contains(t, f.Hint, "node left cordoned: run wmcon uncordon "+node)
	assert.Contains(t, f.Hint, "run wmcon reboot "+node+" --on-pdb disable-eviction --yes-disable-eviction")
	for _, ev := range rec.All() {
		assert.NotContains(t, ev.Hint, "press", "headless hints name commands: %+v", ev)
	}
	assert.Equal(t, 0, sim.Reboots(), "the host was not restarted")
}

func TestRebootCancelledMidDrain(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	const node = "win-cancel-drain"
	e.Node(node, "127.0.0.127", true)
	sim := h.Add(node, "127.0.0.127", windows.Options{})
	e.Pod("db-0", node, "db", nil)
	e.BlockingPDB("db-pdb", "db")
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	// The user waits on the budget, then cancels.
	rec := &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceWait }}
	rec.OnEvent = func(ev event.Event) {
		if ev.Kind == event.StepLog && strings.HasPrefix(ev.Message, "waiting for") {
			cancel()
		}
	}
	opts, _ := rebootOpts(t)
	err := reboot.Reboot(ctx, e.Ops, h.Resolver, node, opts, rec)
	var partial *nodeops.PartialError
	require.ErrorAs(t, err, &partial, rec.Dump())
	f := rec.Final(t, node)
	assert.Equal(t, event.Cancelled, f.Outcome)
	assert.Contains(t, f.Message, "cancelled at step drain")
	assert.Contains(t, f.Hint, "node left cordoned: run wmcon uncordon "+node)
	assert.Equal(t, 0, sim.Reboots(), "the host was not restarted")
	assert.True(t, sim.Up())
	assert.Equal(t, []string{"db-0"}, e.PodsOn(node), "the protected pod is still there")
	assert.True(t, e.NodeInfo(node).Unschedulable)
	assert.Equal(t, []string{nodeops.StepCordon, nodeops.StepDrain}, rec.Steps(node))
}

func TestRebootManyRespectsMaxUnavailable(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	nodes := []string{"win-many-1", "win-many-2", "win-many-3"}
	ips := []string{"127.0.0.131", "127.0.0.132", "127.0.0.133"}
	for i, n := range nodes {
		e.Node(n, ips[i], true)
		h.Add(n, ips[i], windows.Options{RebootDowntime: 500 * time.Millisecond})
	}

	// Watch how many of these nodes are cordoned at once, as the API server sees it.
	var mu sync.Mutex
	cordoned := map[string]bool{}
	maxCordoned := 0
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	w, err := e.Kube.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	go func() {
		for ev := range w.ResultChan() {
			n := mustNode(ev.Object)
			if n == nil || !strings.HasPrefix(n.Name, "win-many-") {
				continue
			}
			mu.Lock()
			cordoned[n.Name] = n.Spec.Unschedulable
			c := 0
			for _, v := range cordoned {
				if v {
					c++
				}
			}
			maxCordoned = max(maxCordoned, c)
			mu.Unlock()
		}
	}()

	opts, auditPath := rebootOpts(t)
	rec := &actiontest.Recorder{}
	require.NoError(t, reboot.RebootMany(e.Ctx, e.Ops, h.Resolver, nodes, 2, opts, actiontest.Audited(rec, auditPath)), rec.Dump())
	time.Sleep(200 * time.Millisecond) // let the watch deliver the last uncordon

	// From the events: reboots in progress at once (first event to Finished).
	inFlight, maxInFlight := map[string]bool{}, 0
	for _, ev := range rec.All() {
		switch ev.Kind {
		case event.Finished:
			delete(inFlight, ev.Target)
		default:
			inFlight[ev.Target] = true
		}
		maxInFlight = max(maxInFlight, len(inFlight))
	}
	assert.Equal(t, 2, maxInFlight, "two reboots ran side by side, never three")
	mu.Lock()
	assert.LessOrEqual(t, maxCordoned, 2, "never more than two nodes cordoned")
	assert.GreaterOrEqual(t, maxCordoned, 1)
	mu.Unlock()
	for _, n := range nodes {
		assert.Equal(t, event.Succeeded, rec.Final(t, n).Outcome)
		assert.False(t, e.NodeInfo(n).Unschedulable)
		assert.Equal(t, 1, h.Sims[n].Reboots())
	}
	records, err := actions.ReadAudit(auditPath)
	require.NoError(t, err)
	assert.Len(t, records, 3)
}

func TestRebootManyOneAtATimeStopsAfterAFailure(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	nodes := []string{"win-seq-1", "win-seq-2", "win-seq-3"}
	ips := []string{"127.0.0.134", "127.0.0.135", "127.0.0.136"}
	for i, n := range nodes {
		e.Node(n, ips[i], true)
		h.Add(n, ips[i], windows.Options{RebootDowntime: 300 * time.Millisecond})
	}
	h.Sims["win-seq-2"].SetNeverReturn(true)
	opts, _ := rebootOpts(t)
	opts.UpTimeout = time.Second
	rec := &actiontest.Recorder{}
	err := reboot.RebootMany(e.Ctx, e.Ops, h.Resolver, nodes, 1, opts, rec)
	var partial *nodeops.PartialError
	require.ErrorAs(t, err, &partial)
	assert.Equal(t, "win-seq-2", partial.Node)

	// One at a time: each node's events end before the next one's begin.
	var order []string
	for _, ev := range rec.All() {
		if len(order) == 0 || order[len(order)-1] != ev.Target {
			order = append(order, ev.Target)
		}
	}
	assert.Equal(t, nodes, order, "strictly one after the other")
	assert.Equal(t, event.Succeeded, rec.Final(t, "win-seq-1").Outcome)
	assert.Equal(t, event.Failed, rec.Final(t, "win-seq-2").Outcome)
	third := rec.Final(t, "win-seq-3")
	assert.Equal(t, event.Cancelled, third.Outcome)
	assert.Contains(t, third.Message, "the reboot of win-seq-2 failed")
	assert.Equal(t, 0, h.Sims["win-seq-3"].Reboots())
	assert.False(t, e.NodeInfo("win-seq-3").Unschedulable, "the third node was never touched")
}

// TestRebootWaitsForTheNewBoot: with a long node-monitor grace period the node's Ready from before the
// reboot still stands when the host is back, and its kubelet reports late. The reboot must not uncordon on
// that old Ready: it waits until the node reports the new boot (its bootID changed).
func TestRebootWaitsForTheNewBoot(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.HostsWith(kubelet.Options{Interval: 50 * time.Millisecond, Grace: time.Hour, ReportDelay: 3 * time.Second})
	const node = "win-late-kubelet"
	e.Node(node, "127.0.0.131", true)
	h.Add(node, "127.0.0.131", windows.Options{RebootDowntime: 500 * time.Millisecond})
	require.Eventually(t, func() bool {
		n := e.NodeInfo(node)
		return n.Status == model.NodeReady && n.BootID == "wmcon-sim-boot-0"
	}, 20*time.Second, 50*time.Millisecond, "the first boot is reported")

	opts, _ := rebootOpts(t)
	rec := &actiontest.Recorder{}
	require.NoError(t, reboot.Reboot(e.Ctx, e.Ops, h.Resolver, node, opts, rec), rec.Dump())
	n := e.NodeInfo(node)
	assert.Equal(t, "wmcon-sim-boot-1", n.BootID, "uncordoned only after the node reported its new boot")
	assert.Contains(t, rec.Dump(), "still shows the Ready from before the reboot")
}
