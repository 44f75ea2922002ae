package nodeops

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPostedSinceComparesWholeSeconds: the API server stores a heartbeat to the second, so one posted
// 0.3 s after t, in the same second, reads as t's second and counts; one from the second before does not.
func TestPostedSinceComparesWholeSeconds(t *testing.T) {
	at := time.Date(2026, 11, 24, 1, 0, 0, 600_000_000, time.UTC)
	stored := at.Add(300 * time.Millisecond).Truncate(time.Second) // what the server keeps of a post at t+0.3s
	assert.True(t, PostedSince(stored, at))
	assert.True(t, PostedSince(at.Add(2*time.Second), at))
	assert.False(t, PostedSince(at.Add(-time.Second).Truncate(time.Second), at))
}
