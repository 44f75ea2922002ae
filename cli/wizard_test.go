package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/session"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
	"github.com/wmcon/wmcon/testsupport/uidriver"
	"github.com/wmcon/wmcon/ui"
)

// TestConsoleWizardStandaloneEndToEnd drives the console's guided setup, wired to its session as wmcon
// wires it, against the real kube-apiserver and kube-controller-manager with a bare simulated Windows
// Server: the console offers the setup on a cluster with no Windows node; standalone mode, the key from a
// file, the host added (tried over SSH first) and configured by the engine, each after its plan; the host
// joins and turns Ready; the RuntimeClass; Done selects the new node. Every change is audited, previews not.
func TestConsoleWizardStandaloneEndToEnd(t *testing.T) {
	dir := t.TempDir()
	server := kubeapi.Start(t, kubeapi.WithControllerManager())
	auditPath := filepath.Join(dir, "wmcon-audit.log")
	t.Setenv(actions.AuditEnv, auditPath)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(server.AdminConfig())
	b := newBareHosts(t)
	b.overlay(kube)
	const node, ip = "win-wizard-a", "127.0.0.88"
	host := b.start(node, ip)
	admin := server.Kubeconfig("wmcon-wizard", "system:masters")

	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &admin
	g := &globalOptions{kube: flags, noColor: true, stdout: io.Discard, stderr: io.Discard,
		ssh: session.SSHOptions{Keys: []string{b.keyFile}, SSHConfig: b.sshConfig, KnownHosts: b.knownHosts}}
	s, err := g.openSession(ctx)
	require.NoError(t, err)
	defer s.Close()
	opts := consoleOptions(g, s)
	d := uidriver.New(t, ui.New(ui.NewProgramContext(opts), s.Watcher.Snapshots()), 160, 45)
	d.WaitFor(30*time.Second, "no Windows nodes yet: press S for the guided setup")

	d.Press("S")
	for i := 0; i < 60 && !d.Wait(time.Second, "Check again") && !d.Wait(time.Second, "Install WMCO through OLM"); i++ {
	}
	if strings.Contains(d.Screen(), "Acknowledge the warnings") { // a fresh cluster: the doctor's warnings first
		d.Press("enter")
	}
	d.WaitFor(10*time.Second, "2 of 7", "Install WMCO through OLM")
	d.Press("down", "enter") // standalone
	d.WaitFor(60*time.Second, "3 of 7", "standalone (no operator)", "Install a private key from a file")

	d.Press("down", "enter")
	d.WaitFor(10*time.Second, "private key file")
	d.Press(b.keyFile, "enter")
	d.WaitFor(30*time.Second, "Plan: Install the SSH key "+b.keyFile, "create secret "+config.OperatorNamespace+"/"+config.PrivateKeySecret)
	_, err = kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, config.PrivateKeySecret, metav1.GetOptions{})
	require.Error(t, err, "the preview wrote nothing")
	d.Press("enter")
	d.WaitFor(60*time.Second, "4 of 7", "A Windows host you have (BYOH)")
	assert.NotContains(t, d.Screen(), "BEGIN OPENSSH PRIVATE KEY")

	d.Press("enter")
	d.WaitFor(10*time.Second, "New BYOH host")
	d.Press(ip, "enter", "enter", b.payloadDir, "enter") // address, the user (Administrator), the payload
	d.WaitFor(60*time.Second, "Plan: Add BYOH host "+ip, "SSH to "+ip+" as Administrator works")
	d.Press("enter")
	d.WaitFor(60*time.Second, "5 of 7", "Configure "+ip+" (user Administrator)")

	d.Press("enter")
	d.WaitFor(10*time.Second, "wmcon installs WMCO's payload", b.payloadDir)
	d.Press("enter") // the payload given with the host
	d.WaitFor(60*time.Second, "Plan: configure "+node, "plan for "+node+" ("+ip+")")
	d.Press("enter")
	if !d.Wait(3*time.Minute, "6 of 7", "Create a RuntimeClass for Windows build") {
		t.Fatalf("the host never became a Ready node:\n%s\nkubelet log:\n%s", d.Screen(), kubeletLog(host))
	}
	n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, nodeReady(n))
	build := n.Labels[config.WindowsBuildLabel]

	d.Press("enter")
	d.WaitFor(30*time.Second, "Plan: RuntimeClass windows-"+strings.ReplaceAll(build, ".", "-"), "kind: RuntimeClass")
	d.Press("enter")
	d.WaitFor(60*time.Second, "Go on without a smoke test")
	d.Press("down", "enter")
	d.WaitFor(30*time.Second, "7 of 7", "new node "+node+": selected in the Nodes pane")
	d.Press("enter") // finish: the summary is recorded and the wizard closes, with no second question
	d.WaitFor(60*time.Second, "guided setup closed: every step is done", "▶ "+node)

	records, err := actions.ReadAudit(auditPath)
	require.NoError(t, err)
	var audited []string
	for _, r := range records {
		audited = append(audited, r.Action)
	}
	assert.Equal(t, []string{"key-create", "byoh-add", "configure", "runtimeclass", "setup-summary"}, audited,
		"every change audited, previews and detections not")
}
