package setup_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/doctor"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/olm"
	"github.com/wmcon/wmcon/testsupport/actiontest"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// newFreshCluster is a real API server seeded as a healthy OpenShift cluster on platform p with nothing for
// Windows yet (no operator, no key, no machines), and a Runner whose setup backends reach it.
func newFreshCluster(t *testing.T, p configv1.PlatformType) (*actiontest.DoctorCluster, actions.Runner) {
	srv := kubeapi.Start(t)
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	d := &actiontest.DoctorCluster{T: t, Ctx: ctx, Server: srv, C: c}
	d.SeedCluster(p)
	return d, setupRunner(t, c)
}

// setupRunner is a Runner over c as the session wires it, auditing into the test's temp dir.
func setupRunner(t *testing.T, c cluster.Clients) actions.Runner {
	ops := cluster.NewOps(c)
	return actions.Runner{Backends: actions.Backends{Cluster: ops,
		Audit: &actions.AuditLog{Path: filepath.Join(t.TempDir(), "audit.log")},
		Setup: &actions.SetupBackends{MachineSets: cluster.NewMachineSets(c), BYOH: cluster.NewBYOHConfigMap(c),
			OLM: cluster.NewOLM(c), Keys: cluster.NewKeys(c), Ops: cluster.NewSetupOps(c), Watch: ops,
			Doctor: func(ctx context.Context) (diagnosis.Report, error) {
				return doctor.Doctor(ctx, doctor.DoctorDeps{Clients: c}, nil)
			}}}}
}

// detect runs SetupDetect through the runner and returns the state it reported.
func detect(t *testing.T, ctx context.Context, run actions.Runner, standalone bool) event.Setup {
	t.Helper()
	rec := &actiontest.Recorder{}
	require.NoError(t, run.Run(ctx, request.SetupDetect{Standalone: standalone}, rec), rec.Dump())
	states := rec.Of("", event.SetupState)
	require.Len(t, states, 1, rec.Dump())
	require.NotNil(t, states[0].Setup)
	assert.Equal(t, event.Succeeded, rec.Final(t, "cluster").Outcome)
	return *states[0].Setup
}

func done(s event.Setup) []event.SetupStepID {
	var out []event.SetupStepID
	for _, st := range s.Steps {
		if st.Done {
			out = append(out, st.ID)
		}
	}
	return out
}

// preview runs req (a preview) and returns its plan, checking that it finished without changing anything.
func preview(t *testing.T, ctx context.Context, run actions.Runner, req request.Request) event.Plan {
	t.Helper()
	rec := &actiontest.Recorder{}
	require.NoError(t, run.Run(ctx, req, rec), rec.Dump())
	plans := rec.Of("", event.PlanShown)
	require.Len(t, plans, 1, rec.Dump())
	require.NotNil(t, plans[0].Plan)
	assert.Empty(t, rec.Asked(), "a preview asks nothing")
	return *plans[0].Plan
}

// readyWindowsNode registers a Ready Windows node of build 10.0.20348 at ip, as a kubelet would.
func readyWindowsNode(t *testing.T, ctx context.Context, c cluster.Clients, name, ip string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{config.OSLabel: "windows",
		config.WindowsBuildLabel: "10.0.20348", corev1.LabelHostname: name}}}
	created, err := c.Kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	require.NoError(t, err)
	now := metav1.Now()
	created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: now, LastTransitionTime: now}}
	_, err = c.Kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// TestSetupStepsAndDetection walks the guided setup's steps on a fresh OpenShift cluster (real API server,
// the OLM stand-in), each first as a preview that changes nothing, and checks after each that detection —
// from the cluster alone — says it is done and names the next one: a wizard reopened at any point resumes
// there.
func TestSetupStepsAndDetection(t *testing.T) {
	d, run := newFreshCluster(t, configv1.AWSPlatformType)
	ctx := d.Ctx

	s := detect(t, ctx, run, false)
	assert.Equal(t, event.SetupOperator, s.Next, "a fresh cluster passes the checks and needs the operator")
	assert.Equal(t, []event.SetupStepID{event.SetupCheck}, done(s))
	assert.Equal(t, "", s.Mode)
	assert.True(t, s.MachineSets, "AWS takes MachineSets")
	assert.Contains(t, s.Step(event.SetupOperator).Hint, "wmcon setup --standalone")
	assert.Contains(t, s.Step(event.SetupKey).Hint, "--generate-key")

	// Choosing standalone is remembered by nobody but the caller: detection with it marks the step done.
	st := detect(t, ctx, run, true)
	assert.Equal(t, event.ModeStandalone, st.Mode)
	assert.Equal(t, event.SetupKey, st.Next)

	// The operator: a preview shows the three objects and creates nothing; the install then follows OLM.
	sim := olm.New(d.C, olm.Options{Catalogs: []olm.Catalog{{Name: cluster.DefaultCatalogSource, Channels: []string{"stable"}, DefaultChannel: "stable", Version: "11.0.1"}}})
	require.NoError(t, sim.Seed(ctx))
	plan := preview(t, ctx, run, request.OperatorInstall{Preview: true})
	assert.Contains(t, plan.YAML, "kind: Subscription")
	assert.Contains(t, plan.YAML, "kind: OperatorGroup")
	assert.Contains(t, plan.YAML, cluster.ClusterMonitoringKey)
	_, err := d.C.Kube.CoreV1().Namespaces().Get(ctx, "openshift-windows-machine-config-operator", metav1.GetOptions{})
	if err == nil { // the test server creates the namespace; no Subscription may exist
		st, err := cluster.NewOLM(d.C).State(ctx)
		require.NoError(t, err)
		assert.Nil(t, st.Subscription, "the preview subscribed")
	}
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	go sim.Run(simCtx, 50*time.Millisecond)
	rec := &actiontest.Recorder{}
	require.NoError(t, run.Run(ctx, request.OperatorInstall{Wait: true, Timeout: time.Minute}, rec), rec.Dump())
	s = detect(t, ctx, run, false)
	assert.Equal(t, event.ModeOperator, s.Mode)
	assert.Equal(t, event.SetupKey, s.Next, s.Step(event.SetupOperator))

	// The key: a preview of a generated key writes no file; the real run writes the pair and the secret.
	out := filepath.Join(t.TempDir(), "wmcon-key")
	plan = preview(t, ctx, run, request.KeyInstall{Generate: true, Out: out, Preview: true})
	assert.Contains(t, plan.Summary[0], out)
	assert.NoFileExists(t, out)
	rec = &actiontest.Recorder{}
	require.NoError(t, run.Run(ctx, request.KeyInstall{Generate: true, Out: out}, rec), rec.Dump())
	fi, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	s = detect(t, ctx, run, false)
	assert.Equal(t, event.SetupMachines, s.Next)

	// Machines: a BYOH host, previewed (the ConfigMap is not created), then added.
	plan = preview(t, ctx, run, request.BYOHAdd{Address: "127.0.0.91", User: "Administrator", Preview: true})
	assert.Contains(t, plan.YAML, "127.0.0.91: username=Administrator")
	_, err = d.C.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the preview created windows-instances")
	rec = &actiontest.Recorder{}
	require.NoError(t, run.Run(ctx, request.BYOHAdd{Address: "127.0.0.91", User: "Administrator"}, rec), rec.Dump())
	s = detect(t, ctx, run, false)
	assert.Equal(t, event.SetupConfigure, s.Next)
	require.Len(t, s.Hosts, 1)
	assert.Equal(t, event.SetupHost{Kind: "byoh", Name: "127.0.0.91", Address: "127.0.0.91", User: "Administrator"}, s.Hosts[0])

	// The host becomes a Ready node (as the operator would make it): configure is done, workloads next.
	readyWindowsNode(t, ctx, d.C, "win-setup-a", "127.0.0.91")
	s = detect(t, ctx, run, false)
	assert.Equal(t, event.SetupWorkloads, s.Next)
	assert.Equal(t, "10.0.20348", s.Build)
	assert.True(t, s.Hosts[0].Ready)

	// Workloads: the RuntimeClass, previewed then created; a second run reuses it.
	plan = preview(t, ctx, run, request.RuntimeClassEnsure{Preview: true})
	assert.Contains(t, plan.YAML, "node.kubernetes.io/windows-build: 10.0.20348")
	_, err = d.C.Kube.NodeV1().RuntimeClasses().Get(ctx, "windows-10-0-20348", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the preview created the RuntimeClass")
	for _, want := range []string{"created RuntimeClass windows-10-0-20348", "already exists and fits: reused"} {
		rec = &actiontest.Recorder{}
		require.NoError(t, run.Run(ctx, request.RuntimeClassEnsure{}, rec), rec.Dump())
		assert.Contains(t, rec.Dump(), want)
	}
	rc, err := d.C.Kube.NodeV1().RuntimeClasses().Get(ctx, "windows-10-0-20348", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{config.OSLabel: "windows", config.WindowsBuildLabel: "10.0.20348"}, rc.Scheduling.NodeSelector)
	assert.Equal(t, []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "Windows", Effect: corev1.TaintEffectNoSchedule}}, rc.Scheduling.Tolerations)
	s = detect(t, ctx, run, false)
	assert.Equal(t, event.SetupDone, s.Next)
	assert.Equal(t, "windows-10-0-20348", s.RuntimeClass)

	// The changes were audited, the previews and detections were not.
	records, err := actions.ReadAudit(run.Backends.Audit.Path)
	require.NoError(t, err)
	var audited []string
	for _, r := range records {
		audited = append(audited, r.Action)
	}
	assert.Equal(t, []string{"operator-install", "key-create", "byoh-add", "runtimeclass", "runtimeclass"}, audited)
}

// A RuntimeClass of the same name that does not fit is never changed: the step fails saying how it differs.
func TestRuntimeClassThatDoesNotFitIsRefused(t *testing.T) {
	d, run := newFreshCluster(t, configv1.NonePlatformType)
	ctx := d.Ctx
	readyWindowsNode(t, ctx, d.C, "win-rc-a", "127.0.0.92")
	wrong := setup.WindowsRuntimeClass("windows", "10.0.17763")
	require.NoError(t, cluster.NewSetupOps(d.C).CreateRuntimeClass(ctx, wrong))
	rec := &actiontest.Recorder{}
	err := run.Run(ctx, request.RuntimeClassEnsure{Name: "windows"}, rec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"10.0.17763", not "10.0.20348"`)
	assert.Equal(t, event.Failed, rec.Final(t, "windows").Outcome)
	s := detect(t, ctx, run, true)
	w := s.Step(event.SetupWorkloads)
	assert.False(t, w.Done, "a RuntimeClass for another build does not count")
	assert.Equal(t, []string{"no RuntimeClass selects Windows build 10.0.20348 (node win-rc-a)"}, w.Evidence)
}

// A standalone choice survives a quit: the key installed in standalone mode carries it, so a detection
// that is not told (a wizard re-opened the next day, wmcon setup without --standalone) still finds the
// operator step done in standalone mode and goes on at the machines; the plan says so first. A key
// installed without the choice records nothing.
func TestStandaloneChoiceIsRecordedWithTheKey(t *testing.T) {
	d, run := newFreshCluster(t, configv1.AWSPlatformType)
	ctx := d.Ctx
	out := filepath.Join(t.TempDir(), "wmcon-key")

	plan := preview(t, ctx, run, request.KeyInstall{Generate: true, Out: out, Standalone: true, Preview: true})
	assert.Contains(t, strings.Join(plan.Summary, "\n"), config.SetupModeAnnotation+"=standalone")
	assert.Equal(t, "", detect(t, ctx, run, false).Mode, "a preview records nothing")

	rec := &actiontest.Recorder{}
	require.NoError(t, run.Run(ctx, request.KeyInstall{Generate: true, Out: out}, rec), rec.Dump())
	assert.Equal(t, "", detect(t, ctx, run, false).Mode, "a key installed without the choice says nothing of it")

	rec = &actiontest.Recorder{}
	require.NoError(t, run.Run(ctx, request.KeyInstall{File: out, Standalone: true}, rec), rec.Dump())
	assert.Contains(t, rec.Dump(), "recorded standalone mode on the secret")
	s := detect(t, ctx, run, false)
	assert.Equal(t, event.ModeStandalone, s.Mode)
	assert.True(t, s.Step(event.SetupOperator).Done)
	assert.Contains(t, strings.Join(s.Step(event.SetupOperator).Evidence, " "), "chosen when the key was installed")
	assert.Equal(t, event.SetupMachines, s.Next)
	sec, err := d.C.Kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, config.PrivateKeySecret, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "standalone", sec.Annotations[config.SetupModeAnnotation])
}
