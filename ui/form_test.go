package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui/view"
)

func TestDisableEvictionInTheFormNeedsASecondEnter(t *testing.T) {
	m := actionModel(newScriptedRunner())
	m = update(m, press("d")...)
	require.True(t, isTop[*drainForm](m))
	m = update(m, press("up", "space", "down")...) // tick disable eviction, back to Run
	m, cmd := keyCmd(m, "enter")
	assert.Nil(t, cmd, "the first enter only warns")
	assert.Contains(t, screen(m), "DELETES pods without honouring PodDisruptionBudgets")
	_, cmd = keyCmd(m, "enter")
	require.NotNil(t, cmd)
	res := cmd().(view.FormResult)
	assert.True(t, res.Confirmed)
	drain, ok := res.Request.(request.Drain)
	require.True(t, ok, "d asks for a drain")
	assert.True(t, drain.Options.DisableEviction)
}
