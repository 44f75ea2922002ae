package rollout_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/rollout"
)

// notStarted records what Rollout.NotStarted was told.
type notStarted struct {
	mu  sync.Mutex
	got map[string]string
}

func (n *notStarted) record(target, why string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.got == nil {
		n.got = map[string]string{}
	}
	n.got[target] = why
}

func TestRunNeverExceedsMaxUnavailable(t *testing.T) {
	started := make(chan string, 5)
	release := make(chan struct{})
	r := rollout.Rollout{MaxUnavailable: 2}
	done := make(chan rollout.Summary)
	go func() {
		done <- r.Run(context.Background(), []string{"a", "b", "c", "d", "e"}, func(_ context.Context, t string) error {
			started <- t
			<-release
			return nil
		})
	}()
	var order []string
	for range 2 {
		order = append(order, <-started)
	}
	for range 3 {
		select {
		case extra := <-started:
			require.Failf(t, "a third target started while two were in progress", "started %s", extra)
		case <-time.After(50 * time.Millisecond):
		}
		release <- struct{}{} // one ends, so exactly one more may start
		order = append(order, <-started)
	}
	close(release)
	s := <-done
	assert.ElementsMatch(t, []string{"a", "b"}, order[:2], "the first two start side by side")
	assert.Equal(t, []string{"c", "d", "e"}, order[2:], "the rest in the order given, one per freed slot")
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, s.Targets(rollout.Succeeded))
	assert.NoError(t, s.Err())
	assert.Equal(t, "5 succeeded", s.String())
}

func TestRunStopsAfterTheFirstFailure(t *testing.T) {
	var ns notStarted
	var ran []string
	r := rollout.Rollout{NotStarted: ns.record, Failed: func(t string) string { return "the reboot of " + t + " failed" }}
	boom := errors.New("boom")
	s := r.Run(context.Background(), []string{"a", "b", "c", "d"}, func(_ context.Context, t string) error {
		ran = append(ran, t) // one at a time: no lock needed, and -race would say otherwise
		if t == "b" {
			return boom
		}
		return nil
	})
	assert.Equal(t, []string{"a", "b"}, ran, "nothing starts after the failure")
	assert.Equal(t, map[string]string{"c": "the reboot of b failed", "d": "the reboot of b failed"}, ns.got)
	assert.Equal(t, []rollout.Result{
		{Target: "a", State: rollout.Succeeded},
		{Target: "b", State: rollout.Failed, Err: boom},
		{Target: "c", State: rollout.NotStarted, Why: "the reboot of b failed"},
		{Target: "d", State: rollout.NotStarted, Why: "the reboot of b failed"},
	}, s.Results)
	assert.ErrorIs(t, s.Err(), boom)
	assert.Equal(t, "1 succeeded; 1 failed: b; 2 not started (the reboot of b failed): c, d", s.String())
}

func TestRunLetsTargetsInProgressFinishAfterAFailure(t *testing.T) {
	var ns notStarted
	cReported := make(chan struct{})
	r := rollout.Rollout{MaxUnavailable: 2, NotStarted: func(target, why string) {
		ns.record(target, why)
		close(cReported)
	}}
	bStarted := make(chan struct{})
	s := r.Run(context.Background(), []string{"a", "b", "c"}, func(_ context.Context, t string) error {
		switch t {
		case "a": // fails once b runs beside it
			<-bStarted
			return errors.New("a broke")
		case "b": // still running when c is turned away; it finishes all the same
			close(bStarted)
			<-cReported
		}
		return nil
	})
	assert.Equal(t, map[string]string{"c": "a failed"}, ns.got)
	assert.Equal(t, []string{"b"}, s.Targets(rollout.Succeeded))
	assert.Equal(t, []string{"a"}, s.Targets(rollout.Failed))
	assert.EqualError(t, s.Err(), "a broke")
}

func TestRunCanCarryOnAndReportEveryTarget(t *testing.T) {
	var ns notStarted
	r := rollout.Rollout{MaxUnavailable: 3, ContinueOnFailure: true, NotStarted: ns.record}
	s := r.Run(context.Background(), []string{"a", "b", "c", "d"}, func(_ context.Context, t string) error {
		if t == "a" || t == "c" {
			return errors.New(t + " broke")
		}
		return nil
	})
	assert.Empty(t, ns.got, "every target was tried")
	assert.Equal(t, []string{"b", "d"}, s.Targets(rollout.Succeeded))
	assert.Equal(t, []string{"a", "c"}, s.Targets(rollout.Failed))
	assert.EqualError(t, s.Err(), "a broke\nc broke", "errors joined in target order")
	assert.Equal(t, "2 succeeded; 2 failed: a, c", s.String())
}

func TestRunCancelledLeavesAClearSummary(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ns notStarted
	r := rollout.Rollout{NotStarted: ns.record}
	s := r.Run(ctx, []string{"a", "b", "c"}, func(ctx context.Context, t string) error {
		cancel() // the user presses ctrl+c while a is in progress
		<-ctx.Done()
		return ctx.Err()
	})
	assert.Equal(t, map[string]string{"b": "cancelled", "c": "cancelled"}, ns.got)
	assert.Equal(t, []string{"a"}, s.Targets(rollout.Cancelled))
	assert.ErrorIs(t, s.Failures(), context.Canceled, "a was cut short")
	var notStarted *rollout.NotStartedError
	require.ErrorAs(t, s.Err(), &notStarted)
	assert.Equal(t, []string{"b", "c"}, notStarted.Targets)
	assert.Equal(t, "1 cancelled: a; 2 not started (cancelled): b, c", s.String())
}

func TestRunCancelledBeforeTheStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	s := rollout.Rollout{MaxUnavailable: 4}.Run(ctx, []string{"a", "b"}, func(context.Context, string) error {
		called = true
		return nil
	})
	assert.False(t, called)
	assert.Equal(t, []string{"a", "b"}, s.Targets(rollout.NotStarted))
	assert.ErrorIs(t, s.Err(), context.Canceled, "a cancelled run is no success")
	var ns *rollout.NotStartedError
	require.ErrorAs(t, s.Err(), &ns)
	assert.Equal(t, []string{"a", "b"}, ns.Targets)
	assert.Equal(t, "2 not started (cancelled): a, b", s.String())
}

func TestSummaryOfNoTargets(t *testing.T) {
	s := rollout.Rollout{}.Run(context.Background(), nil, func(context.Context, string) error { return nil })
	assert.Empty(t, s.Results)
	assert.Equal(t, "no targets", s.String())
}
