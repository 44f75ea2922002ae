package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// TestServerTimeIsTheAPIServersClock reads the real kube-apiserver's clock (its Date header) with the
// admin's credentials; it runs on this machine, so it agrees with ours to within the header's second.
func TestServerTimeIsTheAPIServersClock(t *testing.T) {
	s := kubeapi.Start(t)
	c, err := cluster.NewClients(s.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, rtt, err := cluster.NewOps(c).ServerTime(ctx)
	require.NoError(t, err)
	assert.Greater(t, rtt, time.Duration(0))
	assert.WithinDuration(t, time.Now(), got, time.Second+rtt)
}
