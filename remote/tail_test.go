package remote

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
)

// tailRecorder collects a tail's events and lets the test wait for them.
type tailRecorder struct {
	mu      sync.Mutex
	lines   []string
	notices []TailNotice
	changed chan struct{}
}

func newTailRecorder() *tailRecorder { return &tailRecorder{changed: make(chan struct{}, 1000)} }

func (r *tailRecorder) event(e TailEvent) {
	r.mu.Lock()
	if e.Notice == TailLine {
		r.lines = append(r.lines, e.Line)
	} else {
		r.notices = append(r.notices, e.Notice)
	}
	r.mu.Unlock()
	r.changed <- struct{}{}
}

func (r *tailRecorder) snapshot() ([]string, []TailNotice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...), append([]TailNotice(nil), r.notices...)
}

// waitLines waits until n lines arrived (bounded by ctx).
func (r *tailRecorder) waitLines(t *testing.T, ctx context.Context, n int) []string {
	t.Helper()
	for {
		lines, _ := r.snapshot()
		if len(lines) >= n {
			return lines
		}
		select {
		case <-r.changed:
		case <-ctx.Done():
			t.Fatalf("waited for %d lines, got %v", n, lines)
		}
	}
}

func runTail(t *testing.T, ctx context.Context, c *Client, path string, opts TailOptions, r *tailRecorder) (cancel func() error) {
	ctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Tail(ctx, path, opts, r.event) }()
	return func() error {
		stop()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			return fmt.Errorf("tail did not stop after cancel")
		}
	}
}

func TestTailStartsWithLastLinesAndFollows(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	path := `C:\var\log\kubelet\kubelet.log`
	h.AppendLog(path, "l1", "l2", "l3", "l4")
	r := newTailRecorder()
	stop := runTail(t, ctx, c, path, TailOptions{Last: 2}, r)
	assert.Equal(t, []string{"l3", "l4"}, r.waitLines(t, ctx, 2))
	h.AppendLog(path, "l5", "", "l7")
	assert.Equal(t, []string{"l3", "l4", "l5", "", "l7"}, r.waitLines(t, ctx, 5))
	assert.ErrorIs(t, stop(), context.Canceled)
}

func TestTailSurvivesDroppedConnectionsWithoutDuplicatesOrGaps(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	path := `C:\var\log\kube-proxy\kube-proxy.log`
	h.AppendLog(path, "a1", "a2")
	r := newTailRecorder()
	stop := runTail(t, ctx, c, path, TailOptions{Last: -1, RetryInterval: 10 * time.Millisecond}, r)
	r.waitLines(t, ctx, 2)
	h.DropConnections()
	h.AppendLog(path, "b1", "b2") // written while the tail is disconnected
	require.Equal(t, []string{"a1", "a2", "b1", "b2"}, r.waitLines(t, ctx, 4), "lines written while disconnected arrive")
	h.DropConnections()
	h.AppendLog(path, "c1")
	got := r.waitLines(t, ctx, 5)
	require.NoError(t, ignoreCanceled(stop()))
	assert.Equal(t, []string{"a1", "a2", "b1", "b2", "c1"}, got)
	_, notices := r.snapshot()
	assert.Contains(t, notices, TailReconnecting)
	assert.Contains(t, notices, TailResumed)
	assert.NotContains(t, notices, TailRotated)
}

func TestTailNoticesRotationAndRestartsAtTheTop(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	path := `C:\var\log\containerd\containerd.log`
	h.AppendLog(path, "old1", "old2", "old3")
	r := newTailRecorder()
	stop := runTail(t, ctx, c, path, TailOptions{Last: -1, RetryInterval: 10 * time.Millisecond}, r)
	r.waitLines(t, ctx, 3)
	h.RotateLog(path)
	h.DropConnections()
	h.AppendLog(path, "new1")
	got := r.waitLines(t, ctx, 4)
	require.NoError(t, ignoreCanceled(stop()))
	assert.Equal(t, []string{"old1", "old2", "old3", "new1"}, got)
	_, notices := r.snapshot()
	assert.Contains(t, notices, TailRotated)
}

func TestTailOfAMissingFileFails(t *testing.T) {
	_, c := simClient(t, windows.Options{}, nil)
	err := c.Tail(testCtx(t), `C:\var\log\nope.log`, TailOptions{}, func(TailEvent) {})
	var cmdErr *CommandError
	require.ErrorAs(t, err, &cmdErr)
}

func ignoreCanceled(err error) error {
	if err == context.Canceled {
		return nil
	}
	return err
}
