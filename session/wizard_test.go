package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/demo"
	"github.com/wmcon/wmcon/testsupport/uidriver"
	"github.com/wmcon/wmcon/ui"
)

// TestDemoWizardRunsTheEngine: the console's guided setup over the demo cluster with the session's real
// Runner. The demo has WMCO, the key and machines, and two of its Machines are not Ready nodes yet, so the
// wizard opens at the configure/follow step; skipped, the workloads step previews the RuntimeClass for the
// nodes' Windows build, creates it when confirmed (the detection then sees it), the Done step selects the
// new node in the Nodes pane and the summary is recorded in the audit log.
func TestDemoWizardRunsTheEngine(t *testing.T) {
	t.Setenv("WMCON_AUDIT_LOG", t.TempDir()+"/audit.log")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := New(ctx, Options{Backend: newDemo(t, demo.Options{}), SSH: SSHOptions{SSHConfig: ""}})
	require.NoError(t, err)
	defer s.Close()
	audit := s.Runner.Backends.Audit.Path // the demo's own log, never $WMCON_AUDIT_LOG

	opts := ui.Options{NoColor: true, Hosts: demoOf(s).BareHosts(), Backend: ui.Backend{Runner: s.Runner,
		Doctor: func(ctx context.Context) (diagnosis.Report, error) { return s.Doctor(ctx, nil) }}}
	d := uidriver.New(t, ui.New(ui.NewProgramContext(opts), s.Watcher.Snapshots()), 160, 45)
	d.WaitFor(30*time.Second, "context demo", "Ready")
	assert.NotContains(t, d.Screen(), "no Windows nodes yet", "the demo has Windows nodes: no offer")

	d.Press("S")
	d.WaitFor(30*time.Second, "5 of 7", "Follow the operator until a Windows node is Ready", "Follow the operator")
	scr := d.Screen()
	assert.Contains(t, scr, "✓ 4 Machines")
	assert.Contains(t, scr, "byoh 127.0.0.5: node ip-127-0-0-5.ec2.internal Ready", "the evidence the detection found")

	d.Press("s")
	d.WaitFor(10*time.Second, "6 of 7", "Create a RuntimeClass for Windows build 10.0.20348")
	d.Press("enter")
	d.WaitFor(30*time.Second, "Plan: RuntimeClass windows-10-0-20348 for Windows build 10.0.20348", "kind: RuntimeClass",
		"node.kubernetes.io/windows-build: 10.0.20348")
	st := detect(ctx, t, s)
	assert.Empty(t, st.RuntimeClass, "the preview created nothing")

	d.Press("enter")
	d.WaitFor(30*time.Second, "Run a smoke test pod on", "created RuntimeClass windows-10-0-20348", "✓ 6 Workloads")
	assert.Equal(t, "windows-10-0-20348", detect(ctx, t, s).RuntimeClass, "the cluster has it")

	d.Press("down", "enter") // no smoke test
	d.WaitFor(10*time.Second, "7 of 7", ": selected in the Nodes pane")
	node := ""
	for _, l := range strings.Split(d.Screen(), "\n") {
		if i := strings.Index(l, "new node "); i >= 0 {
			node = strings.Fields(l[i+len("new node "):])[0]
			node = strings.TrimSuffix(node, ":")
		}
	}
	require.NotEmpty(t, node)

	d.Press("enter")
	d.WaitFor(10*time.Second, "Plan: Setup summary")
	d.Press("enter")
	d.WaitFor(30*time.Second, "last run: SUCCEEDED", "setup summary recorded in the audit log", "Close the wizard")
	log, err := os.ReadFile(audit)
	require.NoError(t, err)
	assert.Contains(t, string(log), request.ActionRuntimeClass, "the RuntimeClass's creation is audited")
	assert.Contains(t, string(log), request.ActionSetupSummary, "so is the summary")
	assert.NotContains(t, string(log), request.ActionSetupDetect, "reads and previews are not")

	d.Press("down", "enter") // close the wizard: the Nodes pane shows the new node selected
	d.WaitFor(10*time.Second, "guided setup closed")
	assert.Contains(t, d.Screen(), "▶ "+node, "the new node is selected")
}

func detect(ctx context.Context, t *testing.T, s *Session) event.Setup {
	t.Helper()
	var got *event.Setup
	err := s.Runner.Run(ctx, request.SetupDetect{}, event.EmitFunc(func(e event.Event) {
		if e.Setup != nil {
			got = e.Setup
		}
	}))
	require.NoError(t, err)
	require.NotNil(t, got)
	return *got
}

// TestFreshDemoWizardStandaloneToARunningPod: on the fresh demo (no Windows anything), the console's guided
// setup with the session's Runner takes the bare host at 127.0.0.7 to a Ready node — standalone, the key the
// demo's hosts accept, the host added after a dry run and configured by the engine — then creates the
// RuntimeClass and runs the smoke-test pod until Running on the simulated kubelet, and ends on Done with the
// node selected.
func TestFreshDemoWizardStandaloneToARunningPod(t *testing.T) {
	_, d, _, audit := openFreshWizard(t)
	d.WaitFor(10*time.Second, "2 of 7", "Standalone: no operator")
	d.Press("down", "enter")
	d.WaitFor(30*time.Second, "3 of 7", "Install a private key from a file")
	d.Press("down", "enter")
	d.WaitFor(10*time.Second, "private key file", demo.DefaultBYOHKeyFile()) // offered: the key the demo's hosts accept
	d.Press("enter")
	d.WaitFor(30*time.Second, "Plan: Install the SSH key")
	d.Press("enter")
	d.WaitFor(60*time.Second, "4 of 7", "A Windows host you have (BYOH)")

	d.Press("enter")
	d.WaitFor(10*time.Second, "New BYOH host", demo.BareHostIP)
	d.Press("enter", "enter", "enter") // the address offered, Administrator, the demo's payload
	d.WaitFor(60*time.Second, "Plan: Add BYOH host "+demo.BareHostIP, "SSH to "+demo.BareHostIP+" as Administrator works")
	d.Press("enter")
	d.WaitFor(60*time.Second, "5 of 7", "Configure "+demo.BareHostIP)
	d.Press("enter")
	d.WaitFor(10*time.Second, "wmcon installs WMCO's payload")
	d.Press("enter")
	d.WaitFor(60*time.Second, "Plan: configure ")
	d.Press("enter")
	d.WaitFor(3*time.Minute, "6 of 7", "Create a RuntimeClass for Windows build")
	d.Press("enter")
	d.WaitFor(30*time.Second, "Plan: RuntimeClass windows-")
	d.Press("enter")
	d.WaitFor(60*time.Second, "Run a smoke test pod on")
	d.Press("enter")
	d.WaitFor(30*time.Second, "Plan: smoke test", "kind: Pod")
	d.Press("enter")
	d.WaitFor(3*time.Minute, "last run: SUCCEEDED", "Continue", "Run a smoke test pod on")
	assert.Contains(t, d.Screen(), "Running", "the panel shows the pod Running")
	d.Press("enter") // on to Done
	d.WaitFor(30*time.Second, "7 of 7", ": selected in the Nodes pane")
	log, err := os.ReadFile(audit)
	require.NoError(t, err)
	for _, action := range []string{request.ActionKeyInstall, request.ActionBYOHAdd, request.ActionConfigure, request.ActionRuntimeClass, request.ActionSmokeTest} {
		assert.Contains(t, string(log), `"`+action+`"`, "audited")
	}
}

// The wizard's operator path on the fresh demo, as a newcomer takes it: WMCO installed through the OLM
// stand-in, a key pair generated, a Windows MachineSet generated from the demo cluster and applied; the
// machine API stand-in boots its Machine, the operator stand-in writes the user data and configures the
// instance over SSH with the key, and the wizard follows the operator until that node is Ready (step 6).
func TestFreshDemoWizardOperatorAndMachineSetToAReadyNode(t *testing.T) {
	s, d, cache, audit := openFreshWizard(t)
	ctx := context.Background()
	d.WaitFor(10*time.Second, "2 of 7", "Install WMCO through OLM")
	d.Press("enter")
	d.WaitFor(30*time.Second, "Plan: Install WMCO through OLM")
	d.Press("enter")
	d.WaitFor(2*time.Minute, "3 of 7", "Generate a new key pair")
	d.Press("enter")
	d.WaitFor(10*time.Second, "Generate a key pair", filepath.Join(cache, ".ssh", "wmcon-windows"))
	d.Press("enter", "enter")
	d.WaitFor(30*time.Second, "Plan: Generate an SSH key and install it")
	d.Press("enter")
	d.WaitFor(60*time.Second, "4 of 7", "A Windows MachineSet")
	d.Press("enter")
	d.WaitFor(10*time.Second, "New Windows MachineSet")
	d.Press("ami-0123456789abcdef0", "enter", "enter", "enter", "enter", "enter", "enter")
	d.WaitFor(60*time.Second, "Plan: MachineSet ", "with 1 Windows Machines")
	d.Press("enter")
	d.WaitFor(60*time.Second, "5 of 7", "Follow the operator")
	d.Press("enter")
	d.WaitFor(10*time.Second, "Plan: Follow WMCO until")
	d.Press("enter")
	d.WaitFor(3*time.Minute, "6 of 7", "Create a RuntimeClass for Windows build")

	nodes, err := s.Clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: config.OSLabel + "=windows"})
	require.NoError(t, err)
	require.Len(t, nodes.Items, 1, "one Windows node: the MachineSet's Machine")
	n := nodes.Items[0]
	assert.Equal(t, demo.OperatorVersion, n.Annotations[config.VersionAnnotation], "configured by the operator")
	assert.NotEmpty(t, n.Annotations[config.MachineAnnotation], "the node of a Machine")
	log, err := os.ReadFile(audit)
	require.NoError(t, err)
	for _, action := range []string{request.ActionOperator, request.ActionKeyInstall, request.ActionMachineSetGenerate} {
		assert.Contains(t, string(log), `"`+action+`"`, "audited")
	}
	assert.NotContains(t, string(log), `"`+request.ActionConfigure+`"`, "the operator configured the host, not wmcon")
	lines, err := cluster.NewOps(s.Clients).OperatorLog(ctx, cluster.OperatorLogOptions{About: []string{internalIP(n)}})
	require.NoError(t, err)
	var text []string
	for _, l := range lines {
		text = append(text, l.Text)
	}
	assert.Contains(t, strings.Join(text, "\n"), "instance has been configured as a worker node",
		"the operator's pod logs what it did to the host, as the follow step shows")
}

func internalIP(n corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// openFreshWizard starts a session on the fresh demo (its key cache and HOME in temporary places; audit is
// the demo's own log) and opens the console's wizard at the operator step, the checks' warnings acknowledged.
func openFreshWizard(t *testing.T) (s *Session, d *uidriver.Driver, cache, audit string) {
	t.Helper()
	cache, err := os.MkdirTemp("", "wz") // short: the key's path shows whole in the form
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(cache) })
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache) // a generated key's default place is under ~/.ssh
	t.Setenv("WMCON_AUDIT_LOG", t.TempDir()+"/audit.log")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	s, err = New(ctx, Options{Backend: newDemo(t, demo.Options{Fresh: true}), SSH: SSHOptions{SSHConfig: ""}})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	audit = s.Runner.Backends.Audit.Path // the demo's own log, never $WMCON_AUDIT_LOG

	opts := ui.Options{NoColor: true, Hosts: demoOf(s).BareHosts(), KeyFile: demo.DefaultBYOHKeyFile(),
		Backend: ui.Backend{Runner: s.Runner, Doctor: func(ctx context.Context) (diagnosis.Report, error) { return s.Doctor(ctx, nil) }}}
	d = uidriver.New(t, ui.New(ui.NewProgramContext(opts), s.Watcher.Snapshots()), 160, 45)
	d.WaitFor(30*time.Second, "no Windows nodes yet: press S for the guided setup")
	d.Press("S")
	for i := 0; i < 60 && !d.Wait(time.Second, "Check again") && !d.Wait(time.Second, "Install WMCO through OLM"); i++ {
	}
	if strings.Contains(d.Screen(), "Acknowledge the warnings") {
		d.Press("enter")
	}
	return s, d, cache, audit
}
