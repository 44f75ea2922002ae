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

// TestBYOHRowSaysWmconConfiguresTheHost: without WMCO (standalone), a BYOH host with no node is one wmcon
// configures itself, and its row in the MachineSets pane names the command that does; with WMCO installed
// the row still says the operator has not configured it yet (issue 25).
func TestBYOHRowSaysWmconConfiguresTheHost(t *testing.T) {
	runner := recordingRunner{requests: make(chan request.Request, 1)}
	noOperator := byohSnapshot()
	noOperator.Cluster.WMCOVersion = ""
	out := screen(setupModel(runner, noOperator))
	assert.Contains(t, out, "node: none — wmcon configures it: wmcon configure --address 127.168.50.22")
	assert.NotContains(t, out, "nothing configures it")
	assert.NotContains(t, out, "WMCO is not installed, so")

	out = screen(setupModel(runner, byohSnapshot()))
	assert.Contains(t, out, "node: none yet — WMCO has not configured it")
	assert.NotContains(t, out, "wmcon configure --address")
}
