package session

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/sim/demo"
)

// newDemo starts a demo cluster as a session's backend; the session closes it.
func newDemo(t *testing.T, opts demo.Options) *demo.Backend {
	t.Helper()
	b, err := demo.NewBackend(opts)
	require.NoError(t, err)
	return b
}

// demoOf is the demo cluster a session opened by newDemo works on.
func demoOf(s *Session) *demo.Backend { return s.backend.(*demo.Backend) }

// openDemo opens a session on the demo with a throwaway audit log; the session and ctx end with the test.
func openDemo(t *testing.T, timeout time.Duration) (context.Context, *Session) {
	t.Helper()
	t.Setenv("WMCON_AUDIT_LOG", t.TempDir()+"/audit.log")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	s, err := New(ctx, Options{Backend: newDemo(t, demo.Options{}), SSH: SSHOptions{SSHConfig: ""}})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return ctx, s
}

// TestDemoDrainPlans: the demo's SQL node has a pod whose PodDisruptionBudget allows no disruption; its
// plan says so, and the other nodes' plans have no blocking budget.
func TestDemoDrainPlans(t *testing.T) {
	ctx, s := openDemo(t, time.Minute)
	sqlNode, other := demo.NodeName("127.0.0.4"), demo.NodeName("127.0.0.2")
	plans, err := s.DrainPlans(ctx, []string{sqlNode, other}, request.DefaultDrainOptions())
	require.NoError(t, err)
	require.Len(t, plans, 2)
	require.Len(t, plans[0].WouldBlock(), 1)
	assert.Equal(t, "windows-apps/sql-pdb", plans[0].WouldBlock()[0].Name)
	assert.Contains(t, plans[0].Pods, "windows-apps/sql-0")
	assert.NotEmpty(t, plans[1].Pods)
	assert.Empty(t, plans[1].WouldBlock())

	_, err = s.DrainPlans(ctx, []string{"no-such-node"}, request.DefaultDrainOptions())
	require.Error(t, err)
}
