package session

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/sim/demo"
)

// TestEveryChangeSaysWhereItIsAudited: the end of a change names the audit log its record went to, the
// demo's private one too; and when the demo's log cannot be written, the refusal does not offer
// $WMCON_AUDIT_LOG, which the demo ignores (issue 25, Also).
func TestEveryChangeSaysWhereItIsAudited(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := New(ctx, Options{Backend: newDemo(t, demo.Options{}), SSH: SSHOptions{SSHConfig: ""}})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	log := s.Runner.Backends.Audit.Path

	var mu sync.Mutex
	var finished []event.Event
	sink := event.EmitFunc(func(e event.Event) {
		if e.Kind == event.Finished {
			mu.Lock()
			finished = append(finished, e)
			mu.Unlock()
		}
	})
	node := demo.NodeName("127.0.0.2")
	require.NoError(t, s.Runner.Run(ctx, request.Cordon{Nodes: []string{node}}, sink))
	require.Len(t, finished, 1)
	assert.Equal(t, log, finished[0].Audit, "the change names the demo's audit log")
	records, err := actions.ReadAudit(log)
	require.NoError(t, err)
	assert.NotEmpty(t, records, "and its record is there")

	require.NoError(t, os.Remove(log))
	require.NoError(t, os.Mkdir(log, 0o700)) // a log that cannot be written
	err = s.Runner.Run(ctx, request.Uncordon{Nodes: []string{node}}, sink)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refusing to change anything that cannot be audited (free disk space or raise the file-size limit")
	assert.NotContains(t, err.Error(), actions.AuditEnv, "the demo ignores it, so the hint does not offer it")
}
