package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/request"
)

// TestReadOnlyConsoleSaysWhyAKeyDoesNothing: under --read-only the keys that change something are off, and
// each one pressed says why in the status line (as R on a Linux node does), at both sizes; nothing opens or runs.
func TestReadOnlyConsoleSaysWhyAKeyDoesNothing(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 45}} {
		runner := recordingRunner{requests: make(chan request.Request, 1)}
		opts := testOptions()
		opts.Runner, opts.ReadOnly = runner, true
		m := New(NewProgramContext(opts), nil)
		m = update(m, tea.WindowSizeMsg{Width: size[0], Height: size[1]}, snapshotMsg{fixtureSnapshot()})
		for _, keys := range [][]string{{"R"}, {"c"}, {"S"}, {"U"}, {"2", "n"}, {"2", "s"}, {"4", "a"}} {
			m = update(m, press("1")...)
			m.status = ""
			m = update(m, press(keys...)...)
			require.True(t, onList(m), "%v opens nothing read-only", keys)
			assert.Nil(t, m.running, "%v", keys)
			last := keys[len(keys)-1]
			assert.Contains(t, screen(m), last+" (", "%dx%d %v: the status line names the key", size[0], size[1], keys)
			assert.Contains(t, screen(m), "refused read-only; restart wmcon without --read-only", "%dx%d %v: and says why, whole", size[0], size[1], keys)
		}
		assert.Empty(t, runner.requests)
	}
}
