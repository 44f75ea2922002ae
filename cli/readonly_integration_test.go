package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/session"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// readOnlyUser may do everything (system:masters), so whatever is refused is refused by wmcon, not RBAC.
const readOnlyUser = "wmcon-read-only-probe"

// TestReadOnlyMakesZeroWrites runs every headless command and every console action with --read-only against
// a real API server whose audit log records each request, and a simulated Windows host: the API server sees
// no write from wmcon's user, the node's first-use host key is kept in memory only (no annotation, no
// ConfigMap, no local file) and the user is told, and the host's stopped service stays stopped.
func TestReadOnlyMakesZeroWrites(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	auditLog := filepath.Join(dir, "audit.log")
	require.NoError(t, os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"), 0o600))
	server := kubeapi.Start(t, kubeapi.WithAPIServerFlags("--audit-policy-file="+policy, "--audit-log-path="+auditLog))
	t.Setenv(actions.AuditEnv, filepath.Join(dir, "wmcon-audit.log"))

	ctx := context.Background()
	e := &nodeEnv{t: t, ctx: ctx, kube: kubernetes.NewForConfigOrDie(server.AdminConfig()), ns: "default"}
	h := newHeadlessHost(t, e, "win-read-only", "127.0.0.71")
	h.host.StopService("kubelet")
	knownHosts := filepath.Join(dir, "known_hosts")
	kubeconfig := server.Kubeconfig(readOnlyUser, "system:masters")
	args := func(a ...string) []string {
		return append([]string{"--read-only", "--kubeconfig", kubeconfig, "--known-hosts", knownHosts,
			"--ssh-config", h.sshConfig, "--ssh-key", h.keyFile}, a...)
	}

	// Reads work, and the first connection's key is trusted for the session only, which the user is told.
	code, _, errOut := runWmcon(t, args("triage", h.node, "-o", "json")...)
	assert.Equal(t, ExitCheckFailed, code, "the stopped kubelet fails a check: %s", errOut)
	assert.Contains(t, errOut, "for this session only")
	code, out, errOut := runWmcon(t, args("logs", h.node, "--via", "ssh", "--tail", "5")...)
	assert.Equal(t, 0, code, errOut)
	assert.NotEmpty(t, out)
	code, out, errOut = runWmcon(t, args("mirrors", "status", h.node)...)
	assert.Equal(t, 0, code, "no mirror sets and no registries directory: in step: %s", errOut)
	assert.Contains(t, out, "in step")
	code, out, errOut = runWmcon(t, args("proxy", "status", h.node)...)
	assert.Equal(t, 0, code, "no cluster proxy and no variables on the host: %s", errOut)
	assert.Contains(t, out, "in step")
	code, out, errOut = runWmcon(t, args("doctor", "-o", "json")...)
	assert.Contains(t, []int{ExitOK, ExitFailed}, code, "the doctor ran: %s", errOut)
	assert.Contains(t, out, `"checks"`)

	for _, cmd := range [][]string{
		{"cordon", h.node}, {"uncordon", h.node}, {"drain", h.node}, {"reboot", h.node},
		{"restart-service", h.node, "kubelet"}, {"triage", h.node, "--restart", "kubelet"}, {"hostkey", "forget", h.node},
		{"mirrors", "apply", h.node}, {"proxy", "sync", h.node, "--reboot"},
		{"configure", h.node}, {"deconfigure", h.node}, {"upgrade", "run"},
	} {
		code, _, errOut := runWmcon(t, args(cmd...)...)
		assert.NotEqual(t, 0, code, "%v under --read-only", cmd)
		assert.Contains(t, errOut, "--read-only", "%v says why it refused", cmd)
	}

	// A dry run of configure only reads.
	payloadDir := filepath.Join(dir, "payload")
	require.NoError(t, payload.WriteSynthetic(payloadDir, nodeconfig.RequiredPayload("None")))
	code, out, errOut = runWmcon(t, args("configure", h.node, "--dry-run", "--payload", payloadDir)...)
	assert.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "plan for "+h.node)
	code, out, errOut = runWmcon(t, args("upgrade", "plan", "--payload", payloadDir)...)
	assert.Equal(t, 0, code, "the upgrade plan only reads: %s\n%s", out, errOut)
	assert.Contains(t, out, "target version wmcon-payload-")

	// The console's actions, run through the console's runner on a read-only session: even if a key got
	// past the console's own refusal, nothing would be written.
	g := &globalOptions{kube: genericclioptions.NewConfigFlags(true), readOnly: true, stdout: &strings.Builder{}, stderr: &strings.Builder{},
		ssh: session.SSHOptions{Keys: []string{h.keyFile}, SSHConfig: h.sshConfig, KnownHosts: knownHosts}}
	*g.kube.KubeConfig = kubeconfig
	s, err := g.openSession(ctx)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Triage(ctx, h.node)
	require.NoError(t, err)
	nodes := []string{h.node}
	for _, req := range []request.Request{
		request.Reboot{Nodes: nodes, Drain: request.DefaultDrainOptions(), MaxUnavailable: 1},
		request.Drain{Nodes: nodes, Options: request.DefaultDrainOptions()},
		request.Cordon{Nodes: nodes},
		request.RestartService{Nodes: nodes, Service: "kubelet"},
		request.Configure{Node: h.node, PayloadDir: payloadDir, Confirm: true},
		request.Deconfigure{Node: h.node, Drain: request.DefaultDrainOptions()},
		request.Upgrade{PayloadDir: payloadDir, Confirm: true, Drain: request.DefaultDrainOptions()},
	} {
		err := s.Runner.Run(ctx, req, &event.TextSink{W: &strings.Builder{},
			Answers: map[string]string{"drain": event.ChoiceAbort, "reboot": event.ChoiceAbort}})
		assert.ErrorContains(t, err, "--read-only", "console action %s", req.Action())
	}
	// Uncordoning a schedulable node needs no write, so it may succeed; the audit log below proves it wrote nothing.
	if err := s.Runner.Run(ctx, request.Uncordon{Nodes: nodes}, &event.TextSink{W: &strings.Builder{}}); err != nil {
		assert.ErrorContains(t, err, "--read-only")
	}
	s.Close()

	writes := auditedWrites(t, server, auditLog)
	assert.Empty(t, writes, "write requests from wmcon's user reached the API server under --read-only")
	n, err := e.kube.CoreV1().Nodes().Get(ctx, h.node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotContains(t, n.Annotations, config.HostKeyAnnotation, "no pin on the Node")
	assert.False(t, n.Spec.Unschedulable, "not cordoned")
	_, err = e.kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.HostKeysConfigMap, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "no pin in the ConfigMap: %v", err)
	assert.NoFileExists(t, knownHosts, "no pin in the local file")
	assert.False(t, h.host.ServiceRunning("kubelet"), "the host's service was not started")
}

// auditedWrites returns the API server's audit events of non-read requests by readOnlyUser (access reviews,
// which store nothing, aside).
func auditedWrites(t *testing.T, server *kubeapi.Server, path string) []string {
	t.Helper()
	return auditedWritesBy(t, server, path, readOnlyUser)
}

// auditedWritesBy returns the API server's audit events of non-read requests by user (access reviews, which
// store nothing, aside). A sentinel request marks the end, so every earlier event has been written.
func auditedWritesBy(t *testing.T, server *kubeapi.Server, path, user string) []string {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(server.AdminConfig())
	sentinel := "read-only-sentinel-" + strings.ToLower(time.Now().Format("150405.000000000"))
	sentinel = strings.ReplaceAll(sentinel, ".", "-")
	_, _ = kube.CoreV1().ConfigMaps("default").Get(context.Background(), sentinel, metav1.GetOptions{})
	var writes []string
	require.Eventually(t, func() bool {
		writes = nil
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		seen := false
		for sc.Scan() {
			var ev struct {
				Verb       string `json:"verb"`
				RequestURI string `json:"requestURI"`
				User       struct {
					Username string `json:"username"`
				} `json:"user"`
				ObjectRef struct {
					Resource string `json:"resource"`
					Name     string `json:"name"`
				} `json:"objectRef"`
			}
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue
			}
			if ev.ObjectRef.Name == sentinel {
				seen = true
			}
			switch ev.Verb {
			case "get", "list", "watch":
				continue
			}
			if ev.User.Username == user && !strings.HasPrefix(ev.ObjectRef.Resource, "selfsubject") {
				writes = append(writes, ev.Verb+" "+ev.RequestURI)
			}
		}
		return seen
	}, 30*time.Second, 100*time.Millisecond, "the audit log records the sentinel request")
	return writes
}
