package configure_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// TestConfigureRecordsTheVersionOnlyOnAHeartbeatOfTheRestartedKubelet: a run that restarts the kubelet
// (a new payload build replaces its binary) does not take the Ready its old kubelet left on the Node for
// the new one's: with no heartbeat since, it stops at the ready step, the node left cordoned and without
// the new version (the annotation says the node was fully configured, and an upgrade plan that saw it
// would skip the node). Once the restarted kubelet posts Ready, a re-run records the version and lifts
// the cordon the stopped run left (marked as its own, though the re-run itself has nothing to cordon
// for). Here the Node's Ready heartbeats are posted by the test alone (the simulated kubelets never
// report), so what the run waits for is exactly what is posted.
func TestConfigureRecordsTheVersionOnlyOnAHeartbeatOfTheRestartedKubelet(t *testing.T) {
	e := actiontest.NewEnv(t)
	hs := e.HostsWith(kubelet.Options{Interval: 50 * time.Millisecond, Grace: time.Hour, ReportDelay: time.Hour})
	const node, ip = "win-configure-beat", "127.0.0.76"
	sim, h, req := bareHost(t, e, hs, node, ip)

	// First configuration: Ready heartbeats are posted while it runs.
	stopBeats := postReady(t, e, node, 200*time.Millisecond)
	done := make(chan struct{})
	go func() { defer close(done); standInKubelet(t, e, hs, sim, node, ip) }()
	rec := &actiontest.Recorder{}
	_, err := configure.Configure(e.Ctx, e.Ops, h, req, rec)
	<-done
	require.NoError(t, err, rec.Dump())
	stopBeats()
	n, err := e.Kube.CoreV1().Nodes().Get(e.Ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "11.0.1", n.Annotations[config.VersionAnnotation])
	steps := rec.Steps(node)
	assert.Equal(t, configure.StepVersion, steps[len(steps)-1], "the version is recorded last: %v", steps)

	// A new build restarts the kubelet; nothing posts: the Ready on the Node is the old kubelet's.
	req.Payload, req.Facts.Version, req.ReadyTimeout = testPayloadBuild(t, "build-2"), "11.0.2", 3*time.Second
	rec = &actiontest.Recorder{}
	_, err = configure.Configure(e.Ctx, e.Ops, h, req, rec)
	require.Error(t, err, rec.Dump())
	failed := rec.Of(node, event.StepFailed)
	require.NotEmpty(t, failed, rec.Dump())
	assert.Equal(t, configure.StepNodeReady, failed[0].Step, rec.Dump())
	assert.Contains(t, rec.Dump(), "restarted kubelet")
	n, err = e.Kube.CoreV1().Nodes().Get(e.Ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.ConditionTrue, readyOf(n).Status, "the Node still shows the old kubelet's Ready")
	assert.Equal(t, "11.0.1", n.Annotations[config.VersionAnnotation], "the new version is not recorded")
	assert.True(t, n.Spec.Unschedulable, "left cordoned, as reported")
	assert.Equal(t, "configure", n.Annotations[config.CordonedByAnnotation], "the cordon is marked as the configuration's")
	assert.Contains(t, rec.Final(t, node).Message, "left cordoned")

	// The restarted kubelet posts Ready: a re-run finishes, records the version and uncordons.
	stopBeats = postReady(t, e, node, 200*time.Millisecond)
	defer stopBeats()
	req.ReadyTimeout = 30 * time.Second
	rec = &actiontest.Recorder{}
	_, err = configure.Configure(e.Ctx, e.Ops, h, req, rec)
	require.NoError(t, err, rec.Dump())
	n, err = e.Kube.CoreV1().Nodes().Get(e.Ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "11.0.2", n.Annotations[config.VersionAnnotation])
	assert.False(t, n.Spec.Unschedulable, "the resumed run lifts the cordon the stopped one left")
	assert.NotContains(t, n.Annotations, config.CordonedByAnnotation)

	// A node someone else cordoned stays cordoned: the cordon is not marked as a configuration's.
	e.PatchNode(node, `{"spec":{"unschedulable":true}}`)
	req.Payload = testPayloadBuild(t, "build-3")
	rec = &actiontest.Recorder{}
	_, err = configure.Configure(e.Ctx, e.Ops, h, req, rec)
	require.NoError(t, err, rec.Dump())
	n, err = e.Kube.CoreV1().Nodes().Get(e.Ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, n.Spec.Unschedulable, "the user's cordon is left as it was")
}

// postReady posts a Ready condition with a fresh heartbeat on node every interval (once it exists) until
// the returned func is called.
func postReady(t *testing.T, e *actiontest.Env, node string, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			now := metav1.Now()
			patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{Type: corev1.NodeReady,
				Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}}})
			_, _ = e.Kube.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
			select {
			case <-ctx.Done():
				return
			case <-time.After(every):
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

func readyOf(n *corev1.Node) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c
		}
	}
	return corev1.NodeCondition{}
}
