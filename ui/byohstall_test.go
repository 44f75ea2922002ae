package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// With WMCO installed one wrong windows-instances entry stalls every BYOH host: the header says so on every
// view and the BYOH group's header too. Standalone nothing stalls (wmcon configures each host itself), and a
// lost connection's banner comes first.
func TestBYOHStallWarningOnlyWithTheOperator(t *testing.T) {
	runner := recordingRunner{}
	m := setupModel(runner, byohSnapshot())
	out := screen(m)
	assert.Contains(t, out, `BYOH stalled by entry "127.168.50.30" — fix: wmcon byoh remove 127.168.50.30`, "120 columns: the entry and the fix")
	assert.Contains(t, out, "STALLED: WMCO configures none of them while an entry below is wrong")

	noOperator := byohSnapshot()
	noOperator.Cluster.WMCOVersion, noOperator.Cluster.WMCOPhase = "", ""
	out = screen(setupModel(runner, noOperator))
	assert.NotContains(t, out, "BYOH stalled")
	assert.NotContains(t, out, "STALLED")

	lost := byohSnapshot()
	lost.Connection.Connected = false
	lost.Connection.LastError = "connection refused"
	out = screen(setupModel(runner, lost))
	assert.Contains(t, out, "reconnecting")
	assert.NotContains(t, out, "BYOH stalled")
}
