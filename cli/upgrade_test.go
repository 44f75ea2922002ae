package cli

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/upgrade"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// startWith boots a bare host whose kubelet.exe is kubelet (the honest kubelet, possibly wrapped).
func (b *bareHosts) startWith(name, ip string, kubelet windows.Program) *windows.Host {
	b.t.Helper()
	return b.startOpts(name, ip, windows.Options{Programs: map[string]windows.Program{"kubelet.exe": kubelet}})
}

// machineBackedNode registers a Windows Node backed by a Running Machine of MachineSet ms (labelled as WMCO's
// are), carrying version: a node the operator owns.
func machineBackedNode(t *testing.T, ctx context.Context, clients cluster.Clients, ms, node, ip, version string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels:      map[string]string{config.OSLabel: "windows", config.OSIDNodeLabel: config.WindowsOSID},
		Annotations: map[string]string{config.VersionAnnotation: version, config.MachineAnnotation: config.MachineAPINamespace + "/" + node}}}
	_, err := clients.Kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = clients.Kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	// A patch of the status, not an update: the node lifecycle controller may have changed the Node already.
	status, err := json.Marshal(map[string]any{"status": corev1.NodeStatus{
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now()}}}})
	require.NoError(t, err)
	_, err = clients.Kube.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, status, metav1.PatchOptions{}, "status")
	require.NoError(t, err)
	sets := clients.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace)
	if _, err := sets.Get(ctx, ms, metav1.GetOptions{}); err != nil {
		_, err = sets.Create(ctx, &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: ms},
			Spec: machinev1beta1.MachineSetSpec{Replicas: ptr.To[int32](1), Template: machinev1beta1.MachineTemplateSpec{
				ObjectMeta: machinev1beta1.ObjectMeta{Labels: map[string]string{config.MachineOSIDLabel: config.WindowsOSID}}}}},
			metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = sets.Delete(context.Background(), ms, metav1.DeleteOptions{}) })
	}
	machines := clients.Machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	m, err := machines.Create(ctx, &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels: map[string]string{config.MachineOSIDLabel: config.WindowsOSID, config.MachineSetLabel: ms}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = machines.Delete(context.Background(), node, metav1.DeleteOptions{}) })
	m.Status.Phase = ptr.To("Running")
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node}
	m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	_, err = machines.UpdateStatus(ctx, m, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// TestUpgradeHeadlessEndToEnd runs wmcon upgrade plan and run against the real kube-apiserver and
// kube-controller-manager with simulated hosts whose honest kubelets joined with what wmcon configure wrote:
// the plan groups a Machine-backed node (the operator's) apart from the standalone ones, in order and why;
// run upgrades a standalone node to the new payload (files, version annotation, a Ready heartbeat of the
// restarted kubelet, uncordoned, audited); a node whose new kubelet does not start stops the run with its
// state reported (left cordoned, how to finish), the next node not started; a re-run once fixed converges.
func TestUpgradeHeadlessEndToEnd(t *testing.T) {
	dir := t.TempDir()
	server := kubeapi.Start(t, kubeapi.WithControllerManager())
	t.Setenv(actions.AuditEnv, filepath.Join(dir, "wmcon-audit.log"))
	ctx := context.Background()
	clients, err := cluster.NewClients(server.AdminConfig())
	require.NoError(t, err)
	kube := kubernetes.NewForConfigOrDie(server.AdminConfig())
	b := newBareHosts(t)
	b.overlay(kube)
	admin := server.Kubeconfig("wmcon-upgrade", "system:masters")

	// Three standalone nodes, configured by wmcon with the first payload; b's new kubelet will not start.
	var brokenB atomic.Bool
	honest := kubelet.Kubelet(kubelet.KubeletOptions{})
	kubeletB := func(ctx context.Context, p *windows.Process) error {
		if brokenB.Load() {
			return errors.New("flag provided but not defined: -rotate-server-certificates-typo")
		}
		return honest(ctx, p)
	}
	nodes := []struct {
		name, ip string
		host     *windows.Host
	}{{name: "win-upg-a", ip: "127.0.0.84"}, {name: "win-upg-b", ip: "127.0.0.85"}, {name: "win-upg-c", ip: "127.0.0.86"}}
	for i := range nodes {
		kubelet := honest
		if i == 1 {
			kubelet = kubeletB
		}
		nodes[i].host = b.startWith(nodes[i].name, nodes[i].ip, kubelet)
		code, out, errOut := runWmcon(t, b.args(admin, "configure", "--address", nodes[i].ip, "--payload", b.payloadDir,
			"--csr-timeout", "60s", "--ready-timeout", "60s")...)
		require.Equal(t, 0, code, "%s\n%s", out, errOut)
	}
	machineBackedNode(t, ctx, clients, "upg-ms", "win-upg-m", "127.0.0.87", "wmcon-old")

	newPayload := filepath.Join(dir, "payload-2")
	require.NoError(t, payload.WriteSyntheticBuild(newPayload, nodeconfig.RequiredPayload("None"), "2"))
	p2, err := payload.LoadDir(newPayload, t.TempDir())
	require.NoError(t, err)
	target := configure.StandaloneVersion(p2)

	// The plan: the Machine-backed node is the operator's, the three standalone ones wmcon's, by name.
	code, out, errOut := runWmcon(t, b.args(admin, "upgrade", "plan", "--payload", newPayload, "-o", "json")...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var plan upgrade.UpgradePlan
	require.NoError(t, json.Unmarshal([]byte(out), &plan), out)
	assert.Equal(t, target, plan.Target)
	require.Len(t, plan.Groups, 2, out)
	assert.Equal(t, upgrade.GroupMachineSet, plan.Groups[0].Kind)
	assert.Equal(t, "upg-ms", plan.Groups[0].Name)
	assert.Equal(t, upgrade.UpgradedByOperator, plan.Groups[0].By)
	require.Len(t, plan.Groups[0].Nodes, 1)
	assert.Equal(t, "win-upg-m", plan.Groups[0].Nodes[0].Node)
	assert.Equal(t, upgrade.GroupStandalone, plan.Groups[1].Kind)
	assert.Equal(t, []string{"win-upg-a", "win-upg-b", "win-upg-c"}, planNodes(plan.Groups[1].Nodes))
	assert.Contains(t, plan.Groups[1].Nodes[0].Reason, "version "+payloadVersion(t, b.payloadDir)+" → "+target)
	code, out, _ = runWmcon(t, b.args(admin, "upgrade", "plan", "--payload", newPayload)...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "MachineSet upg-ms: the operator upgrades these")
	assert.Contains(t, out, "1. win-upg-a  version "+payloadVersion(t, b.payloadDir)+" → "+target)

	// Read-only refuses before anything changes.
	code, _, errOut = runWmcon(t, b.args(admin, "--read-only", "upgrade", "run", "--payload", newPayload)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--read-only is set: refusing to upgrade nodes")

	// One standalone node upgraded: new files, the target version, Ready on a new heartbeat, uncordoned.
	a := nodes[0]
	code, out, errOut = runWmcon(t, b.args(admin, "upgrade", "run", "win-upg-a", "--payload", newPayload, "-o", "json", "--ready-timeout", "60s")...)
	require.Equal(t, 0, code, "%s\n%s\nkubelet log:\n%s", out, errOut, kubeletLog(a.host))
	events := jsonEvents(t, out)
	final := finalOf(events, "win-upg-a")
	require.NotNil(t, final, out)
	assert.Equal(t, event.Succeeded, final.Outcome, out)
	for _, step := range []string{"cordon", "drain", configure.StepServicesDown, configure.StepPayload, configure.StepServices, configure.StepLabel, configure.StepNodeReady, "uncordon", configure.StepVersion} {
		assert.True(t, hasStep(events, "win-upg-a", step), "step %s reported", step)
	}
	n, err := kube.CoreV1().Nodes().Get(ctx, "win-upg-a", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, target, n.Annotations[config.VersionAnnotation])
	assert.True(t, nodeReady(n))
	assert.False(t, n.Spec.Unschedulable, "uncordoned")
	kubeletExe, err := a.host.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	assert.Contains(t, string(kubeletExe), "build 2", "the new payload's kubelet is on the host")
	assert.True(t, a.host.ServiceRunning("kubelet"))
	records, err := actions.ReadAudit(filepath.Join(dir, "wmcon-audit.log"))
	require.NoError(t, err)
	require.NotEmpty(t, records)
	assert.Equal(t, "upgrade", records[len(records)-1].Action)
	assert.Equal(t, "win-upg-a", records[len(records)-1].Node)

	// The rest: b's new kubelet does not start, so the run stops there, b left cordoned, c not started.
	brokenB.Store(true)
	timeout := remote.ServiceTimeout
	remote.ServiceTimeout = 10 * time.Second // for the broken kubelet to be found out
	code, out, errOut = runWmcon(t, b.args(admin, "upgrade", "run", "--payload", newPayload, "--ready-timeout", "15s")...)
	remote.ServiceTimeout = timeout
	t.Logf("failed run:\n%s\n%s", out, errOut)
	assert.Equal(t, ExitHalfDone, code, "b is left half-done")
	assert.Contains(t, out, "upgrade of win-upg-b stopped at")
	assert.Contains(t, out+errOut, "node left cordoned")
	assert.Contains(t, out+errOut, "wmcon upgrade run win-upg-b again")
	assert.Contains(t, out, "not upgraded: the upgrade of win-upg-b did not finish")
	nb, err := kube.CoreV1().Nodes().Get(ctx, "win-upg-b", metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, nb.Spec.Unschedulable, "b is left cordoned, as reported")
	assert.NotEqual(t, target, nb.Annotations[config.VersionAnnotation], "b is not at the target")
	nc, err := kube.CoreV1().Nodes().Get(ctx, "win-upg-c", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, payloadVersion(t, b.payloadDir), nc.Annotations[config.VersionAnnotation], "c was not started")
	assert.False(t, nc.Spec.Unschedulable)

	// Fixed, a re-run resumes: b and c upgraded and schedulable.
	brokenB.Store(false)
	code, out, errOut = runWmcon(t, b.args(admin, "upgrade", "run", "--payload", newPayload, "--ready-timeout", "60s")...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	for _, name := range []string{"win-upg-b", "win-upg-c"} {
		n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, target, n.Annotations[config.VersionAnnotation], name)
		assert.False(t, n.Spec.Unschedulable, name)
	}
	code, out, _ = runWmcon(t, b.args(admin, "upgrade", "plan", "--payload", newPayload)...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "at the target: win-upg-a, win-upg-b, win-upg-c")
	assert.NotContains(t, out, "standalone")
}

func planNodes(ns []upgrade.UpgradeNode) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Node)
	}
	return out
}

func finalOf(events []event.Event, target string) *event.Event {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Target == target && events[i].Kind == event.Finished {
			return &events[i]
		}
	}
	return nil
}

func hasStep(events []event.Event, target, step string) bool {
	for _, e := range events {
		if e.Target == target && e.Step == step && e.Kind == event.StepDone {
			return true
		}
	}
	return false
}
