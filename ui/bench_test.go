package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkFilterKeystroke measures one filter keystroke (Update + View) over 5,000 nodes; it must stay
// well under a 16 ms frame. Keystrokes alternate between typing and deleting a character so that every
// iteration really refilters.
func BenchmarkFilterKeystroke(b *testing.B) {
	m := newTestModel(bigSnapshot(5000))
	m = update(m, keyPress("/"))
	m = update(m, typeText("ip-10-0")...)
	keys := []tea.Msg{tea.KeyPressMsg{Code: '1', Text: "1"}, keyPress("backspace")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		next, _ := m.Update(keys[i%2])
		m = next.(Model)
		_ = m.View()
	}
	if len(m.pane().rows) == 0 {
		b.Fatal("the filter matched nothing: the benchmark measures the wrong thing")
	}
}

// BenchmarkRenderNodes5000 measures drawing the nodes pane of a 5,000-node cluster.
func BenchmarkRenderNodes5000(b *testing.B) {
	m := newTestModel(bigSnapshot(5000))
	m = update(m, press("pgdown", "pgdown")...)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkSnapshot5000 measures taking in a new snapshot of a 5,000-node cluster (all panes rebuilt).
func BenchmarkSnapshot5000(b *testing.B) {
	m := newTestModel(bigSnapshot(5000))
	snap := bigSnapshot(5000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		next, _ := m.Update(snapshotMsg{snap})
		m = next.(Model)
	}
}
