package actions

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPostedSinceComparesWholeSeconds: the API server stores a heartbeat to the second, so one stored in
// t's own second may come from before t and does not count (CI once saw a reboot of 0.7 s end on the old
// kubelet's heartbeat that way); one from a later second does, even if posted a moment after t.
func TestPostedSinceComparesWholeSeconds(t *testing.T) {
	at := time.Date(2026, 11, 24, 1, 0, 0, 600_000_000, time.UTC)
	before := at.Add(-300 * time.Millisecond).Truncate(time.Second) // a post at t-0.3s, as the server keeps it
	after := at.Add(300 * time.Millisecond).Truncate(time.Second)   // a post at t+0.3s: the same stored value
	assert.False(t, postedSince(before, at))
	assert.False(t, postedSince(after, at), "indistinguishable from the post before t")
	assert.True(t, postedSince(at.Add(500*time.Millisecond).Truncate(time.Second), at), "t+0.5s is in the next second")
	assert.True(t, postedSince(at.Add(2*time.Second), at))
	assert.False(t, postedSince(at.Add(-time.Second).Truncate(time.Second), at))
}
