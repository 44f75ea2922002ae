package wizard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup/steps"
)

// TestWizardFollowsWhatWmconSetupFollows: the wizard's configure step follows the hosts the setup's
// definition names (package setup/steps), as wmcon setup does: a host whose node registered but is not
// Ready is for triage, not followed.
func TestWizardFollowsWhatWmconSetupFollows(t *testing.T) {
	st := event.Setup{Platform: "AWS", MachineSets: true, Mode: event.ModeOperator}
	st.Hosts = []event.SetupHost{{Kind: "machine", Name: "openshift-machine-api/win-m-1"},
		{Kind: "byoh", Name: "127.0.0.8", Address: "127.0.0.8", User: "Administrator", Node: "win-b-8"},
		{Kind: "byoh", Name: "127.0.0.9", Address: "127.0.0.9", User: "Administrator"}}
	w := newWizardView(nil)
	w.setup = &st
	w.show(stepIndex(event.SetupConfigure))
	require.NotEmpty(t, w.choices)
	require.Equal(t, "Follow the operator", w.choices[0].label)
	w.choices[0].pick(w)
	assert.Equal(t, request.SetupFollow{Machines: []string{"openshift-machine-api/win-m-1"}, Hosts: []string{"127.0.0.9"}}, w.pending)
	assert.Equal(t, steps.Answers{}.Follow(st), w.pending, "the request wmcon setup runs")
}
