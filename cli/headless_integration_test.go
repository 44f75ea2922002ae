package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/reboot"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// headlessHost is a Windows node of the real test API server backed by a simulated host, which the wmcon
// command line reaches the way an administrator's would: the node's InternalIP, a key file, and an
// ssh_config file (here it only names the simulator's port).
type headlessHost struct {
	node, keyFile, sshConfig string
	host                     *windows.Host
}

func newHeadlessHost(t *testing.T, e *nodeEnv, name, ip string) *headlessHost {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "cli-test")
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "id_ed25519")
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600))

	h, err := windows.Start(windows.Options{Addr: net.JoinHostPort(ip, "0"), AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()},
		Configured: true, RebootDowntime: 500 * time.Millisecond, LogInterval: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	_, port, _ := net.SplitHostPort(h.Addr())
	sshConfig := filepath.Join(dir, "ssh_config")
	require.NoError(t, os.WriteFile(sshConfig, []byte(fmt.Sprintf("Host %s\n  Port %s\n", ip, port)), 0o600))

	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{config.OSLabel: "windows", config.WorkerRoleLabel: ""}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
	_, err = e.kube.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go kubelet.New(e.kube, map[string]kubelet.Host{name: h}, kubelet.Options{Interval: 50 * time.Millisecond, Grace: 300 * time.Millisecond}).Run(ctx)
	return &headlessHost{node: name, keyFile: keyFile, sshConfig: sshConfig, host: h}
}

func (h *headlessHost) args(t *testing.T, args ...string) []string {
	return append([]string{"--kubeconfig", srv.AdminKubeconfig(), "--known-hosts", filepath.Join(t.TempDir(), "known_hosts"),
		"--ssh-config", h.sshConfig, "--ssh-key", h.keyFile, "--ssh-agent=false"}, args...)
}

func jsonEvents(t *testing.T, out string) []event.Event {
	t.Helper()
	var events []event.Event
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e event.Event
		require.NoError(t, json.Unmarshal([]byte(l), &e), "every line is a JSON event: %q", l)
		events = append(events, e)
	}
	return events
}

// TestHeadlessCommandsAgainstTheRealAPIServer runs triage, logs and a graceful reboot from the command line
// against the real API server and a simulated Windows host, as the console's keys would.
func TestHeadlessCommandsAgainstTheRealAPIServer(t *testing.T) {
	t.Setenv(actions.AuditEnv, filepath.Join(t.TempDir(), "audit.log"))
	e := newNodeEnv(t, "cli-headless")
	h := newHeadlessHost(t, e, "cli-headless-win", "127.0.0.61")
	e.pod("app-1", h.node, "app")

	h.host.StopService("kubelet")
	code, out, errOut := runWmcon(t, h.args(t, "triage", h.node, "-o", "json")...)
	require.Equal(t, ExitCheckFailed, code, "a failing check makes triage exit 4: %s", errOut)
	var report diagnosis.Report
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	require.NotEmpty(t, report.Checks)
	assert.Equal(t, "Service kubelet", report.Checks[0].Title, "the stopped kubelet is the likeliest cause")
	assert.Equal(t, diagnosis.CheckFail, report.Checks[0].Status)

	code, _, errOut = runWmcon(t, h.args(t, "restart-service", h.node, "kubelet")...)
	require.Equal(t, 0, code, errOut)
	assert.True(t, h.host.ServiceRunning("kubelet"))

	h.host.AppendLog(`C:\var\log\kubelet\kubelet.log`, `E1122 06:00:00.000000    4242 kubelet.go:1] "headless test marker"`)
	code, out, errOut = runWmcon(t, h.args(t, "logs", h.node, "--via", "ssh", "--tail", "200")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "headless test marker")
	assert.Contains(t, errOut, "SSH", "the source in use is said")

	code, out, errOut = runWmcon(t, h.args(t, "reboot", h.node, "-o", "json", "--down-timeout", "20s", "--up-timeout", "30s", "--ready-timeout", "30s")...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var steps []string
	events := jsonEvents(t, out)
	for _, ev := range events {
		if ev.Kind == event.StepStarted {
			steps = append(steps, ev.Step)
		}
	}
	assert.Equal(t, reboot.RebootSteps, steps)
	assert.Equal(t, event.Succeeded, events[len(events)-1].Outcome)
	assert.Equal(t, 1, h.host.Reboots())
	assert.False(t, e.cordoned(h.node), "uncordoned at the end")
	assert.Empty(t, e.podsOn(h.node), "the node was drained")
	records, err := actions.ReadAudit(os.Getenv(actions.AuditEnv))
	require.NoError(t, err)
	require.Len(t, records, 2, "the restart and the reboot")
	assert.Equal(t, "restart-service", records[0].Action)
	assert.Equal(t, "reboot", records[1].Action)
	assert.Equal(t, h.node, records[1].Node)
	assert.Equal(t, kubeapi.AdminUser, records[1].User, "the cluster identity is audited")
	assert.Len(t, records[1].Steps, len(reboot.RebootSteps), "one record with every step, not one per layer")
}
