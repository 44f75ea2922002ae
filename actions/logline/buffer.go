package logline

// DefaultBufferLines is how many lines a log view keeps unless configured otherwise.
const DefaultBufferLines = 10000

// Buffer is a ring of the newest log lines: memory stays bounded by its capacity, and below that
// bound no line is ever lost. Lines are addressed by their absolute index (0 = the first line ever
// appended), which stays valid while the line is held, so views can keep positions across evictions.
// It is not safe for concurrent use: the view that owns it appends and reads on one goroutine.
type Buffer struct {
	lines []Line // grows up to capacity, then is reused as a ring
	cap   int
	head  int    // index in lines of the oldest line once full
	total uint64 // lines ever appended
	reset uint64 // total at the last Reset: lines before it were cleared, not dropped
}

// NewBuffer holds up to capacity lines (<= 0: DefaultBufferLines).
func NewBuffer(capacity int) *Buffer {
	if capacity <= 0 {
		capacity = DefaultBufferLines
	}
	return &Buffer{cap: capacity}
}

// Append adds lines, evicting the oldest beyond the capacity.
func (b *Buffer) Append(lines ...Line) {
	if len(lines) > b.cap {
		b.total += uint64(len(lines) - b.cap) // never held: as if appended and evicted at once
		lines = lines[len(lines)-b.cap:]
	}
	for _, l := range lines {
		if len(b.lines) < b.cap {
			b.lines = append(b.lines, l)
		} else {
			b.lines[b.head] = l
			b.head = (b.head + 1) % b.cap
		}
		b.total++
	}
}

// Len is the number of lines held.
func (b *Buffer) Len() int { return len(b.lines) }

// Cap is the most lines held.
func (b *Buffer) Cap() int { return b.cap }

// Total is the number of lines ever appended.
func (b *Buffer) Total() uint64 { return b.total }

// Evicted is the number of lines dropped to stay within the capacity since the last Reset.
func (b *Buffer) Evicted() uint64 { return b.total - b.reset - uint64(len(b.lines)) }

// First is the absolute index of the oldest line held (== Total when empty).
func (b *Buffer) First() uint64 { return b.total - uint64(len(b.lines)) }

// At returns the i-th line held, 0 being the oldest.
func (b *Buffer) At(i int) Line {
	if len(b.lines) < b.cap {
		return b.lines[i]
	}
	return b.lines[(b.head+i)%b.cap]
}

// Get returns the line of absolute index abs, if it is still held.
func (b *Buffer) Get(abs uint64) (Line, bool) {
	if abs < b.First() || abs >= b.total {
		return Line{}, false
	}
	return b.At(int(abs - b.First())), true
}

// Lines returns a copy of the lines held, oldest first.
func (b *Buffer) Lines() []Line {
	out := make([]Line, len(b.lines))
	for i := range out {
		out[i] = b.At(i)
	}
	return out
}

// Reset empties the buffer; absolute indexes keep counting up.
func (b *Buffer) Reset() {
	b.lines, b.head, b.reset = b.lines[:0], 0, b.total
}
