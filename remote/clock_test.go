package remote

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
)

// TestHostTimeIsTheHostsClockInAnyZone: the client reads the host's clock through the simulator over real
// SSH; a host in another time zone gives the same instant.
func TestHostTimeIsTheHostsClockInAnyZone(t *testing.T) {
	ahead := 3 * time.Minute
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	_, c := simClient(t, windows.Options{Clock: func() time.Time { return time.Now().Add(ahead).In(zone) }}, nil)
	got, err := c.HostTime(testCtx(t))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(ahead), got, 10*time.Second)
}
