package logview

import (
	"context"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
)

// StartFunc runs a log stream until ctx ends or the logs are read, calling out with batches of lines and
// notices with events; the console binds the actions package's StreamLogs to its clients and resolver. It must not block
// in out or notices (the Stream's callbacks never do).
type StartFunc func(ctx context.Context, req logline.Request, out func([]logline.Line), notices event.Sink) error

// LinesMsg carries what a stream produced since the view last asked: a batch of lines, notices, and
// whether the stream ended (Err says why when it failed). The view re-arms the stream's command on it.
type LinesMsg struct {
	Stream  int // which stream it belongs to; messages of a stopped stream are ignored
	Lines   []logline.Line
	Notices []event.Event
	Ended   bool
	Err     error
}

// Stream is one running log stream. Its producer never blocks: lines pile up in a queue that the view
// drains whole on each LinesMsg, so bursts are batched instead of dropped. The queue is bounded by the
// view's buffer size: lines beyond it would be evicted from the view's ring on arrival anyway.
type Stream struct {
	id     int
	cancel context.CancelFunc
	wake   chan struct{} // one token: "something is queued"
	done   chan struct{} // closed by Stop

	mu       sync.Mutex
	limit    int
	lines    []logline.Line
	notices  []event.Event
	ended    bool
	err      error
	skipped  uint64 // lines trimmed from the queue beyond limit
	stopOnce sync.Once
}

// StartStream runs start for req in the background with stream id id.
func StartStream(id int, start StartFunc, req logline.Request, limit int) *Stream {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Stream{id: id, cancel: cancel, wake: make(chan struct{}, 1), done: make(chan struct{}), limit: max(limit, 1)}
	go func() {
		err := start(ctx, req, s.addLines, event.EmitFunc(s.addNotice))
		s.mu.Lock()
		s.ended, s.err = true, err
		if ctx.Err() != nil {
			s.err = nil
		}
		s.mu.Unlock()
		s.poke()
	}()
	return s
}

// ID is the stream's id, as its LinesMsgs carry it.
func (s *Stream) ID() int { return s.id }

func (s *Stream) addLines(lines []logline.Line) {
	s.mu.Lock()
	s.lines = append(s.lines, lines...)
	if over := len(s.lines) - s.limit; over > 0 {
		s.skipped += uint64(over)
		s.lines = append(s.lines[:0], s.lines[over:]...)
	}
	s.mu.Unlock()
	s.poke()
}

func (s *Stream) addNotice(e event.Event) {
	s.mu.Lock()
	s.notices = append(s.notices, e)
	s.mu.Unlock()
	s.poke()
}

func (s *Stream) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Wait is the command that delivers the next LinesMsg; the view issues it again after each one.
func (s *Stream) Wait() tea.Cmd {
	return func() tea.Msg {
		select {
		case <-s.wake:
		case <-s.done:
			return LinesMsg{Stream: s.id, Ended: true}
		}
		return s.take()
	}
}

func (s *Stream) take() LinesMsg {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := LinesMsg{Stream: s.id, Lines: s.lines, Notices: s.notices, Ended: s.ended, Err: s.err}
	s.lines, s.notices = nil, nil
	return msg
}

// Skipped is how many lines were trimmed from the queue because more than the view's bound arrived
// between two LinesMsgs (they would have been evicted from the view's buffer at once).
func (s *Stream) Skipped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped
}

// Stop cancels the stream; its pending Wait returns an ended message.
func (s *Stream) Stop() {
	s.stopOnce.Do(func() {
		s.cancel()
		close(s.done)
	})
}
