package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/sim/windows"
)

// TestSIGTERMDuringConfigureReportsTheInterrupt: a real SIGTERM reaches a wmcon process while configure
// --address waits for the host's services to start (real API server, a simulated host over real SSH whose
// services stay START_PENDING). It is reported as the interrupt, not as the services' timeout, with how the
// host was left; the resume hint is the command that was run (address, user and payload, quoted for a
// shell), and no hint names the Node, which does not exist.
func TestSIGTERMDuringConfigureReportsTheInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("configures a simulated host in a child process")
	}
	t.Setenv(actions.AuditEnv, filepath.Join(t.TempDir(), "audit.log"))
	b := newBareHosts(t)
	const node, ip = "win-sigterm", "127.0.0.84"
	host := b.startOpts(node, ip, windows.Options{ServicePending: time.Hour})
	payloadDir := filepath.Join(b.dir, "my payload;x")
	require.NoError(t, payload.WriteSynthetic(payloadDir, nodeconfig.RequiredPayload("None")))

	c := startChild(t, b.args(srv.AdminKubeconfig(), "configure", "--address", ip, "--user", "Administrator",
		"--payload", payloadDir, "-o", "json")...)
	var events []event.Event
	require.Eventually(t, func() bool {
		for {
			select {
			case l := <-c.lines:
				var e event.Event
				if json.Unmarshal([]byte(l), &e) == nil {
					events = append(events, e)
				}
			default:
				s, ok := host.Service("kubelet")
				return ok && s.State == windows.StateStartPending
			}
		}
	}, 2*time.Minute, 20*time.Millisecond, "configure starts the services, which stay pending")
	c.signal(t, syscall.SIGTERM)
	code := c.exited(t, time.Minute)
	for l := range c.lines {
		var e event.Event
		if json.Unmarshal([]byte(l), &e) == nil {
			events = append(events, e)
		}
	}
	stderr := c.stderr.String()
	assert.Equal(t, ExitHalfDone, code, "the host is partly configured; stderr:\n%s", stderr)
	require.NotEmpty(t, events)

	var all strings.Builder
	for _, e := range events {
		b, _ := json.Marshal(e)
		all.Write(b)
		all.WriteString("\n")
	}
	text := all.String() + stderr
	assert.NotContains(t, text, "did not reach", "an interrupt is not a timeout")
	assert.NotContains(t, text, "within 2m0s")

	var failed, last event.Event
	for _, e := range events {
		if e.Kind == event.StepFailed {
			failed = e
		}
	}
	last = events[len(events)-1]
	assert.Equal(t, "services", failed.Step)
	assert.Equal(t, "services stopped: terminated by SIGTERM", failed.Message, text)
	assert.Equal(t, event.Finished, last.Kind)
	assert.Equal(t, event.Cancelled, last.Outcome)
	assert.Contains(t, last.Message, "interrupted at services")
	assert.Contains(t, last.Message, "no node "+node+" has registered yet", "says how the host was left")
	assert.Contains(t, stderr, "terminated by SIGTERM during step services; the host is partly configured")

	resume := cmdline.Wmcon("configure", "--address", ip, "--user", "Administrator", "--payload", payloadDir)
	assert.Contains(t, last.Hint, "run "+resume+" again", "the command that was run, quoted")
	assert.Contains(t, resume, "'"+payloadDir+"'")
	assert.Contains(t, failed.Hint, "run "+resume+" again", "the interrupted step says how to resume")
	for _, e := range events {
		assert.NotContains(t, e.Hint, "wmcon configure "+node, "no hint names the Node that does not exist: %+v", e)
		assert.NotContains(t, e.Hint, "wmcon logs "+node, "no hint names the Node that does not exist: %+v", e)
	}
	_, err := kubernetes.NewForConfigOrDie(srv.AdminConfig()).CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "there is no Node %s: %v", node, err)
}
