package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui/dialog"
)

// TestBYOHFormSaysWhoConfiguresTheHost: the new BYOH host form says WMCO configures the host only when WMCO
// is installed; without it, wmcon does (issue 25 item 9).
func TestBYOHFormSaysWhoConfiguresTheHost(t *testing.T) {
	runner := recordingRunner{requests: make(chan request.Request, 1)}
	m := setupModel(runner, byohSnapshot())
	m = update(m, press("G", "n")...)
	require.True(t, isTop[*dialog.FieldForm](m), screen(m))
	assert.Contains(t, screen(m), "WMCO then configures it")

	noOperator := byohSnapshot()
	noOperator.Cluster.WMCOVersion = ""
	m = setupModel(runner, noOperator)
	m = update(m, press("G", "n")...)
	require.True(t, isTop[*dialog.FieldForm](m), screen(m))
	assert.Contains(t, screen(m), "WMCO is not installed: wmcon configures it")
	assert.NotContains(t, screen(m), "WMCO then configures it")
}
