package session

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/nodeops"
	"github.com/wmcon/wmcon/actions/operator"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
)

// answerSink answers each question with answer(q) and calls onEvent for every event.
type answerSink struct {
	mu      sync.Mutex
	events  []event.Event
	asked   []event.Question
	answer  func(event.Question) string
	onEvent func(event.Event)
}

func (s *answerSink) Emit(e event.Event) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
	if s.onEvent != nil {
		s.onEvent(e)
	}
}

func (s *answerSink) Ask(_ context.Context, q event.Question) (string, error) {
	s.mu.Lock()
	s.asked = append(s.asked, q)
	s.mu.Unlock()
	return s.answer(q), nil
}

// The console's U on the demo: it asks, then upgrades the standalone node; asked again, with only the
// operator's node behind, it offers to follow the operator, and following it is the watch of upgrade run
// --watch (it changes nothing; the test stops it).
func TestDemoConsoleUpgradeThenFollowTheOperator(t *testing.T) {
	ctx, s := openDemo(t, 2*time.Minute)

	up := &answerSink{answer: func(event.Question) string { return event.ChoiceUpgrade }}
	require.NoError(t, s.Runner.Run(ctx, request.Upgrade{Confirm: true}, up))
	require.Len(t, up.asked, 1)
	var upgraded bool
	for _, e := range up.events {
		upgraded = upgraded || e.Target == "ip-127-0-0-8.ec2.internal" && e.Outcome == event.Succeeded
	}
	assert.True(t, upgraded, "the standalone node is upgraded")
	// The next plan reads the watcher's snapshot: wait until it has seen the upgraded node's new version
	// (under load the watch event can lag the upgrade's end).
	require.Eventually(t, func() bool {
		snap, err := s.Snapshot(ctx)
		if err != nil {
			return false
		}
		for _, n := range snap.WindowsNodes() {
			if n.Name == "ip-127-0-0-8.ec2.internal" {
				return n.WMCOVersion == snap.Cluster.WMCOVersion
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "the snapshot shows the standalone node at the operator's version")

	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	follow := &answerSink{answer: func(event.Question) string { return event.ChoiceFollow },
		onEvent: func(e event.Event) {
			if e.Step == operator.StepWatch && e.Kind == event.StepStarted {
				stop() // following has begun: enough
			}
		}}
	err := s.Runner.Run(watchCtx, request.Upgrade{Confirm: true}, follow)
	require.Len(t, follow.asked, 1)
	assert.Contains(t, follow.asked[0].Title, "The operator upgrades 1 node itself. Follow it here?")
	var watched bool
	for _, e := range follow.events {
		watched = watched || e.Step == operator.StepWatch
	}
	assert.True(t, watched, "followed the operator (err %v)", err)

	closed := &answerSink{answer: func(event.Question) string { return event.ChoiceCancel }}
	require.NoError(t, s.Runner.Run(ctx, request.Upgrade{Confirm: true}, closed))
	for _, e := range closed.events {
		assert.NotEqual(t, operator.StepWatch, e.Step, "declined: nothing followed")
	}
}

// A plan read from a snapshot that trails the cluster (the watcher has not yet seen the upgrade that just
// ended) still lists the upgraded node; the upgrade reads the node from the API server before taking it out
// of service and leaves it alone.
func TestUpgradeFromAStaleSnapshotLeavesAnUpgradedNodeAlone(t *testing.T) {
	ctx, s := openDemo(t, 2*time.Minute)
	const node = "ip-127-0-0-8.ec2.internal"
	stale, err := s.Snapshot(ctx)
	require.NoError(t, err)
	up := &answerSink{answer: func(event.Question) string { return event.ChoiceUpgrade }}
	require.NoError(t, s.Runner.Run(ctx, request.Upgrade{Confirm: true}, up))

	run := s.Runner
	run.Backends.Snapshot = func(context.Context) (*model.Snapshot, error) { return stale, nil }
	again := &answerSink{answer: func(event.Question) string { return event.ChoiceUpgrade }}
	require.NoError(t, run.Run(ctx, request.Upgrade{Confirm: true}, again))
	require.Len(t, again.asked, 1, "the stale plan still offers the node")
	assert.Contains(t, again.asked[0].Title, "Upgrade 1 node")
	var skipped bool
	for _, e := range again.events {
		if e.Target != node {
			continue
		}
		assert.NotContains(t, []string{nodeops.StepCordon, nodeops.StepDrain}, e.Step, "the upgraded node is not taken out of service again")
		skipped = skipped || e.Kind == event.Finished && e.Outcome == event.Succeeded && strings.Contains(e.Message, "already")
	}
	assert.True(t, skipped, "the node's upgrade ends at once: it is at the target already")
	n, err := s.Clients.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.False(t, n.Spec.Unschedulable, "left schedulable")
}
