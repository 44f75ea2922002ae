package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
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
		require.True(t, isTop[*questionDialog](m), k)
	}
	assert.Equal(t, paneNodes, m.active)
	m = update(m, press("right", "enter")...)
	assert.False(t, isTop[*questionDialog](m), "an answer closes the dialog")
	assert.Equal(t, "abort", <-reply)
}
