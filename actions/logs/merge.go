package logs

import (
	"sync"
	"time"

	"github.com/wmcon/wmcon/actions/logline"
)

// Merging the lines of several nodes in time order.

// logMerger merges the lines of several nodes in time order. Each node's lines stay in file order; across
// nodes the line with the earliest time goes first, among lines that arrived at least Window ago (or all
// of them once every node has sent its backlog). A single node's lines pass straight through.
type logMerger struct {
	deps   LogDeps
	out    func([]logline.Line)
	emitMu sync.Mutex // serialises out and notices

	mu      sync.Mutex
	lanes   []mergeLane
	seq     uint64
	started time.Time
	startup bool // holding lines until every node has caught up
	signal  chan struct{}
}

type mergeLane struct {
	queue    []queuedLine
	caughtUp bool
}

type queuedLine struct {
	line    logline.Line
	arrived time.Time
}

func newLogMerger(n int, deps LogDeps, out func([]logline.Line)) *logMerger {
	return &logMerger{deps: deps, out: out, lanes: make([]mergeLane, n), started: deps.Now(),
		startup: n > 1, signal: make(chan struct{}, 1)}
}

func (m *logMerger) push(lane int, lines []logline.Line) {
	if len(lines) == 0 {
		return
	}
	if len(m.lanes) == 1 {
		m.emitMu.Lock()
		defer m.emitMu.Unlock()
		m.mu.Lock()
		for i := range lines {
			m.seq++
			lines[i].Seq = m.seq
		}
		m.mu.Unlock()
		m.out(lines)
		return
	}
	now := m.deps.Now()
	m.mu.Lock()
	for _, l := range lines {
		m.lanes[lane].queue = append(m.lanes[lane].queue, queuedLine{line: l, arrived: now})
	}
	m.mu.Unlock()
	m.poke()
}

func (m *logMerger) caughtUp(lane int) {
	m.mu.Lock()
	m.lanes[lane].caughtUp = true
	m.mu.Unlock()
	m.poke()
}

func (m *logMerger) done(lane int) { m.caughtUp(lane) }

func (m *logMerger) poke() {
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

// startFlusher flushes several nodes' lines as they become due; the returned func stops it.
func (m *logMerger) startFlusher() func() {
	if len(m.lanes) == 1 {
		return func() {}
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(max(m.deps.Window/4, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			case <-m.signal:
			}
			m.flush(false)
		}
	}()
	return func() { close(stop); <-stopped }
}

// flush emits the lines that are due (all of them when final).
func (m *logMerger) flush(final bool) {
	m.emitMu.Lock()
	defer m.emitMu.Unlock()
	batch := m.due(final)
	if len(batch) > 0 {
		m.out(batch)
	}
}

func (m *logMerger) due(final bool) []logline.Line {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.deps.Now()
	if m.startup && !final {
		if !m.allCaughtUp() && now.Sub(m.started) < m.deps.StartupWait {
			return nil
		}
		m.startup = false
		final = true // the backlogs merge completely
	}
	var batch []logline.Line
	for {
		best := -1
		for i := range m.lanes {
			q := m.lanes[i].queue
			if len(q) > 0 && (best < 0 || q[0].line.Time.Before(m.lanes[best].queue[0].line.Time)) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		head := m.lanes[best].queue[0]
		if !final && now.Sub(head.arrived) < m.deps.Window {
			break
		}
		m.lanes[best].queue = m.lanes[best].queue[1:]
		m.seq++
		head.line.Seq = m.seq
		batch = append(batch, head.line)
	}
	return batch
}

func (m *logMerger) allCaughtUp() bool {
	for _, l := range m.lanes {
		if !l.caughtUp {
			return false
		}
	}
	return true
}
