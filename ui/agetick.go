package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/model"
)

// ageTickMsg asks the lists to be rebuilt with the current time, so their ages stay true between watch
// events. It costs no API request. gen drops ticks scheduled for an older snapshot (each snapshot and each
// tick schedules the next one, so only one timer is ever live).
type ageTickMsg struct{ gen uint64 }

// scheduleAgeTick waits until the youngest age on the lists would change its text, then asks for a rebuild.
func (m *Model) scheduleAgeTick() tea.Cmd {
	if m.snap == nil {
		return nil
	}
	m.ageGen++
	gen := m.ageGen
	youngest, ok := m.youngest.of(m.snap)
	if !ok {
		return nil
	}
	m.agePace = ageRefresh(m.ctx.Now().Sub(youngest))
	return m.ctx.Tick(m.agePace, func(time.Time) tea.Msg { return ageTickMsg{gen} })
}

// ageTick renews the ages shown. While some age is counted in seconds a tick comes every second, and
// rebuilding every row of a fleet of 10,000 nodes each second costs a console at rest a few per cent of a
// core: then only the ages of the rows on screen are renewed (the others are when they are rebuilt, or at
// the next tick after they scroll into view). Slower ticks rebuild the lists.
func (m *Model) ageTick() {
	if m.agePace >= time.Minute {
		m.applySnapshot(m.snap)
		return
	}
	p, now := m.pane(), m.ctx.Now()
	end := min(len(p.rows), p.offset+max(m.tableHeight()-1, 0))
	for i := max(p.offset, 0); i < end; i++ {
		if r := &p.rows[i]; r.ageCell > 0 && r.ageCell <= len(r.Cells) {
			r.Cells[r.ageCell-1] = formatAge(now, r.born)
		}
	}
}

// ageRefresh is how often an age of this size changes its text (see humanDuration): by the second while
// seconds are shown, by the minute while minutes are, by the hour after that. Older ages change less often,
// so the youngest object sets the pace.
func ageRefresh(age time.Duration) time.Duration {
	switch {
	case age < 10*time.Minute:
		return time.Second
	case age < 8*time.Hour:
		return time.Minute
	default:
		return time.Hour
	}
}

// youngestOf keeps youngestCreated of one snapshot: snapshots are immutable, and every tick asks again
// (on a fleet of 10,000 nodes, reading every creation time each second was a sixth of a tick's work).
type youngestOf struct {
	snap *model.Snapshot
	at   time.Time
	ok   bool
}

func (y *youngestOf) of(s *model.Snapshot) (time.Time, bool) {
	if y.snap != s {
		y.at, y.ok = youngestCreated(s)
		y.snap = s
	}
	return y.at, y.ok
}

// youngestCreated is the newest creation time on the lists (nodes, MachineSets and their Machines).
func youngestCreated(s *model.Snapshot) (time.Time, bool) {
	var y time.Time
	newer := func(t time.Time) {
		if t.After(y) {
			y = t
		}
	}
	for i := range s.Nodes {
		newer(s.Nodes[i].Created)
	}
	for i := range s.MachineSets {
		newer(s.MachineSets[i].Created)
		for _, mc := range s.MachineSets[i].Machines {
			newer(mc.Created)
		}
	}
	return y, !y.IsZero()
}
