// Package logview is the console's log view: it follows the logs of a service on one or more Windows
// nodes (several nodes merged in time order), with follow, search, filter, wrap, jumps to errors, save
// and service switching. It is a plain component the root model mounts: New, Init, Update, View,
// SetSize, and a CloseMsg the root handles. Lines arrive in batches (LinesMsg) from a Stream re-armed
// on each message, and are kept in a bounded ring (actions.LogBuffer).
package logview

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/ui/theme"
)

// CloseMsg asks the root model to close the log view (it stops its stream first).
type CloseMsg struct{}

// Options configure a log view.
type Options struct {
	// Request is what to show; Request.Nodes names the nodes (their order is the prefix order).
	Request logline.Request
	// Start runs streams; nil shows only the LinesMsgs sent to the view (tests, replay).
	Start    StartFunc
	Capacity int          // lines kept (default actions.DefaultLogBufferLines)
	Services []string     // what tab cycles through (default actions.LogServices())
	SaveDir  string       // where saved logs go by default (default ".")
	Theme    *theme.Theme // the console's; nil: theme.New with no options
	Now      func() time.Time
	Keys     *KeyMap // nil: DefaultKeyMap
}

// inputKind is what the bottom-line prompt is asking for.
type inputKind int

const (
	inputNone inputKind = iota
	inputSearch
	inputFilter
	inputSave
	inputOverwrite
)

// Model is the log view.
type Model struct {
	opts   Options
	keys   KeyMap
	styles styles
	buf    *logline.Buffer
	stream *Stream
	nextID int

	width, height int
	follow        bool   // the view sticks to the newest line
	top           uint64 // absolute index of the first line shown when not following
	cursor        uint64 // absolute index of the current match or jump target
	hasCursor     bool
	wrap          bool

	search string // case-insensitive substring, highlighted
	filter lineFilter

	input     inputKind
	inputText string
	savePath  string // waiting for the overwrite answer
	// filterBefore is the filter when its prompt opened: the filter applies while typing, and esc puts
	// this one back.
	filterBefore struct {
		text  string
		regex bool
	}

	service string
	sources map[string]logline.Source // node → where its lines come from
	status  string                    // last notice or result, one line
	bad     bool                      // status is an error
	ended   bool
}

// New builds a log view; Init starts its stream.
func New(opts Options) Model {
	if opts.Capacity <= 0 {
		opts.Capacity = logline.DefaultBufferLines
	}
	if len(opts.Services) == 0 {
		opts.Services = logline.Services()
	}
	if opts.SaveDir == "" {
		opts.SaveDir = "."
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Theme == nil {
		opts.Theme = theme.New(theme.Options{})
	}
	keys := DefaultKeyMap()
	if opts.Keys != nil {
		keys = *opts.Keys
	}
	service := opts.Request.Service
	if service == "" {
		service = "kubelet"
	}
	return Model{opts: opts, keys: keys, styles: newStyles(opts.Theme), buf: logline.NewBuffer(opts.Capacity),
		follow: true, service: service, sources: map[string]logline.Source{}, width: 80, height: 24}
}

// Init starts the stream (with Options.Start) and returns the command that waits for its first batch.
// Call it on the model you keep: it records the stream, which Stop (on CloseMsg) ends.
func (m *Model) Init() tea.Cmd { return m.restart() }

// KeyMap is the view's bindings, for help.
func (m Model) KeyMap() KeyMap { return m.keys }

// SetSize sets the view's size in cells.
func (m *Model) SetSize(width, height int) { m.width, m.height = max(width, 10), max(height, 3) }

// Buffer is the view's line buffer (read-only use: tests, benchmarks).
func (m Model) Buffer() *logline.Buffer { return m.buf }

// Following says whether the view sticks to the newest line.
func (m Model) Following() bool { return m.follow }

// Service is the service shown.
func (m Model) Service() string { return m.service }

// Stop stops the stream; the root calls it on CloseMsg.
func (m *Model) Stop() {
	if m.stream != nil {
		m.stream.Stop()
		m.stream = nil
	}
}

// restart stops the current stream and starts one for the current service, with an empty buffer.
func (m *Model) restart() tea.Cmd {
	m.Stop()
	m.buf.Reset()
	m.filter.reset(m.buf)
	m.follow, m.hasCursor, m.ended, m.status, m.bad = true, false, false, "", false
	clear(m.sources)
	if m.opts.Start == nil {
		return nil
	}
	req := m.opts.Request
	req.Service = m.service
	m.nextID++
	m.stream = StartStream(m.nextID, m.opts.Start, req, m.opts.Capacity)
	return m.stream.Wait()
}

// Update handles stream batches and keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case LinesMsg:
		return m.onLines(msg)
	case savedMsg:
		m.onSaved(msg)
		return m, nil
	case tea.KeyPressMsg:
		if m.input != inputNone {
			return m.onInputKey(msg)
		}
		return m.onKey(msg)
	}
	return m, nil
}

func (m Model) onLines(msg LinesMsg) (Model, tea.Cmd) {
	if m.opts.Start != nil && (m.stream == nil || msg.Stream != m.stream.ID()) {
		return m, nil // from a stream already stopped
	}
	m.Append(msg.Lines...)
	for _, e := range msg.Notices {
		m.onNotice(e)
	}
	if msg.Ended {
		m.ended = true
		if msg.Err != nil {
			m.setStatus("logs ended: "+msg.Err.Error(), true)
		} else if !m.bad {
			m.setStatus("end of logs", false)
		}
		return m, nil
	}
	if m.stream != nil {
		return m, m.stream.Wait()
	}
	return m, nil
}

// Append adds lines to the view (what a LinesMsg does), keeping the view's position.
func (m *Model) Append(lines ...logline.Line) {
	if len(lines) == 0 {
		return
	}
	m.buf.Append(lines...)
	m.filter.appended(m.buf, lines)
	for _, l := range lines[max(0, len(lines)-16):] {
		m.sources[l.Node] = l.Source
	}
}

func (m *Model) onNotice(e event.Event) {
	switch {
	case e.Kind == event.StepFailed:
		msg := e.Target + ": " + e.Err
		if e.Hint != "" {
			msg += " — " + e.Hint
		}
		m.setStatus(msg, true)
	case e.Step == "source":
		if strings.Contains(e.Message, "over SSH") {
			m.sources[e.Target] = logline.SourceSSH
		} else {
			m.sources[e.Target] = logline.SourceAPI
		}
		m.setStatus(e.Target+": "+e.Message, false)
	default:
		m.setStatus(e.Target+": "+e.Message, false)
	}
}

func (m *Model) setStatus(s string, bad bool) { m.status, m.bad = s, bad }

func (m Model) onKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Close):
		return m, func() tea.Msg { return CloseMsg{} }
	case key.Matches(msg, k.Clear):
		return m.clearOrClose()
	case key.Matches(msg, k.Up):
		m.scroll(-1)
	case key.Matches(msg, k.Down):
		m.scroll(1)
	case key.Matches(msg, k.PageUp):
		m.scroll(-m.bodyHeight())
	case key.Matches(msg, k.PageDown):
		m.scroll(m.bodyHeight())
	case key.Matches(msg, k.Top):
		m.follow, m.top = false, m.buf.First()
	case key.Matches(msg, k.Bottom):
		m.follow = true
	case key.Matches(msg, k.Follow):
		m.toggleFollow()
	case key.Matches(msg, k.Wrap):
		m.wrap = !m.wrap
	case key.Matches(msg, k.Search):
		m.input, m.inputText = inputSearch, ""
	case key.Matches(msg, k.NextMatch):
		m.jump(1, m.matchesSearch, "no match for "+m.search, true)
	case key.Matches(msg, k.PrevMatch):
		m.jump(-1, m.matchesSearch, "no match for "+m.search, true)
	case key.Matches(msg, k.Filter):
		m.input, m.inputText = inputFilter, m.filter.text
		m.filterBefore.text, m.filterBefore.regex = m.filter.text, m.filter.regex
	case key.Matches(msg, k.NextProblem):
		m.jump(1, isProblem, "no error or warning below", false)
	case key.Matches(msg, k.PrevProblem):
		m.jump(-1, isProblem, "no error or warning above", false)
	case key.Matches(msg, k.Save):
		m.input, m.inputText = inputSave, m.defaultSavePath()
	case key.Matches(msg, k.NextService):
		return m.switchService(1)
	case key.Matches(msg, k.PrevService):
		return m.switchService(-1)
	}
	return m, nil
}

// clearOrClose clears the search, then the filter; with neither it closes the view.
func (m Model) clearOrClose() (Model, tea.Cmd) {
	switch {
	case m.search != "":
		m.search, m.hasCursor = "", false
	case m.filter.active():
		m.filter.set(m.buf, "", m.filter.regex)
	default:
		return m, func() tea.Msg { return CloseMsg{} }
	}
	return m, nil
}

func (m *Model) switchService(step int) (Model, tea.Cmd) {
	i := slices.Index(m.opts.Services, m.service)
	n := len(m.opts.Services)
	m.service = m.opts.Services[((i+step)%n+n)%n]
	cmd := m.restart()
	m.setStatus(fmt.Sprintf("showing %s", m.service), false)
	return *m, cmd
}

func (m *Model) toggleFollow() {
	if m.follow {
		m.top = m.firstShown()
		m.follow = false
		return
	}
	m.follow = true
}

func isProblem(l logline.Line) bool {
	return l.Level == logline.LevelError || l.Level == logline.LevelFatal || l.Level == logline.LevelWarning
}

func (m Model) matchesSearch(l logline.Line) bool {
	return m.search != "" && containsFold(l.Text, m.search)
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
