package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkFilterKeystroke measures one filter keystroke (Update + View) over 5,000 nodes; it must stay
// well under a 16 ms frame. Keystrokes alternate between typing and deleting a character so that every
// iteration really refilters.
func BenchmarkFilterKeystroke(b *testing.B) {
	m := newTestModel(bigSnapshot(5000))
	m = update(m, keyPress("/"))
	m = update(m, typeText("ip-127-0-1")...) // a name prefix: 1,024 rows contain it, then 256
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

// BenchmarkSnapshot5000 measures taking in a new snapshot of a 5,000-node cluster: the panes rebuilt, but
// for a hidden Secrets pane, which is rebuilt when shown.
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

// BenchmarkAgeTick5000 measures one age tick of a console at rest on 5,000 nodes while some age is counted
// in seconds (a tick every second): only the ages on screen are renewed, not every row rebuilt.
func BenchmarkAgeTick5000(b *testing.B) {
	opts := testOptions()
	now := fixedNow
	opts.Now = func() time.Time { return now }
	snap := bigSnapshot(5000)
	snap.Nodes[0].Created = now.Add(-5 * time.Second)
	m := update(New(NewProgramContext(opts), nil), tea.WindowSizeMsg{Width: 160, Height: 50}, snapshotMsg{snap})
	if m.agePace != time.Second {
		b.Fatalf("the tick comes every %s, not every second: the benchmark measures the wrong thing", m.agePace)
	}
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second)
		next, _ := m.Update(ageTickMsg{gen: m.ageGen})
		m = next.(Model)
	}
}

// BenchmarkIdleTick10000 measures what a console at rest on 10,000 young nodes (every age under ten
// minutes, so counted in seconds, as on a fleet just made) does each second: one age tick and the frame
// drawn after it, at 200×50.
func BenchmarkIdleTick10000(b *testing.B) {
	opts := testOptions()
	now := fixedNow
	opts.Now = func() time.Time { return now }
	snap := bigSnapshot(10000)
	for i := range snap.Nodes {
		snap.Nodes[i].Created = now.Add(-2*time.Minute - time.Duration(i)*time.Millisecond)
	}
	m := update(New(NewProgramContext(opts), nil), tea.WindowSizeMsg{Width: 200, Height: 50}, snapshotMsg{snap})
	if m.agePace != time.Second {
		b.Fatalf("the tick comes every %s, not every second: the benchmark measures the wrong thing", m.agePace)
	}
	before := m.View().Content
	b.ReportAllocs()
	tick := 0
	for b.Loop() {
		// A second later each time, kept under 10 minutes (2 to 7) so every tick is of the seconds' kind: past
		// 10 minutes ages change by the minute and each tick rebuilds the lists, another benchmark.
		tick = tick%300 + 1
		now = fixedNow.Add(time.Duration(tick) * time.Second)
		next, _ := m.Update(ageTickMsg{gen: m.ageGen})
		m = next.(Model)
		_ = m.View()
	}
	if m.agePace != time.Second {
		b.Fatalf("the ticks came every %s by the end: the benchmark measured another kind of tick", m.agePace)
	}
	if after := m.View().Content; after == before || !strings.Contains(after, "2m") {
		b.Fatalf("the ages on screen did not change with the ticks: the benchmark measures the wrong thing:\n%s", after)
	}
}
