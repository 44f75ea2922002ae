package triage_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/restart"
	"github.com/wmcon/wmcon/actions/triage"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

const kubeletLog = `C:\var\log\kubelet\kubelet.log`

// triageEnv is a real API server, simulated Windows hosts and the cluster facts a watcher would publish.
type triageEnv struct {
	*actiontest.Env
	h         *actiontest.Hosts
	info      model.ClusterInfo
	secrets   model.SecretsInfo
	resources map[model.Resource]model.ResourceState
	network   triage.NetworkConfig
	noHosts   bool
}

func newTriageEnv(t *testing.T) *triageEnv {
	e := actiontest.NewEnv(t)
	return &triageEnv{Env: e, h: e.Hosts(),
		info: model.ClusterInfo{Platform: "None", WMCOVersion: "11.0.1", KubernetesVersion: "v1.37.1", NetworkType: "OVNKubernetes"},
		network: triage.NetworkConfig{Type: "OVNKubernetes", ClusterNetworks: []string{"10.128.0.0/14"}, OperatorFound: true,
			HybridOverlay: true, HybridClusterNetworks: []string{"10.132.0.0/14"}},
	}
}

// windowsNode registers a Ready Windows node configured by WMCO 11.0.1, then applies edit.
func (te *triageEnv) windowsNode(name, ip string, edit func(*corev1.Node)) {
	te.T.Helper()
	te.Node(name, ip, true)
	n, err := te.Kube.CoreV1().Nodes().Get(te.Ctx, name, metav1.GetOptions{})
	require.NoError(te.T, err)
	n.Annotations = map[string]string{config.VersionAnnotation: "11.0.1-0f6ea4b"}
	n.Spec.Taints = []corev1.Taint{{Key: "os", Value: "Windows", Effect: corev1.TaintEffectNoSchedule}}
	if edit != nil {
		edit(n)
	}
	n, err = te.Kube.CoreV1().Nodes().Update(te.Ctx, n, metav1.UpdateOptions{})
	require.NoError(te.T, err)
	n.Status.NodeInfo.KubeletVersion = "v1.37.1"
	n.Status.NodeInfo.OSImage = "Windows Server 2022 Datacenter"
	if edit != nil {
		edit(n)
	}
	_, err = te.Kube.CoreV1().Nodes().UpdateStatus(te.Ctx, n, metav1.UpdateOptions{})
	require.NoError(te.T, err)
}

// fixedNetwork reads events from the real server and answers a fixed network configuration, so tests do
// not depend on the cluster-wide network singletons.
type fixedNetwork struct {
	triage.ClusterReads
	nc triage.NetworkConfig
}

func (f fixedNetwork) NetworkConfig(context.Context) (triage.NetworkConfig, error) { return f.nc, nil }

func (te *triageEnv) deps() triage.TriageDeps {
	d := triage.TriageDeps{
		Snapshot: te.snapshot,
		Cluster:  fixedNetwork{ClusterReads: triage.ClusterReads{Clients: te.Clients}, nc: te.network},
		Hosts:    te.h.Resolver,
		LogLines: 50,
	}
	if te.noHosts {
		d.Hosts = nil
	}
	return d
}

// snapshot reads the Windows nodes fresh from the API server, as the watcher would publish them.
func (te *triageEnv) snapshot(ctx context.Context) (*model.Snapshot, error) {
	list, err := te.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	s := &model.Snapshot{Cluster: te.info, Secrets: te.secrets, Resources: te.resources}
	for i := range list.Items {
		s.Nodes = append(s.Nodes, cluster.NodeInfoFrom(&list.Items[i], te.info.WMCOVersion))
	}
	return s, nil
}

func (te *triageEnv) triage(node string) diagnosis.Report {
	te.T.Helper()
	r, err := triage.Triage(te.Ctx, node, te.deps())
	require.NoError(te.T, err)
	return r
}

// triageWait polls cond until it holds, failing the test after a bound.
func triageWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (te *triageEnv) nodeStatus(name string) model.NodeStatus {
	n, err := te.Kube.CoreV1().Nodes().Get(te.Ctx, name, metav1.GetOptions{})
	require.NoError(te.T, err)
	return cluster.NodeInfoFrom(n, "").Status
}

// requireCheck returns a check, failing with the whole report when it is absent or has another status.
func requireCheck(t *testing.T, r diagnosis.Report, id string, status diagnosis.CheckStatus) diagnosis.Check {
	t.Helper()
	c, ok := r.Check(id)
	require.True(t, ok, "check %s missing:\n%s", id, describeReport(r))
	require.Equal(t, status, c.Status, "check %s: %s\n%s", id, c.Detail, describeReport(r))
	if status != diagnosis.CheckOK {
		assert.NotEmpty(t, c.Fix, "check %s says what to do", id)
		// Headless output and JSON show fixes as they are: they name commands, never console keys.
		assert.NotRegexp(t, `press |\([gGlrRud]\)`, c.Fix, "check %s speaks console", id)
	}
	return c
}

// assertBefore checks that check a comes before every check in later.
func assertBefore(t *testing.T, r diagnosis.Report, a string, later ...string) {
	t.Helper()
	ia := r.Index(a)
	require.GreaterOrEqual(t, ia, 0, "check %s missing", a)
	for _, b := range later {
		ib := r.Index(b)
		require.GreaterOrEqual(t, ib, 0, "check %s missing", b)
		assert.Less(t, ia, ib, "%s must come before %s:\n%s", a, b, describeReport(r))
	}
}

func describeReport(r diagnosis.Report) string {
	var b strings.Builder
	for _, c := range r.Checks {
		b.WriteString(string(c.Status) + "\t" + c.ID + "\t" + c.Detail + "\n")
	}
	return b.String()
}

func TestTriageHealthyNode(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	te.windowsNode("win-tr-ok", "127.0.0.41", nil)
	sim := te.h.Add("win-tr-ok", "127.0.0.41", windows.Options{})

	r := te.triage("win-tr-ok")
	var serviceQueries int
	for _, c := range sim.Executed() {
		if strings.Contains(c, "Get-Service") {
			serviceQueries++
		}
	}
	assert.Equal(t, 1, serviceQueries, "every service's state in one round trip: %q", sim.Executed())
	assert.LessOrEqual(t, len(sim.Commands()), 3, "shell detection, services, kubelet log tail: %q", sim.Commands())
	assert.True(t, r.Healthy(), describeReport(r))
	assert.Equal(t, "win-tr-ok", r.Node)
	requireCheck(t, r, "host-ssh", diagnosis.CheckOK)
	requireCheck(t, r, "host-key", diagnosis.CheckOK)
	for _, s := range []string{"containerd", "kubelet", "windows_exporter", "csi-proxy", "hybrid-overlay-node", "kube-proxy", "windows-instance-config-daemon"} {
		requireCheck(t, r, "service:"+s, diagnosis.CheckOK)
	}
	_, azureOnly := r.Check("service:cloud-node-manager")
	assert.False(t, azureOnly, "cloud-node-manager is only checked on Azure")
	for _, id := range []string{"node-ready", "kubelet-errors", "wmco-version", "kubernetes-version", "scheduling", "reboot-required",
		"network-type", "hybrid-overlay", "cluster-network-cidr", "events", "windows-build", "node-pressure"} {
		requireCheck(t, r, id, diagnosis.CheckOK)
	}
	_, aws := r.Check("metadata-route")
	assert.False(t, aws, "the metadata route is only checked on AWS")

	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"id":"service:kubelet","title":"Service kubelet","status":"ok"`)
}

func TestTriageKubeletStoppedThenRestarted(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	const node = "win-tr-kubelet"
	te.windowsNode(node, "127.0.0.42", nil)
	sim := te.h.Add(node, "127.0.0.42", windows.Options{})
	sim.StopService("kubelet")
	triageWait(t, "the simulated node controller marks the node not Ready", func() bool { return te.nodeStatus(node) != model.NodeReady })

	r := te.triage(node)
	c := requireCheck(t, r, "service:kubelet", diagnosis.CheckFail)
	assert.True(t, c.Restartable)
	assert.Equal(t, "kubelet", c.Service)
	assert.Contains(t, c.Detail, "stopped")
	assert.Equal(t, "start it: run wmcon restart-service "+node+" kubelet; if it stops again, read its log: run wmcon logs "+node+" --service kubelet", c.Fix)
	assert.Contains(t, strings.Join(c.Evidence, "\n"), "depends on containerd (Running)")
	assert.Equal(t, "service:kubelet", r.Checks[0].ID, "the stopped kubelet is the likeliest cause:\n%s", describeReport(r))
	requireCheck(t, r, "node-ready", diagnosis.CheckFail)
	assertBefore(t, r, "service:kubelet", "node-ready", "wmco-version")
	assert.False(t, r.Healthy())

	rec := &actiontest.Recorder{}
	require.NoError(t, restart.RestartService(te.Ctx, te.h.Resolver, te.NodeInfo(node), "kubelet", rec), rec.Dump())
	assert.True(t, sim.ServiceRunning("kubelet"), "the simulated host runs the kubelet again")
	assert.Equal(t, event.Succeeded, rec.Final(t, node).Outcome)
	assert.Equal(t, []string{"query", "start"}, rec.Steps(node), "a stopped service is only started")

	triageWait(t, "the node is Ready again", func() bool { return te.nodeStatus(node) == model.NodeReady })
	r = te.triage(node)
	requireCheck(t, r, "service:kubelet", diagnosis.CheckOK)
	requireCheck(t, r, "node-ready", diagnosis.CheckOK)
}

func TestRestartServiceRestartsARunningService(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	const node = "win-tr-restart"
	te.windowsNode(node, "127.0.0.43", nil)
	sim := te.h.Add(node, "127.0.0.43", windows.Options{})
	before, ok := sim.Service("windows_exporter")
	require.True(t, ok)

	rec := &actiontest.Recorder{}
	require.NoError(t, restart.RestartService(te.Ctx, te.h.Resolver, te.NodeInfo(node), "windows_exporter", rec), rec.Dump())
	after, _ := sim.Service("windows_exporter")
	assert.Equal(t, windows.StateRunning, after.State)
	assert.NotEqual(t, before.PID, after.PID, "a new process runs")
	assert.Equal(t, []string{"query", "stop", "start"}, rec.Steps(node))
}

func TestRestartServiceRefusesUnknownAndMissingServices(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	const node = "win-tr-refuse"
	te.windowsNode(node, "127.0.0.44", nil)
	sim := te.h.Add(node, "127.0.0.44", windows.Options{})

	rec := &actiontest.Recorder{}
	err := restart.RestartService(te.Ctx, te.h.Resolver, te.NodeInfo(node), "notepad", rec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"notepad" is not one of WMCO's services (containerd, kubelet`)
	assert.Equal(t, event.Failed, rec.Final(t, node).Outcome)
	assert.Empty(t, sim.Executed(), "nothing was sent to the host")

	client, err := te.h.Pool.Client(remote.Target{Node: node, Addr: sim.Addr()})
	require.NoError(t, err)
	require.NoError(t, client.StopService(te.Ctx, "kube-proxy"))
	require.NoError(t, client.DeleteService(te.Ctx, "kube-proxy"))
	rec = &actiontest.Recorder{}
	err = restart.RestartService(te.Ctx, te.h.Resolver, te.NodeInfo(node), "kube-proxy", rec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not installed")
	assert.Contains(t, rec.Final(t, node).Hint, config.VersionAnnotation)
}

func TestRestartServiceRefusesALinuxNodeWithoutSendingItToTriage(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	const node = "lin-tr-restart"
	te.Node(node, "127.0.0.63", false)

	rec := &actiontest.Recorder{}
	err := restart.RestartService(te.Ctx, te.h.Resolver, te.NodeInfo(node), "kubelet", rec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), node+" is not a Windows node")
	final := rec.Final(t, node)
	assert.Equal(t, event.Failed, final.Outcome)
	assert.NotContains(t, final.Hint, "triage", "triage refuses Linux nodes too")
	assert.Contains(t, final.Hint, "oc debug node/"+node)
}

func TestTriageMissingServices(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	te.windowsNode("win-tr-deleted", "127.0.0.45", nil)
	sim := te.h.Add("win-tr-deleted", "127.0.0.45", windows.Options{})
	client, err := te.h.Pool.Client(remote.Target{Node: "win-tr-deleted", Addr: sim.Addr()})
	require.NoError(t, err)
	require.NoError(t, client.StopService(te.Ctx, "kube-proxy"))
	require.NoError(t, client.DeleteService(te.Ctx, "kube-proxy"))

	r := te.triage("win-tr-deleted")
	c := requireCheck(t, r, "service:kube-proxy", diagnosis.CheckFail)
	assert.Contains(t, c.Detail, "not installed")
	assert.False(t, c.Restartable, "a missing service cannot be started")
	assert.Equal(t, "service:kube-proxy", r.Checks[0].ID, describeReport(r))
	requireCheck(t, r, "service:kubelet", diagnosis.CheckOK)

	// A host WMCO never configured has none of the services: one check says so.
	te.windowsNode("win-tr-bare", "127.0.0.46", nil)
	te.addUnconfigured("win-tr-bare", "127.0.0.46")
	r = te.triage("win-tr-bare")
	c = requireCheck(t, r, "services", diagnosis.CheckFail)
	assert.Contains(t, c.Detail, "none of WMCO's services is installed")
	assert.Equal(t, "services", r.Checks[0].ID, describeReport(r))
	_, perService := r.Check("service:kubelet")
	assert.False(t, perService)
}

// addUnconfigured starts a fresh Windows Server (OpenSSH only) for node, without a simulated kubelet.
func (te *triageEnv) addUnconfigured(node, ip string) *windows.Host {
	te.T.Helper()
	sim, err := windows.Start(windows.Options{Addr: ip + ":0", AuthorizedKeys: []ssh.PublicKey{te.h.Signer.PublicKey()}, LogInterval: time.Hour})
	require.NoError(te.T, err)
	te.T.Cleanup(func() { sim.Close() })
	te.h.Resolver.Addrs[node] = sim.Addr()
	return sim
}

func TestTriageHostDown(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	const node = "win-tr-down"
	te.windowsNode(node, "127.0.0.47", nil)
	sim := te.h.Add(node, "127.0.0.47", windows.Options{})
	sim.SetNeverReturn(true)
	sim.Reboot()
	triageWait(t, "the node turns not Ready", func() bool { return te.nodeStatus(node) != model.NodeReady })

	r := te.triage(node)
	c := requireCheck(t, r, "host-ssh", diagnosis.CheckFail)
	assert.Contains(t, c.Detail, "cannot reach the host")
	assert.Equal(t, "host-ssh", r.Checks[0].ID, describeReport(r))
	requireCheck(t, r, "node-ready", diagnosis.CheckFail)
	assertBefore(t, r, "host-ssh", "node-ready")
	for _, id := range []string{"service:kubelet", "service:containerd", "kubelet-errors", "host-key"} {
		c := requireCheck(t, r, id, diagnosis.CheckUnknown)
		assert.True(t, strings.HasPrefix(c.Detail, "unknown: cannot reach host ("), c.Detail)
	}
	// The cluster-only checks still ran.
	requireCheck(t, r, "wmco-version", diagnosis.CheckOK)
	requireCheck(t, r, "kubernetes-version", diagnosis.CheckOK)
	requireCheck(t, r, "events", diagnosis.CheckOK)
}

func TestTriageClosedAddressAndNoSSH(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	const node = "win-tr-closed"
	te.windowsNode(node, "127.0.0.48", nil)
	sim := te.addUnconfigured(node, "127.0.0.48")
	require.NoError(t, sim.Close()) // nothing listens there any more

	r := te.triage(node)
	requireCheck(t, r, "host-ssh", diagnosis.CheckFail)
	requireCheck(t, r, "service:kubelet", diagnosis.CheckUnknown)
	requireCheck(t, r, "node-ready", diagnosis.CheckOK)

	te.noHosts = true
	r = te.triage(node)
	c := requireCheck(t, r, "host-ssh", diagnosis.CheckUnknown)
	assert.Contains(t, c.Detail, "no SSH access")
	assert.True(t, r.Healthy(), "without SSH nothing is known to fail")
}

func TestTriageHostKeyChanged(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	const node = "win-tr-hostkey"
	te.windowsNode(node, "127.0.0.49", nil)
	sim := te.h.Add(node, "127.0.0.49", windows.Options{})
	requireCheck(t, te.triage(node), "host-key", diagnosis.CheckOK) // pinned on first use

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	newKey, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	sim.SetHostKey(newKey)
	sim.DropConnections() // the next dial sees the new key

	r := te.triage(node)
	c := requireCheck(t, r, "host-key", diagnosis.CheckFail)
	assert.Contains(t, c.Fix, "wmcon hostkey forget "+node)
	assert.Contains(t, strings.Join(c.Evidence, "\n"), "presented: "+ssh.FingerprintSHA256(newKey.PublicKey()))
	assert.Equal(t, "host-key", r.Checks[0].ID, describeReport(r))
	requireCheck(t, r, "host-ssh", diagnosis.CheckFail)
	assertBefore(t, r, "host-key", "host-ssh")
	requireCheck(t, r, "service:kubelet", diagnosis.CheckUnknown)
}

func TestTriageAWSMetadataRouteMissing(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	te.info.Platform = "AWS"
	const node = "win-tr-aws"
	te.windowsNode(node, "127.0.0.50", nil)
	sim := te.h.Add(node, "127.0.0.50", windows.Options{Platform: "AWS", LoseMetadataRouteOnReboot: true, RebootDowntime: 100 * time.Millisecond})
	requireCheck(t, te.triage(node), "metadata-route", diagnosis.CheckOK)

	sim.Reboot()
	triageWait(t, "the host is back with its kubelet", func() bool { return sim.Up() && sim.ServiceRunning("kubelet") })
	require.False(t, sim.HasMetadataRoute())

	r := te.triage(node)
	c := requireCheck(t, r, "metadata-route", diagnosis.CheckFail)
	assert.Contains(t, c.Detail, "169.254.169.254")
	for _, other := range r.Checks {
		if other.Status != diagnosis.CheckFail {
			assertBefore(t, r, "metadata-route", other.ID)
		}
	}
}

func TestTriageWarningsInOrder(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	const node = "win-tr-warn"
	te.windowsNode(node, "127.0.0.51", func(n *corev1.Node) {
		n.Annotations[config.VersionAnnotation] = "10.19.0-1a2b3c4"
		n.Annotations[config.RebootRequiredAnnotation] = ""
		n.Annotations[config.MachineAnnotation] = config.MachineAPINamespace + "/win-tr-warn-machine"
		n.Spec.Unschedulable = true
	})
	sim := te.h.Add(node, "127.0.0.51", windows.Options{})
	sim.AppendLog(kubeletLog,
		`I0301 12:00:00.000001    4242 kubelet.go:2421] "Syncing pods"`,
		`E0301 12:00:01.000002    4242 kubelet.go:2000] "Failed to pull image" err="mirror unreachable"`,
		`I0301 12:00:02.000003    4242 kubelet.go:2421] "Syncing pods"`)
	te.event("default", "tr-warn-node", corev1.ObjectReference{Kind: "Node", Name: node}, "Warning", "NodeNotSchedulable")
	te.event(config.MachineAPINamespace, "tr-warn-machine", corev1.ObjectReference{Kind: "Machine", Namespace: config.MachineAPINamespace, Name: "win-tr-warn-machine"}, "Normal", "Update")

	r := te.triage(node)
	assert.True(t, r.Healthy(), "warnings only:\n%s", describeReport(r))
	requireCheck(t, r, "reboot-required", diagnosis.CheckWarn)
	errs := requireCheck(t, r, "kubelet-errors", diagnosis.CheckWarn)
	assert.Equal(t, "kubelet", errs.Service, "l tails the kubelet's log from here")
	require.Len(t, errs.Evidence, 1)
	assert.Contains(t, errs.Evidence[0], `err="mirror unreachable"`)
	drift := requireCheck(t, r, "wmco-version", diagnosis.CheckWarn)
	assert.Contains(t, drift.Detail, "version drift")
	cordon := requireCheck(t, r, "scheduling", diagnosis.CheckWarn)
	assert.Contains(t, cordon.Detail, "cordoned")
	ev := requireCheck(t, r, "events", diagnosis.CheckWarn)
	evidence := strings.Join(ev.Evidence, "\n")
	assert.Contains(t, evidence, "NodeNotSchedulable (Node/"+node+")")
	assert.Contains(t, evidence, "Update (Machine/"+config.MachineAPINamespace+"/win-tr-warn-machine)")

	assertBefore(t, r, "reboot-required", "kubelet-errors", "wmco-version", "scheduling", "events")
	assertBefore(t, r, "kubelet-errors", "wmco-version")
	assertBefore(t, r, "wmco-version", "scheduling")
	assertBefore(t, r, "scheduling", "events", "host-ssh")
}

// event records a core/v1 event about obj, seen a minute ago.
func (te *triageEnv) event(ns, name string, obj corev1.ObjectReference, typ, reason string) {
	te.T.Helper()
	at := metav1.NewTime(time.Now().Add(-time.Minute))
	e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, InvolvedObject: obj, Type: typ, Reason: reason,
		Message: reason + " reported by the test", LastTimestamp: at, FirstTimestamp: at, Count: 1, Source: corev1.EventSource{Component: "test"}}
	_, err := te.Kube.CoreV1().Events(ns).Create(te.Ctx, e, metav1.CreateOptions{})
	require.NoError(te.T, err)
	te.T.Cleanup(func() { _ = te.Kube.CoreV1().Events(ns).Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func TestTriageNotReadyWithoutSSH(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	te.noHosts = true
	const node = "win-tr-notready"
	te.windowsNode(node, "127.0.0.52", func(n *corev1.Node) {
		if len(n.Status.Conditions) > 0 {
			n.Status.Conditions[0].Status = corev1.ConditionFalse
			n.Status.Conditions[0].Reason = "KubeletNotReady"
			n.Status.Conditions[0].Message = "container runtime network not ready: NetworkReady=false"
		}
	})

	r := te.triage(node)
	c := requireCheck(t, r, "node-ready", diagnosis.CheckFail)
	assert.Contains(t, c.Detail, "Ready is False (KubeletNotReady) since ")
	assert.Contains(t, c.Detail, "container runtime network not ready")
	assert.Equal(t, "node-ready", r.Checks[0].ID, describeReport(r))
	requireCheck(t, r, "service:kubelet", diagnosis.CheckUnknown)
}

func TestTriageVersionWindowAndKeys(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	te.noHosts = true
	te.resources = map[model.Resource]model.ResourceState{model.ResSecrets: {Availability: model.Available}, model.ResUserData: {Availability: model.Available}}
	te.secrets = model.SecretsInfo{
		PrivateKey: model.KeyInfo{Present: true, Type: "ssh-rsa", Bits: 1024, Fingerprint: "SHA256:weak", Warning: "RSA key of 1024 bits: use at least 2048"},
		UserData:   model.UserDataInfo{Present: true, KeyFingerprint: "SHA256:other", Problem: "the public key in windows-user-data does not belong to cloud-private-key"},
	}
	const node = "win-tr-versions"
	te.windowsNode(node, "127.0.0.53", func(n *corev1.Node) { n.Status.NodeInfo.KubeletVersion = "v1.35.4" })

	r := te.triage(node)
	k := requireCheck(t, r, "kubernetes-version", diagnosis.CheckFail)
	assert.Contains(t, k.Detail, "v1.35.4 is outside WMCO 11.0.1's supported window v1.36–v1.37")
	requireCheck(t, r, "private-key", diagnosis.CheckWarn)
	ud := requireCheck(t, r, "user-data-key", diagnosis.CheckFail)
	assert.Contains(t, ud.Fix, "restart the operator", "with WMCO installed the operator rewrites it")
	assertBefore(t, r, "kubernetes-version", "user-data-key", "private-key")

	te.info.WMCOVersion = "" // standalone: wmcon writes the user data with the key
	ud = requireCheck(t, te.triage(node), "user-data-key", diagnosis.CheckFail)
	assert.Contains(t, ud.Fix, "wmcon key create --from-file")
}

// TestTriageNetworkPrerequisites reads the real cluster-wide network objects, so it does not run in parallel
// with tests that might create them.
func TestTriageNetworkPrerequisites(t *testing.T) {
	te := newTriageEnv(t)
	te.noHosts = true
	te.info.NetworkType = "" // the watcher has not seen it: triage reads it itself
	netCfg := &configv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	netCfg.Spec.NetworkType = "OpenShiftSDN"
	netCfg.Spec.ClusterNetwork = []configv1.ClusterNetworkEntry{{CIDR: "240.0.0.0/4", HostPrefix: 23}}
	netCfg.Spec.ServiceNetwork = []string{"172.30.0.0/16"}
	_, err := te.Clients.Config.ConfigV1().Networks().Create(te.Ctx, netCfg, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = te.Clients.Config.ConfigV1().Networks().Delete(context.Background(), "cluster", metav1.DeleteOptions{})
	})
	op := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1", "kind": "Network", "metadata": map[string]any{"name": "cluster"},
		"spec": map[string]any{"defaultNetwork": map[string]any{"type": "OVNKubernetes", "ovnKubernetesConfig": map[string]any{
			"hybridOverlayConfig": map[string]any{
				"hybridClusterNetwork":   []any{map[string]any{"cidr": "10.132.0.0/14", "hostPrefix": int64(23)}},
				"hybridOverlayVXLANPort": int64(9898),
			}}}}}}
	gvr := schema.GroupVersionResource{Group: "operator.openshift.io", Version: "v1", Resource: "networks"}
	_, err = te.Clients.Dynamic.Resource(gvr).Create(te.Ctx, op, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = te.Clients.Dynamic.Resource(gvr).Delete(context.Background(), "cluster", metav1.DeleteOptions{})
	})

	const node = "win-tr-net2019"
	te.windowsNode(node, "127.0.0.54", func(n *corev1.Node) {
		n.Labels[config.WindowsBuildLabel] = "10.0.17763"
		n.Status.NodeInfo.OSImage = "Windows Server 2019 Datacenter"
	})
	deps := te.deps()
	deps.Cluster = triage.ClusterReads{Clients: te.Clients}
	r, err := triage.Triage(te.Ctx, node, deps)
	require.NoError(t, err)

	sdn := requireCheck(t, r, "network-type", diagnosis.CheckFail)
	assert.Contains(t, sdn.Detail, "OpenShift SDN is not supported")
	cidr := requireCheck(t, r, "cluster-network-cidr", diagnosis.CheckFail)
	assert.Contains(t, cidr.Detail, "240.0.0.0/4")
	vxlan := requireCheck(t, r, "hybrid-overlay", diagnosis.CheckFail)
	assert.Contains(t, vxlan.Detail, "Windows Server 2019 does not support a custom VXLAN port (hybridOverlayVXLANPort 9898)")
	requireCheck(t, r, "windows-build", diagnosis.CheckOK)
	assertBefore(t, r, "network-type", "cluster-network-cidr", "hybrid-overlay")
}

// exporterMetrics reads the simulated hosts' windows_exporter over HTTP, twice (CPU is a rate), as
// wmcon triage reads a node's exporter.
func (te *triageEnv) exporterMetrics() triage.TriageMetrics {
	src := &metrics.ExporterSource{Via: "HTTP to the simulated host", Tracker: metrics.NewTracker(30),
		Scrape: func(ctx context.Context, n metrics.Node) ([]byte, error) {
			sim, ok := te.h.Sims[n.Name]
			if !ok {
				return nil, errors.New("no simulated host")
			}
			url, err := sim.ExporterURL()
			if err != nil {
				return nil, err
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return nil, err
			}
			resp, err := sim.ExporterClient().Do(req) // a configured node's exporter serves TLS
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			return io.ReadAll(resp.Body)
		}}
	return func(ctx context.Context, node string) (model.MetricsReport, error) {
		return metrics.Current(ctx, src, []metrics.Node{{Name: node}}, 300*time.Millisecond)
	}
}

// TestTriageResourceChecks: a host with 3 % free on C:, 93 % memory and a CPU at 97 % fails the disk
// and memory checks and warns of the CPU (one reading cannot say for how long); with its
// windows_exporter stopped the three are unknown, and the stopped exporter is the failure shown.
func TestTriageResourceChecks(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	te.windowsNode("win-tr-res", "127.0.0.48", nil)
	sim := te.h.Add("win-tr-res", "127.0.0.48", windows.Options{})
	triageWait(t, "windows_exporter runs", func() bool { _, err := sim.ExporterURL(); return err == nil })
	sim.SetLoad(windows.Load{CPUBusy: 0.97, MemoryUsed: 0.93, RxBytesPS: 1e6, TxBytesPS: 1e5})
	require.NoError(t, sim.SetVolumeFree("C:", 0.03*(128<<30)))
	deps := te.deps()
	deps.Metrics = te.exporterMetrics()

	r, err := triage.Triage(te.Ctx, "win-tr-res", deps)
	require.NoError(t, err)
	disk := requireCheck(t, r, "disk-free", diagnosis.CheckFail)
	assert.Equal(t, "C: has 3 % free: the kubelet's image garbage collection will fail, and under 10 % free it evicts pods (DiskPressure) and image pulls fail", disk.Detail)
	assert.Contains(t, disk.Evidence, "source: windows_exporter via HTTP to the simulated host")
	assert.Contains(t, disk.Evidence, "C: has 3 % free (3.8 GiB), the fullest volume with a drive letter")
	mem := requireCheck(t, r, "memory-full", diagnosis.CheckFail)
	assert.Contains(t, mem.Detail, "memory 93 % used of 16.0 GiB (above 90 %)")
	cpu := requireCheck(t, r, "cpu-busy", diagnosis.CheckWarn)
	assert.Contains(t, cpu.Detail, "CPU 97 % now, above 90 % for an unknown time (no history: one reading)")
	assertBefore(t, r, "disk-free", "memory-full", "node-pressure")

	sim.StopService("windows_exporter")
	r, err = triage.Triage(te.Ctx, "win-tr-res", deps)
	require.NoError(t, err)
	requireCheck(t, r, "service:windows_exporter", diagnosis.CheckFail)
	for _, id := range []string{"disk-free", "memory-full", "cpu-busy"} {
		c := requireCheck(t, r, id, diagnosis.CheckUnknown)
		assert.Contains(t, c.Detail, "unknown: no metrics could be read (winsim: windows_exporter has not run on this host)", id)
	}
}

// TestTriageStandaloneNodeHasNoWICD: a node wmcon configured without WMCO (version annotation wmcon-…) has
// no windows-instance-config-daemon, which only WMCO installs: that is as expected, not a failure; on a node
// WMCO configured, the same missing daemon still fails.
func TestTriageStandaloneNodeHasNoWICD(t *testing.T) {
	t.Parallel()
	te := newTriageEnv(t)
	for _, tc := range []struct {
		node, ip, version string
		want              diagnosis.CheckStatus
	}{
		{"win-tr-standalone", "127.0.0.47", "wmcon-11.0.1", diagnosis.CheckOK},
		{"win-tr-nowicd", "127.0.0.48", "11.0.1-0f6ea4b", diagnosis.CheckFail},
	} {
		te.windowsNode(tc.node, tc.ip, func(n *corev1.Node) { n.Annotations[config.VersionAnnotation] = tc.version })
		sim := te.h.Add(tc.node, tc.ip, windows.Options{})
		client, err := te.h.Pool.Client(remote.Target{Node: tc.node, Addr: sim.Addr()})
		require.NoError(t, err)
		require.NoError(t, client.StopService(te.Ctx, "windows-instance-config-daemon"))
		require.NoError(t, client.DeleteService(te.Ctx, "windows-instance-config-daemon"))
		r := te.triage(tc.node)
		c := requireCheck(t, r, "service:windows-instance-config-daemon", tc.want)
		assert.Contains(t, c.Detail, "not installed", tc.node)
		requireCheck(t, r, "service:kubelet", diagnosis.CheckOK)
	}
}
