package session

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
)

// The demo's console: the Mirrors pane's report shows the node configured before a mirror set was added,
// the console's apply (through the Runner) brings it in step, and the report says so.
func TestDemoMirrorsReportAndApply(t *testing.T) {
	ctx, s := openDemo(t, 2*time.Minute)

	rep, err := s.Mirrors(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, rep.Files)
	var out []string
	var all []string
	for _, n := range rep.Nodes {
		all = append(all, n.Node)
		if n.State != model.MirrorsInStep {
			out = append(out, n.Node)
		}
	}
	assert.Equal(t, []string{"ip-127-0-0-4.ec2.internal"}, out, "%+v", rep.Nodes)
	masked := 0
	for _, f := range rep.Files {
		if strings.Contains(f.Content, "authorization") {
			masked++
			assert.Contains(t, f.Content, `authorization = "Basic ••••••"`, "credentials are masked")
		}
	}
	assert.NotZero(t, masked, "the demo's pull secret has credentials for a mirror")

	sink := &event.TextSink{W: &discard{}}
	require.NoError(t, s.Runner.Run(ctx, request.MirrorsApply{Nodes: all}, sink))
	rep, err = s.Mirrors(ctx)
	require.NoError(t, err)
	for _, n := range rep.Nodes {
		assert.Equal(t, model.MirrorsInStep, n.State, n.Summary)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
