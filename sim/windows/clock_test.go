package windows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGetDateReadsTheHostsClock: Get-Date -Format o prints the host's own clock (here 5 minutes ahead, in a
// zone 8 hours west) as a round-trip time; a format the simulator does not know fails as a binding error.
func TestGetDateReadsTheHostsClock(t *testing.T) {
	west := time.FixedZone("PST", -8*3600)
	th := startHost(t, Options{Clock: func() time.Time { return time.Now().Add(5 * time.Minute).In(west) }})
	c := th.dial(t)
	r := run(t, c, "Get-Date -Format o")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}-08:00\r\n$`, r.stdout)
	got, err := time.Parse(time.RFC3339Nano, r.stdout[:len(r.stdout)-2])
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(5*time.Minute), got, 10*time.Second)

	r = run(t, c, "Get-Date -Format 'yyyy'")
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "Get-Date -Format o")
}
