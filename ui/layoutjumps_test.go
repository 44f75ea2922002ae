package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/model"
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
