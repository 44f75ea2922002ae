package session

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
)

// laterSink answers the reboot offer with "later" and keeps the events.
type laterSink struct{ events []event.Event }

func (s *laterSink) Emit(e event.Event) { s.events = append(s.events, e) }
func (s *laterSink) Ask(context.Context, event.Question) (string, error) {
	return event.ChoiceLater, nil
}

// The demo's console: the Proxy view's report shows the node whose CA bundle and NO_PROXY are stale, the
// console's sync (through the Runner) brings it in step and offers the reboot, and the report says so.
func TestDemoProxyReportAndSync(t *testing.T) {
	ctx, s := openDemo(t, 2*time.Minute)

	rep, err := s.Proxy(ctx)
	require.NoError(t, err)
	assert.NotEmpty(t, rep.Cluster.HTTP)
	assert.NotEmpty(t, rep.Cluster.TrustedCA)
	var drift []string
	for _, n := range rep.Nodes {
		require.Empty(t, n.Error, n.Node)
		if n.Drift {
			drift = append(drift, n.Node)
			assert.Equal(t, model.CADiffers, n.CABundle)
		}
	}
	assert.Equal(t, []string{"ip-127-0-0-5.ec2.internal"}, drift, "%+v", rep.Nodes)

	sink := &laterSink{}
	require.NoError(t, s.Runner.Run(ctx, request.ProxySync{Nodes: drift}, sink))
	var hint, synced bool
	for _, e := range sink.events {
		hint = hint || e.Kind == event.StepLog && e.Message == "services see the new settings after a reboot: wmcon reboot "+drift[0]
		synced = synced || e.Outcome == event.Succeeded && e.Target == drift[0]
	}
	assert.True(t, hint, "the reboot is left to the user, with the command: %+v", sink.events)
	assert.True(t, synced, "the node's sync succeeded: %+v", sink.events)
	rep, err = s.Proxy(ctx)
	require.NoError(t, err)
	for _, n := range rep.Nodes {
		assert.False(t, n.Drift, "%+v", n)
	}
}
