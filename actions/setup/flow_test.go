package setup_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup"
	"github.com/wmcon/wmcon/actions/setup/steps"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/olm"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// playOperator stands in for WMCO configuring a BYOH host: once addr is in windows-instances it registers a
// Node with that InternalIP, then marks it Ready with the operator's version annotation.
func playOperator(t *testing.T, ctx context.Context, c cluster.Clients, addr, node string) {
	t.Helper()
	go func() {
		for ctx.Err() == nil {
			cm, err := c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
			if err == nil && cm.Data[addr] != "" {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if ctx.Err() != nil {
			return
		}
		time.Sleep(500 * time.Millisecond) // the node registers a little later
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{config.OSLabel: "windows",
			config.WindowsBuildLabel: "10.0.20348", config.BYOHLabel: "true"}, Annotations: map[string]string{config.VersionAnnotation: "11.0.1"}}}
		created, err := c.Kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("the operator stand-in could not register %s: %v", node, err)
			return
		}
		now := metav1.Now()
		created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}}
		created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now}}
		if _, err := c.Kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Errorf("the operator stand-in could not make %s Ready: %v", node, err)
		}
	}()
}

// TestSetupFlowWithTheOperator runs the headless setup on a fresh OpenShift cluster (real API server, the OLM
// stand-in): a blocking doctor failure stops it; --read-only shows the plan and refuses; then WMCO is
// installed and a key generated, and without machines it stops, naming the flags; resumed with a BYOH host,
// the host is added and followed until the operator made it a Ready node, the RuntimeClass created. A second host is followed, cancelled (the run says it changed something), resumed
// and cancelled again (nothing changed this time), and finished once the operator brings it up.
func TestSetupFlowWithTheOperator(t *testing.T) {
	d, run := newFreshCluster(t, configv1.AWSPlatformType)
	ctx := d.Ctx
	sim := olm.New(d.C, olm.Options{Catalogs: []olm.Catalog{{Name: cluster.DefaultCatalogSource, Channels: []string{"stable"}, DefaultChannel: "stable", Version: "11.0.1"}}})
	require.NoError(t, sim.Seed(ctx))
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	go sim.Run(simCtx, 50*time.Millisecond)
	keyOut := filepath.Join(t.TempDir(), "wmcon-key")
	opts := setup.SetupOptions{Answers: steps.Answers{GenerateKey: true, KeyOut: keyOut,
		BYOH: []request.BYOHAdd{{Address: "127.0.0.93", User: "Administrator"}}, FollowTimeout: time.Minute}, Yes: true}

	t.Run("a blocking doctor failure stops the setup before anything", func(t *testing.T) {
		nets := d.C.Config.ConfigV1().Networks()
		n, err := nets.Get(ctx, "cluster", metav1.GetOptions{})
		require.NoError(t, err)
		n.Spec.NetworkType = "OpenShiftSDN"
		_, err = nets.Update(ctx, n, metav1.UpdateOptions{})
		require.NoError(t, err)
		defer func() {
			n, err := nets.Get(ctx, "cluster", metav1.GetOptions{})
			require.NoError(t, err)
			n.Spec.NetworkType = "OVNKubernetes"
			_, err = nets.Update(ctx, n, metav1.UpdateOptions{})
			require.NoError(t, err)
		}()
		rec := &actiontest.Recorder{}
		_, err = setup.RunSetup(ctx, run, opts, rec)
		require.Error(t, err)
		var stop *setup.SetupStopped
		assert.False(t, errors.As(err, &stop), "a failure, not a pause")
		assert.Contains(t, err.Error(), "Cluster network type")
		f := setupFinal(t, rec)
		assert.Equal(t, event.Failed, f.Outcome)
		assert.Contains(t, f.Message, "setup failed at check")
		st, err := cluster.NewOLM(d.C).State(ctx)
		require.NoError(t, err)
		assert.Nil(t, st.Subscription, "nothing was installed")
	})

	t.Run("read-only shows the plan and refuses the change", func(t *testing.T) {
		ro := opts
		ro.ReadOnly = true
		rec := &actiontest.Recorder{}
		res, err := setup.RunSetup(ctx, run, ro, rec)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "--read-only is set: refusing to install WMCO through OLM")
		assert.False(t, res.Changed)
		require.Len(t, rec.Of("", event.PlanShown), 1, rec.Dump())
		st, err := cluster.NewOLM(d.C).State(ctx)
		require.NoError(t, err)
		assert.Nil(t, st.Subscription)
	})

	t.Run("without machines it stops there, naming the flags", func(t *testing.T) {
		none := opts
		none.BYOH = nil
		rec := &actiontest.Recorder{}
		res, err := setup.RunSetup(ctx, run, none, rec)
		var stop *setup.SetupStopped
		require.ErrorAs(t, err, &stop, rec.Dump())
		assert.Equal(t, event.SetupMachines, stop.Step)
		assert.Equal(t, "pass --machineset-image IMAGE (the platform's Windows image), or --byoh ADDRESS=USER", stop.Hint)
		assert.True(t, res.Changed, "the operator and the key were installed")
		assert.Equal(t, []string{keyOut, keyOut + ".pub"}, res.Files)
	})

	t.Run("from nothing to a Ready node the operator configured", func(t *testing.T) {
		playOperator(t, ctx, d.C, "127.0.0.93", "win-flow-a")
		rec := &actiontest.Recorder{}
		res, err := setup.RunSetup(ctx, run, opts, rec)
		require.NoError(t, err, rec.Dump())
		assert.True(t, res.Changed)
		assert.Empty(t, res.Files, "the key was made by the run before")
		assert.Equal(t, event.SetupDone, res.State.Next)
		assert.Equal(t, "win-flow-a", res.State.ReadyNode)
		f := setupFinal(t, rec)
		assert.Equal(t, event.Succeeded, f.Outcome)
		assert.Contains(t, f.Message, "Windows node win-flow-a is Ready")
		dump := rec.Dump()
		assert.Contains(t, dump, "node win-flow-a registered")
		assert.Contains(t, dump, "node win-flow-a is Ready and configured by the operator (version 11.0.1)")
		var started []string
		for _, e := range rec.Of("cluster", event.StepStarted) {
			if e.Action == setup.ActionSetup {
				started = append(started, e.Step)
			}
		}
		assert.Equal(t, []string{"machines", "configure", "workloads"}, started, "each step once, in order, resumed where the last run stopped")
		_, err = d.C.Kube.NodeV1().RuntimeClasses().Get(ctx, "windows-10-0-20348", metav1.GetOptions{})
		require.NoError(t, err)
	})

	t.Run("a cancelled follow resumes", func(t *testing.T) {
		more := opts
		more.BYOH = append(more.BYOH, request.BYOHAdd{Address: "127.0.0.94", User: "Administrator"})
		cancelWhenFollowing := func() (*actiontest.Recorder, context.Context) {
			cctx, cancel := context.WithCancel(ctx)
			rec := &actiontest.Recorder{OnEvent: func(e event.Event) {
				if e.Action == request.ActionSetupFollow && e.Kind == event.StepStarted {
					cancel()
				}
			}}
			t.Cleanup(cancel)
			return rec, cctx
		}
		rec, cctx := cancelWhenFollowing()
		res, err := setup.RunSetup(cctx, run, more, rec)
		require.ErrorIs(t, err, context.Canceled)
		assert.True(t, res.Changed, "the host was added in this run")
		f := setupFinal(t, rec)
		assert.Equal(t, event.Cancelled, f.Outcome)
		assert.Contains(t, f.Message, "setup cancelled at configure; what this run did stays done")

		more.Yes = false // following changes nothing: no --yes needed to resume
		rec, cctx = cancelWhenFollowing()
		res, err = setup.RunSetup(cctx, run, more, rec)
		require.ErrorIs(t, err, context.Canceled)
		assert.False(t, res.Changed)
		assert.Contains(t, setupFinal(t, rec).Message, "nothing was changed")

		playOperator(t, ctx, d.C, "127.0.0.94", "win-flow-b")
		rec = &actiontest.Recorder{}
		res, err = setup.RunSetup(ctx, run, more, rec)
		require.NoError(t, err, rec.Dump())
		assert.False(t, res.Changed, "resuming followed; the summary changes nothing on the cluster")
		assert.Equal(t, "win-flow-b", res.State.ReadyNode)
	})
}

// kubeletRuns plays the kubelet for the smoke-test pods on node: each pod bound to it is reported Running
// with its container running.
func kubeletRuns(t *testing.T, ctx context.Context, c cluster.Clients, node string) {
	go func() {
		for ctx.Err() == nil {
			l, err := c.Kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
			if err == nil {
				for i := range l.Items {
					p := &l.Items[i]
					if p.Status.Phase == corev1.PodRunning {
						continue
					}
					now := metav1.Now()
					p.Status.Phase = corev1.PodRunning
					p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "smoke", Ready: true,
						State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
					_, _ = c.Kube.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

// TestSmokeTest runs the smoke test's pod against the real API server: the RuntimeClass admission adds its
// scheduling, a kubelet stand-in runs it, and it is removed; a pod that never runs fails with its events and
// is removed too.
func TestSmokeTest(t *testing.T) {
	d, run := newFreshCluster(t, configv1.NonePlatformType)
	ctx := d.Ctx
	_, err := d.C.Kube.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	readyWindowsNode(t, ctx, d.C, "win-smoke-a", "127.0.0.95")
	readyWindowsNode(t, ctx, d.C, "win-smoke-b", "127.0.0.96")
	rec := &actiontest.Recorder{}
	require.NoError(t, run.Run(ctx, request.RuntimeClassEnsure{}, rec), rec.Dump())

	t.Run("a pod that runs", func(t *testing.T) {
		kctx, stop := context.WithCancel(ctx)
		defer stop()
		kubeletRuns(t, kctx, d.C, "win-smoke-a")
		plan := preview(t, ctx, run, request.SmokeTest{Node: "win-smoke-a", RuntimeClass: "windows-10-0-20348", Preview: true})
		assert.Contains(t, plan.YAML, "runtimeClassName: windows-10-0-20348")
		assert.Contains(t, plan.YAML, "nodeName: win-smoke-a")
		rec := &actiontest.Recorder{}
		rec.OnEvent = func(e event.Event) {
			if e.Step == "run" && e.Kind == event.StepDone { // the pod as the API server admitted it
				p, err := d.C.Kube.CoreV1().Pods("default").Get(ctx, "wmcon-smoke-win-smoke-a", metav1.GetOptions{})
				if assert.NoError(t, err) {
					assert.Equal(t, "10.0.20348", p.Spec.NodeSelector[config.WindowsBuildLabel], "the RuntimeClass admission added its nodeSelector")
					assert.Contains(t, p.Spec.Tolerations, corev1.Toleration{Key: "os", Operator: corev1.TolerationOpEqual, Value: "Windows", Effect: corev1.TaintEffectNoSchedule})
				}
			}
		}
		require.NoError(t, run.Run(ctx, request.SmokeTest{Node: "win-smoke-a", RuntimeClass: "windows-10-0-20348", Timeout: 30 * time.Second}, rec), rec.Dump())
		assert.Equal(t, event.Succeeded, rec.Final(t, "win-smoke-a").Outcome)
		assert.Contains(t, rec.Dump(), "container smoke running")
		_, err := d.C.Kube.CoreV1().Pods("default").Get(ctx, "wmcon-smoke-win-smoke-a", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "the pod is removed")
	})

	t.Run("a pod that does not run", func(t *testing.T) {
		rec := &actiontest.Recorder{}
		rec.OnEvent = func(e event.Event) {
			if e.Step == "create" && e.Kind == event.StepDone { // the kubelet reports why it cannot start it
				_, err := d.C.Kube.CoreV1().Events("default").Create(ctx, &corev1.Event{
					ObjectMeta:     metav1.ObjectMeta{Name: "smoke-pull-failed", Namespace: "default"},
					InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "wmcon-smoke-win-smoke-b"},
					Type:           corev1.EventTypeWarning, Reason: "Failed", Message: "Failed to pull image: not found",
					LastTimestamp: metav1.Now()}, metav1.CreateOptions{})
				assert.NoError(t, err)
			}
		}
		err := run.Run(ctx, request.SmokeTest{Node: "win-smoke-b", RuntimeClass: "windows-10-0-20348", Timeout: 3 * time.Second}, rec)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not Running after 3s: phase Pending, on win-smoke-b")
		dump := rec.Dump()
		assert.Contains(t, dump, "event Warning Failed: Failed to pull image: not found")
		assert.Equal(t, event.Failed, rec.Final(t, "win-smoke-b").Outcome)
		_, err = d.C.Kube.CoreV1().Pods("default").Get(ctx, "wmcon-smoke-win-smoke-b", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "the pod is removed even so")
		assert.True(t, strings.Contains(dump, "pod wmcon-smoke-win-smoke-b deleted"), dump)
	})
}

// setupFinal is the Finished event of the setup flow itself.
func setupFinal(t *testing.T, rec *actiontest.Recorder) event.Event {
	t.Helper()
	var out []event.Event
	for _, e := range rec.Of("cluster", event.Finished) {
		if e.Action == setup.ActionSetup {
			out = append(out, e)
		}
	}
	require.Len(t, out, 1, rec.Dump())
	return out[0]
}

// SetupFollow follows a Windows Machine through its phases (machine API played by the test on the real
// API server) until the node the operator makes of it is Ready.
func TestSetupFollowsAMachine(t *testing.T) {
	d, run := newFreshCluster(t, configv1.AWSPlatformType)
	ctx := d.Ctx
	machines := d.C.Machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	m := &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "win-m-a", Namespace: config.MachineAPINamespace,
		Labels: map[string]string{config.MachineOSIDLabel: config.WindowsOSID, config.MachineSetLabel: "win-m"}}}
	m, err := machines.Create(ctx, m, metav1.CreateOptions{})
	require.NoError(t, err)
	setStatus := func(phase, addr string) {
		cur, err := machines.Get(ctx, m.Name, metav1.GetOptions{})
		require.NoError(t, err)
		cur.Status.Phase = &phase
		if addr != "" {
			cur.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}}
		}
		_, err = machines.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	setStatus("Provisioning", "")
	go func() {
		time.Sleep(2500 * time.Millisecond)
		setStatus("Provisioned", "127.0.0.98")
		playOperator(t, ctx, d.C, "127.0.0.98", "win-m-node")
	}()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.BYOHConfigMap, Namespace: config.OperatorNamespace},
		Data: map[string]string{"127.0.0.98": "username=Administrator"}} // what playOperator waits for
	_, err = d.C.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	rec := &actiontest.Recorder{}
	require.NoError(t, run.Run(ctx, request.SetupFollow{Machines: []string{"win-m-a"}, Timeout: time.Minute}, rec), rec.Dump())
	dump := rec.Dump()
	assert.Contains(t, dump, "Machine openshift-machine-api/win-m-a: phase Provisioning")
	assert.Contains(t, dump, "Machine openshift-machine-api/win-m-a provisioned at 127.0.0.98")
	assert.Contains(t, dump, "node win-m-node registered")
	assert.Contains(t, dump, "node win-m-node is Ready and configured by the operator")
	assert.Equal(t, event.Succeeded, rec.Final(t, "cluster").Outcome)
}

// Following a MachineSet that is not there, or that has no replicas, stops and says what to do instead of
// waiting for Machines that never come: the error is the reason, not the timeout's "not Ready after"
// (real API server).
func TestSetupFollowOfAMachineSetThatIsGoneOrEmpty(t *testing.T) {
	d, run := newFreshCluster(t, configv1.AWSPlatformType)
	ctx := d.Ctx
	zero := int32(0)
	ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "win-zero", Namespace: config.MachineAPINamespace},
		Spec: machinev1beta1.MachineSetSpec{Replicas: &zero,
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{config.MachineSetLabel: "win-zero"}},
			Template: machinev1beta1.MachineTemplateSpec{ObjectMeta: machinev1beta1.ObjectMeta{
				Labels: map[string]string{config.MachineSetLabel: "win-zero", config.MachineOSIDLabel: config.WindowsOSID}}}}}
	_, err := d.C.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).Create(ctx, ms, metav1.CreateOptions{})
	require.NoError(t, err)

	for set, want := range map[string]string{
		"win-gone": "MachineSet win-gone is not there (deleted?)",
		"win-zero": "MachineSet win-zero has 0 replicas: scale it up (wmcon machineset scale win-zero 1)",
	} {
		rec := &actiontest.Recorder{}
		err := run.Run(ctx, request.SetupFollow{MachineSets: []string{set}, Timeout: time.Minute}, rec)
		require.Error(t, err, set)
		assert.Contains(t, err.Error(), want)
		assert.Equal(t, event.Failed, rec.Final(t, "cluster").Outcome, rec.Dump())
	}
}
