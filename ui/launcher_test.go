package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/ui/binding"
)

// withLauncher registers l for one test.
func withLauncher(t *testing.T, l launcher) {
	saved := launchers
	t.Cleanup(func() { launchers = saved })
	registerLauncher(l)
}

func TestARegisteredViewOpensFromTheList(t *testing.T) {
	var opened Selection
	available := true
	withLauncher(t, launcher{
		Key:       binding.New("D", "doctor", "D"),
		Available: func(*ProgramContext) bool { return available },
		Open: func(_ *ProgramContext, at Selection) Component {
			opened = at
			return &stubView{name: "doctor"}
		},
	})
	m := newTestModel(fixtureSnapshot())
	assert.Contains(t, screenLines(t, m)[39], "D doctor", "its key is in the help line")
	m = update(m, press("j", "D")...)
	v, ok := m.top().(*stubView)
	require.True(t, ok, "D opened the registered view")
	assert.Equal(t, "doctor", v.name)
	assert.Equal(t, Selection{Snap: m.snap, Pane: "Nodes", Key: "ip-10-0-23-188.us-east-2.compute.internal"}, opened)
	assert.Contains(t, screenLines(t, m)[4], "view doctor")

	m = update(m, press("x", "?")...)
	assert.Contains(t, screen(m), "doctor", "the full help lists it")

	available = false
	m = update(newTestModel(fixtureSnapshot()), keyPress("D"))
	assert.True(t, onList(m), "an unavailable view does not open")
	assert.NotContains(t, screenLines(t, m)[39], "doctor")
}
