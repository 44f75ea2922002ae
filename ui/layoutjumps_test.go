package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/operator"
)

// uncordoned is the fixture with no node cordoned.
func uncordoned() *model.Snapshot {
	s := fixtureSnapshot()
	for i := range s.Nodes {
		s.Nodes[i].Unschedulable = false
	}
	return s
}

// TestColumnsKeepTheirWidthWhenANodeIsCordoned: at 160×45, with and without the metric columns, a node
// cordoned (then rebooting: NotReady,SchedulingDisabled) changes no column's place (the header line stays
// the same): every NAME that was whole stays whole and INTERNAL-IP stays.
func TestColumnsKeepTheirWidthWhenANodeIsCordoned(t *testing.T) {
	for _, withMetrics := range []bool{false, true} {
		m := New(NewProgramContext(testOptions()), nil)
		if withMetrics {
			m = metricsModel(t, 160, 45)
		}
		m = update(m, tea.WindowSizeMsg{Width: 160, Height: 45}, snapshotMsg{uncordoned()})
		before := screenLines(t, m)[4] // the column header
		for _, status := range []model.NodeStatus{model.NodeReady, model.NodeNotReady} {
			s := uncordoned()
			s.Nodes[0].Unschedulable, s.Nodes[0].Status = true, status
			m = update(m, snapshotMsg{s})
			assert.Equal(t, before, screenLines(t, m)[4], "metrics %v, %s,SchedulingDisabled: the columns stay put", withMetrics, status.Word())
			if withMetrics {
				continue // the fixture's long names are cut by the metric columns anyway; the header says they stay so
			}
			for _, n := range s.Nodes {
				assert.Contains(t, screen(m), n.Name, "every NAME whole")
			}
			assert.Contains(t, strings.Join(screenLines(t, m)[5:7], "\n"), s.Nodes[0].InternalIP, "INTERNAL-IP stays")
		}
	}
}

// TestOperatorViewScrollsToTheSSHKey: on a terminal too short for the whole Operator view, its last line
// says how much follows and how to scroll, and pgdn (or ↓) brings the SSH key section into view.
func TestOperatorViewScrollsToTheSSHKey(t *testing.T) {
	runner := operatorRunner{requests: make(chan request.Request, 4)}
	opts := testOptions()
	opts.Runner = runner
	m := New(NewProgramContext(opts), nil)
	m = update(m, tea.WindowSizeMsg{Width: 80, Height: 16}, snapshotMsg{fixtureSnapshot()})
	m, cmd := keyCmd(m, "O")
	m = pump(t, m, cmd, func(m Model) bool { return topOf[*operator.View](m).Loaded() })
	assert.NotContains(t, screen(m), "matches cloud-private-key", "the key section is below the fold")
	assert.Regexp(t, `… \d+ more lines: ↓ or pgdn scrolls`, screen(m))
	m = update(m, press("pgdown")...)
	assert.Contains(t, screen(m), "SSH key  (wmcon key show)")
	for i := 0; i < 20 && !strings.Contains(screen(m), "(matches cloud-private-key)"); i++ {
		m = update(m, press("down")...)
	}
	assert.Contains(t, screen(m), "(matches cloud-private-key)", "↓ reaches the end")
	assert.NotContains(t, screen(m), "more lines: ↓", "nothing more below")
}
