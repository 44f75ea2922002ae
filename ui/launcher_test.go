package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/view"
)

// withLauncher registers l for one test.
func withLauncher(t *testing.T, l view.Launcher) {
	saved := launchers
	t.Cleanup(func() { launchers = saved })
	launchers = append(launchers, l)
}

func TestARegisteredViewOpensFromTheList(t *testing.T) {
	var opened view.Selection
	available := true
	withLauncher(t, view.Launcher{
		Key:       binding.New("D", "doctor", "D"),
		Available: func(*view.ProgramContext) bool { return available },
		Open: func(_ *view.ProgramContext, at view.Selection) view.Component {
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
	assert.Equal(t, view.Selection{Snap: m.snap, Pane: "Nodes", Key: "ip-127-0-23-188.us-east-2.compute.internal"}, opened)
	assert.Contains(t, screenLines(t, m)[4], "view doctor")

	m = update(m, press("x", "?")...)
	assert.Contains(t, screen(m), "doctor", "the full help lists it")

	available = false
	m = update(newTestModel(fixtureSnapshot()), keyPress("D"))
	assert.True(t, onList(m), "an unavailable view does not open")
	assert.NotContains(t, screenLines(t, m)[39], "doctor")
}
