package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/setup"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// TestSetupStandaloneEndToEnd runs wmcon setup from the command line against the real kube-apiserver and
// kube-controller-manager (CSR signer, node lifecycle) with a bare simulated Windows Server whose kubelet
// joins with what wmcon wrote: from a cluster with no Windows node, each run stops where a flag or --yes is
// needed (exit 3, naming it), resumes there the next time, and the last run installs the key, logs in with
// it and makes the host a Ready node with a RuntimeClass for its build (exit 0); a run on the finished setup
// changes nothing.
func TestSetupStandaloneEndToEnd(t *testing.T) {
	dir := t.TempDir()
	server := kubeapi.Start(t, kubeapi.WithControllerManager())
	auditPath := filepath.Join(dir, "wmcon-audit.log")
	t.Setenv(actions.AuditEnv, auditPath)
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(server.AdminConfig())
	b := newBareHosts(t)
	b.overlay(kube)
	const node, ip = "win-setup-a", "127.0.0.86"
	host := b.start(node, ip)
	admin := server.Kubeconfig("wmcon-setup", "system:masters")
	setupRun := func(a ...string) (int, string, string) {
		t.Helper()
		return runWmcon(t, b.args(admin, append([]string{"setup", "--standalone"}, a...)...)...)
	}

	// Bad command lines are refused before anything is read.
	code, _, errOut := setupRun("--byoh", ip)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, `--byoh "127.0.0.86": give ADDRESS=USER`)
	code, _, errOut = setupRun("--key", b.keyFile, "--generate-key")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "give --key FILE or --generate-key, not both")

	// No key: the checks pass, standalone needs no operator, and the key is what is missing.
	code, out, errOut := setupRun()
	require.Equal(t, ExitSetupPartly, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "✓ check")
	assert.Contains(t, out, "✓ operator  Install WMCO, or choose standalone mode")
	assert.Contains(t, out, "→ key")
	assert.Contains(t, errOut, "setup stopped at key")
	assert.Contains(t, errOut, "pass --key FILE (a private key without a passphrase) or --generate-key")

	// With the key but without --yes: its plan is shown, nothing is written.
	code, out, errOut = setupRun("--key", b.keyFile)
	require.Equal(t, ExitSetupPartly, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "plan: Install the SSH key "+b.keyFile)
	assert.Contains(t, out, "create secret "+config.OperatorNamespace+"/"+config.PrivateKeySecret)
	assert.Contains(t, errOut, "run it again with --yes to apply it")
	_, err := kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, config.PrivateKeySecret, metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "a preview wrote the key")

	// In one run, without --ssh-key: the key installed, then used to log in to the host, which is added to
	// windows-instances, configured by the engine and Ready; the RuntimeClass; done.
	args := []string{"--kubeconfig", admin, "--known-hosts", b.knownHosts, "--ssh-config", b.sshConfig, "--ssh-agent=false",
		"setup", "--standalone", "--key", b.keyFile, "--byoh", ip + "=Administrator", "--payload", b.payloadDir,
		"--csr-timeout", "60s", "--ready-timeout", "60s", "--yes", "-o", "json"}
	code, out, errOut = runWmcon(t, args...)
	require.Equal(t, 0, code, "%s\n%s\nkubelet log:\n%s", out, errOut, kubeletLog(host))
	events := jsonEvents(t, out)
	last := events[len(events)-1]
	assert.Equal(t, setup.ActionSetup, last.Action)
	assert.Equal(t, event.Succeeded, last.Outcome)
	assert.Contains(t, last.Message, "Windows node "+node+" is Ready; the setup is complete")
	var plans []string
	for _, e := range events {
		if e.Kind == event.PlanShown {
			plans = append(plans, e.Action)
		}
	}
	assert.Equal(t, []string{"key-create", "byoh-add", "configure", "runtimeclass"}, plans, "each change is shown before it is made")
	assert.NotContains(t, out+errOut, "BEGIN OPENSSH PRIVATE KEY", "the key is never printed")
	n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, nodeReady(n))
	assert.Equal(t, payloadVersion(t, b.payloadDir), n.Annotations[config.VersionAnnotation])
	rc, err := kube.NodeV1().RuntimeClasses().Get(ctx, "windows-"+strings.ReplaceAll(n.Labels[config.WindowsBuildLabel], ".", "-"), metav1.GetOptions{})
	require.NoError(t, err, "the RuntimeClass for the node's build")
	assert.Equal(t, n.Labels[config.WindowsBuildLabel], rc.Scheduling.NodeSelector[config.WindowsBuildLabel])
	cm, err := kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{ip: "username=Administrator"}, cm.Data)

	records, err := actions.ReadAudit(auditPath)
	require.NoError(t, err)
	var audited []string
	for _, r := range records {
		audited = append(audited, r.Action)
	}
	assert.Equal(t, []string{"key-create", "byoh-add", "configure", "runtimeclass", "setup-summary"}, audited,
		"every change audited, previews and detections not")
	summary := records[len(records)-1]
	var lines []string
	for _, s := range summary.Steps {
		lines = append(lines, s.Message)
	}
	assert.Contains(t, lines, "BYOH host "+ip+" (user Administrator) in "+config.BYOHConfigMap+": node "+node)
	assert.Contains(t, out, "Administrator@"+ip+" answers; the host calls itself", "the BYOH host was tried over SSH")

	// On a finished setup, without --standalone (the node wmcon configured says so): complete, nothing written.
	code, out, errOut = runWmcon(t, b.args(admin, "setup")...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "the setup is complete")
	records2, err := actions.ReadAudit(auditPath)
	require.NoError(t, err)
	assert.Len(t, records2, len(records)+1, "only the summary is recorded again")
	// Each change of each run is one audited run of its request: an intent, then its outcome.
	outcomes, _ := auditedOnce(t, auditPath, 0)
	assert.Len(t, outcomes, len(records2))
}
