package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/ui/dialog"
)

func TestQuestionDialogIsModal(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	reply := make(chan string, 1)
	m.running = &runningAction{id: 3, msgs: make(chan tea.Msg)}
	m = update(m, actionQuestionMsg{ID: 3, Question: event.Question{Title: "a PodDisruptionBudget blocks the drain",
		Choices: []event.Choice{{Key: "wait", Label: "Wait"}, {Key: "abort", Label: "Abort"}}}, Reply: reply})
	assert.Contains(t, screen(m), "[ Abort ]")
	for _, k := range []string{"q", "ctrl+c", "1", "?"} {
		next, cmd := m.Update(keyPress(k))
		m = next.(Model)
		assert.Nil(t, cmd, "the dialog is modal: %s neither quits nor reaches the list", k)
		require.True(t, isTop[*dialog.Question](m), k)
	}
	assert.Equal(t, paneNodes, m.active)
	m = update(m, press("right", "enter")...)
	assert.False(t, isTop[*dialog.Question](m), "an answer closes the dialog")
	assert.Equal(t, "abort", <-reply)
}

// TestQuestionEscIsTheSafeChoice: esc gives the question's safe choice (abort for a PDB block), not the
// first one (wait), and the hint says so.
func TestQuestionEscIsTheSafeChoice(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	reply := make(chan string, 1)
	m.running = &runningAction{id: 4, msgs: make(chan tea.Msg)}
	m = update(m, actionQuestionMsg{ID: 4, Question: event.Question{Title: "a PodDisruptionBudget blocks the drain", Safe: "abort",
		Choices: []event.Choice{{Key: "wait", Label: "Wait for the budget"}, {Key: "abort", Label: "Abort (the node stays cordoned)"}}}, Reply: reply})
	assert.Contains(t, screen(m), "esc Abort (the node stays cordoned)")
	m = update(m, press("esc")...)
	assert.False(t, isTop[*dialog.Question](m))
	assert.Equal(t, "abort", <-reply)
}

// TestQuestionButtonsNeverBreakALabel: choices too long for one row go one per line, each label whole.
func TestQuestionButtonsNeverBreakALabel(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m.running = &runningAction{id: 5, msgs: make(chan tea.Msg)}
	labels := []string{"Wait for the budget to allow it", "Abort (the node stays cordoned)", "Delete the pods instead (disable eviction)"}
	q := event.Question{Title: "a PodDisruptionBudget blocks the drain"}
	for _, l := range labels {
		q.Choices = append(q.Choices, event.Choice{Key: l, Label: l})
	}
	m = update(m, actionQuestionMsg{ID: 5, Question: q, Reply: make(chan string, 1)})
	for _, l := range labels {
		assert.Contains(t, screen(m), "[ "+l+" ]")
	}
}
