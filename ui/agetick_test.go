package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/model"
)

// rowOf is the screen line that shows text.
func rowOf(t *testing.T, m Model, text string) string {
	t.Helper()
	for _, l := range strings.Split(screen(m), "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	t.Fatalf("no line shows %s:\n%s", text, screen(m))
	return ""
}

// TestAgesStayTrueBetweenSnapshots: with no watch event, the age tick alone moves a node's age on, and a
// tick left from an older snapshot does nothing.
func TestAgesStayTrueBetweenSnapshots(t *testing.T) {
	now := fixedNow
	opts := testOptions()
	opts.Now = func() time.Time { return now }
	snap := fixtureSnapshot()
	snap.Nodes[0].Created = now.Add(-5 * time.Second)
	name := snap.Nodes[0].Name[:24] // names are cut at this width

	m := update(New(NewProgramContext(opts), nil), tea.WindowSizeMsg{Width: 120, Height: 40}, snapshotMsg{snap})
	assert.Regexp(t, `\s5s\s*$`, rowOf(t, m, name))

	now = now.Add(30 * time.Second)
	assert.Regexp(t, `\s5s\s*$`, rowOf(t, m, name), "rows are not rebuilt on every frame")
	m = update(m, ageTickMsg{gen: m.ageGen})
	assert.Regexp(t, `\s35s\s*$`, rowOf(t, m, name), "the tick moved the age on")

	now = now.Add(time.Minute)
	m = update(m, ageTickMsg{gen: m.ageGen - 1})
	assert.Regexp(t, `\s35s\s*$`, rowOf(t, m, name), "a stale tick is dropped")
}

func TestAgeRefreshFollowsTheYoungestAge(t *testing.T) {
	assert.Equal(t, time.Second, ageRefresh(5*time.Second), "seconds shown")
	assert.Equal(t, time.Second, ageRefresh(9*time.Minute), "7m30s style")
	assert.Equal(t, time.Minute, ageRefresh(2*time.Hour))
	assert.Equal(t, time.Hour, ageRefresh(3*day))

	y, ok := youngestCreated(&model.Snapshot{MachineSets: []model.MachineSetInfo{{Created: ago(day),
		Machines: []model.MachineInfo{{Created: ago(time.Minute)}}}}, Nodes: []model.NodeInfo{{Created: ago(time.Hour)}}})
	require.True(t, ok)
	assert.Equal(t, ago(time.Minute), y, "a Machine can be the youngest")

	m := newTestModel(&model.Snapshot{})
	assert.Nil(t, m.scheduleAgeTick(), "nothing with an age: no timer")
}
