package logview

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/theme"
)

// noColor is the theme of every test: no colours, attributes kept.
var noColor = theme.New(theme.Options{NoColor: true})

var fixedNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func nodes(names ...string) []model.NodeInfo {
	var out []model.NodeInfo
	for _, n := range names {
		out = append(out, model.NodeInfo{Name: n, Windows: true})
	}
	return out
}

// newView is a 120×12 view (10 body rows) of kubelet logs with no stream of its own.
func newView(t *testing.T, names ...string) Model {
	t.Helper()
	m := New(Options{Request: logline.Request{Nodes: nodes(names...)}, Theme: noColor, Now: func() time.Time { return fixedNow },
		SaveDir: t.TempDir(), Capacity: 1000})
	m.SetSize(120, 12)
	return m
}

func logLines(node string, from, to int, level logline.Level) []logline.Line {
	var out []logline.Line
	for i := from; i <= to; i++ {
		out = append(out, logline.Line{Node: node, Service: "kubelet", Source: logline.SourceAPI, Level: level,
			Text: fmt.Sprintf("%s0304 05:06:07.000000 1 k.go:1] line %04d", string(level), i)})
	}
	return out
}

func send(m Model, msgs ...tea.Msg) Model {
	for _, msg := range msgs {
		m, _ = m.Update(msg)
	}
	return m
}

func keys(ks ...string) []tea.Msg {
	special := map[string]tea.Key{"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
		"pgup": {Code: tea.KeyPgUp}, "pgdown": {Code: tea.KeyPgDown}, "backspace": {Code: tea.KeyBackspace}}
	var out []tea.Msg
	for _, k := range ks {
		if s, ok := special[k]; ok {
			out = append(out, tea.KeyPressMsg(s))
			continue
		}
		for _, r := range k {
			out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
	return out
}

func screen(m Model) string { return ansi.Strip(m.View()) }

// body is the screen without its header and status line.
func body(m Model) []string {
	rows := strings.Split(screen(m), "\n")
	return rows[1 : len(rows)-1]
}

func TestFollowStopsWhenScrollingUpAndResumesAtTheEnd(t *testing.T) {
	m := newView(t, "win-a")
	m = send(m, LinesMsg{Lines: logLines("win-a", 1, 100, logline.LevelInfo)})
	require.True(t, m.Following())
	require.Contains(t, body(m)[9], "line 0100")
	require.Contains(t, body(m)[0], "line 0091")
	require.Contains(t, screen(m), "[follow]")

	m = send(m, keys("up")...)
	require.False(t, m.Following())
	require.Contains(t, body(m)[0], "line 0090")
	require.Contains(t, screen(m), "[paused]")
	// New lines do not move a paused view.
	m = send(m, LinesMsg{Lines: logLines("win-a", 101, 105, logline.LevelInfo)})
	require.Contains(t, body(m)[0], "line 0090")
	require.NotContains(t, screen(m), "line 0105")

	m = send(m, keys("pgup", "pgup")...)
	require.Contains(t, body(m)[0], "line 0070")
	m = send(m, keys("g")...)
	require.Contains(t, body(m)[0], "line 0001")
	// Scrolling down to the end resumes following.
	for range 96 {
		m = send(m, keys("down")...)
	}
	require.True(t, m.Following())
	m = send(m, LinesMsg{Lines: logLines("win-a", 106, 106, logline.LevelInfo)})
	require.Contains(t, body(m)[9], "line 0106")

	// f pauses and resumes.
	m = send(m, keys("f")...)
	require.False(t, m.Following())
	m = send(m, LinesMsg{Lines: logLines("win-a", 107, 107, logline.LevelInfo)}, keys("f")[0])
	require.True(t, m.Following())
	require.Contains(t, body(m)[9], "line 0107")
}

func TestSearchHighlightsAndMovesWithNAndShiftN(t *testing.T) {
	m := newView(t, "win-a")
	m = send(m, LinesMsg{Lines: logLines("win-a", 1, 200, logline.LevelInfo)})
	m = send(m, keys("/", "line 01", "enter")...) // matches 0100..0199; following, so the newest first
	require.False(t, m.Following())
	require.Contains(t, cursorRow(t, m), "line 0199")
	m = send(m, keys("N")...)
	require.Contains(t, cursorRow(t, m), "line 0198")
	m = send(m, keys("n", "n")...)
	require.Contains(t, screen(m), "search passed the end: continued from the top", "n past the last match wraps, and says so")
	require.Contains(t, cursorRow(t, m), "line 0100")
	m = send(m, keys("N")...)
	require.Contains(t, screen(m), "search passed the top: continued from the end")
	require.Contains(t, cursorRow(t, m), "line 0199")
	m = send(m, keys("/", "no such text", "enter")...)
	require.Contains(t, screen(m), "no match for no such text")
	m = send(m, keys("/", "line 01", "enter")...)
	require.Contains(t, screen(m), "[/line 01]")
	// The match is highlighted (reverse video) in the raw view.
	require.Contains(t, m.View(), "\x1b[7mline 01\x1b[m")
	m = send(m, keys("esc")...)
	require.NotContains(t, screen(m), "[/line 01]")
}

func cursorRow(t *testing.T, m Model) string {
	t.Helper()
	for _, r := range body(m) {
		if strings.HasPrefix(r, ">") {
			return r
		}
	}
	t.Fatalf("no cursor on screen:\n%s", screen(m))
	return ""
}

func TestFilterFuzzyAndRegex(t *testing.T) {
	m := newView(t, "win-a")
	m = send(m, LinesMsg{Lines: logLines("win-a", 1, 300, logline.LevelInfo)})
	m = send(m, keys("&", "l0299", "enter")...) // fuzzy: l…0299
	require.Contains(t, screen(m), `[fuzzy "l0299"]`)
	require.Equal(t, []string{" I0304 05:06:07.000000 1 k.go:1] line 0299"}, nonEmpty(body(m)))

	m = send(m, keys("&", "backspace", "backspace", "backspace", "backspace", "backspace", "tab", `line 00(1|2)0$`, "enter")...)
	require.Contains(t, screen(m), `[regex "line 00(1|2)0$"]`)
	got := nonEmpty(body(m))
	require.Len(t, got, 2)
	require.Contains(t, got[0], "line 0010")
	require.Contains(t, got[1], "line 0020")
	// New lines are filtered as they arrive.
	m = send(m, LinesMsg{Lines: []logline.Line{{Node: "win-a", Text: "new line 0020"}, {Node: "win-a", Text: "other"}}})
	require.Len(t, nonEmpty(body(m)), 3)
	require.Contains(t, screen(m), "3 of 302 lines")

	// A bad expression is refused with the reason, and the filter stays as it was.
	m = send(m, keys("&", "(", "enter")...)
	require.Contains(t, screen(m), "bad regular expression")
	m = send(m, keys("esc", "esc")...)
	require.NotContains(t, screen(m), "regex")
	require.Len(t, nonEmpty(body(m)), 10)
}

func nonEmpty(rows []string) []string {
	var out []string
	for _, r := range rows {
		if strings.TrimSpace(r) != "" {
			out = append(out, r)
		}
	}
	return out
}

func TestWrapToggle(t *testing.T) {
	m := newView(t, "win-a", "win-b")
	long := logline.Line{Node: "win-b", Level: logline.LevelError, Text: "E0304 05:06:07.000000 1 k.go:1] " + strings.Repeat("x", 250) + " END"}
	m = send(m, LinesMsg{Lines: []logline.Line{long}})
	require.Len(t, nonEmpty(body(m)), 1)
	require.Contains(t, body(m)[0], "[win-b] E0304")
	require.NotContains(t, screen(m), "END")
	m = send(m, keys("w")...)
	require.Contains(t, screen(m), "[wrap]")
	rows := nonEmpty(body(m))
	require.Len(t, rows, 3)
	require.Contains(t, rows[2], "END")
	for _, r := range rows {
		require.LessOrEqual(t, ansi.StringWidth(r), 120)
	}
}

func TestJumpToErrorsAndWarnings(t *testing.T) {
	m := newView(t, "win-a")
	var lines []logline.Line
	lines = append(lines, logLines("win-a", 1, 30, logline.LevelInfo)...)
	lines = append(lines, logLines("win-a", 31, 31, logline.LevelError)...)
	lines = append(lines, logLines("win-a", 32, 60, logline.LevelInfo)...)
	lines = append(lines, logLines("win-a", 61, 61, logline.LevelWarning)...)
	lines = append(lines, logLines("win-a", 62, 90, logline.LevelInfo)...)
	m = send(m, LinesMsg{Lines: lines})
	m = send(m, keys("[")...)
	require.Contains(t, cursorRow(t, m), "W0304 05:06:07.000000 1 k.go:1] line 0061")
	m = send(m, keys("[")...)
	require.Contains(t, cursorRow(t, m), "line 0031")
	m = send(m, keys("[")...)
	require.Contains(t, screen(m), "no error or warning above")
	m = send(m, keys("]")...)
	require.Contains(t, cursorRow(t, m), "line 0061")
	// Error lines are styled (bold red) when colours are on.
	c := New(Options{Request: logline.Request{Nodes: nodes("win-a")}})
	c.SetSize(80, 5)
	c = send(c, LinesMsg{Lines: logLines("win-a", 1, 1, logline.LevelError)})
	require.Contains(t, c.View(), "\x1b[1;91m")
}

func TestSaveNeverOverwritesSilently(t *testing.T) {
	m := newView(t, "win-a", "win-b")
	m = send(m, LinesMsg{Lines: append(logLines("win-a", 1, 2, logline.LevelInfo), logLines("win-b", 3, 3, logline.LevelInfo)...)})
	m = send(m, keys("s")...)
	want := filepath.Join(m.opts.SaveDir, "win-a+1-kubelet-20260304-050607.log")
	require.Contains(t, screen(m), "save to: "+want)
	m = run(t, m, keys("enter")...)
	require.Contains(t, screen(m), "saved 3 lines to "+want)
	b, err := os.ReadFile(want)
	require.NoError(t, err)
	require.Equal(t, "[win-a] I0304 05:06:07.000000 1 k.go:1] line 0001\n[win-a] I0304 05:06:07.000000 1 k.go:1] line 0002\n[win-b] I0304 05:06:07.000000 1 k.go:1] line 0003\n", string(b))

	// Saving again to the same file asks first; "n" leaves it alone, "y" replaces it.
	m = send(m, LinesMsg{Lines: logLines("win-a", 4, 4, logline.LevelInfo)})
	m = run(t, m, keys("s", "enter")...)
	require.Contains(t, screen(m), "exists: overwrite it? (y/n)")
	m = run(t, m, keys("n")...)
	require.Contains(t, screen(m), "not saved")
	b2, _ := os.ReadFile(want)
	require.Equal(t, b, b2)
	m = run(t, m, keys("s", "enter", "y")...)
	require.Contains(t, screen(m), "saved 4 lines")
	b3, _ := os.ReadFile(want)
	require.Contains(t, string(b3), "line 0004")

	// A file that appears between the question and the write is not clobbered either.
	other := filepath.Join(m.opts.SaveDir, "race.log")
	m = send(m, keys("s")...)
	m.inputText = other
	m, cmd := m.Update(keys("enter")[0])
	require.NoError(t, os.WriteFile(other, []byte("keep me"), 0o600))
	m = send(m, cmd())
	require.Contains(t, screen(m), "exists: overwrite it?")
	b4, _ := os.ReadFile(other)
	require.Equal(t, "keep me", string(b4))
}

// run sends msgs and then runs the commands they return (once), as the program would.
func run(t *testing.T, m Model, msgs ...tea.Msg) Model {
	t.Helper()
	for _, msg := range msgs {
		var cmd tea.Cmd
		m, cmd = m.Update(msg)
		if cmd != nil {
			m = send(m, cmd())
		}
	}
	return m
}

func TestCloseAndClear(t *testing.T) {
	m := newView(t, "win-a")
	_, cmd := m.Update(keys("q")[0])
	require.IsType(t, CloseMsg{}, cmd())
	_, cmd = m.Update(keys("esc")[0])
	require.IsType(t, CloseMsg{}, cmd(), "esc with nothing to clear closes")
}

// fakeStarts records the requests streams were started with and feeds lines from a script.
type fakeStarts struct {
	mu   sync.Mutex
	reqs []logline.Request
	feed func(ctx context.Context, req logline.Request, out func([]logline.Line), notices event.Sink) error
}

func (f *fakeStarts) start(ctx context.Context, req logline.Request, out func([]logline.Line), notices event.Sink) error {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if f.feed != nil {
		return f.feed(ctx, req, out, notices)
	}
	<-ctx.Done()
	return ctx.Err()
}

// pump runs the stream's commands until it ends, bounded.
func pump(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for cmd != nil {
		require.True(t, time.Now().Before(deadline), "stream did not end")
		msg := cmd()
		m, cmd = m.Update(msg)
	}
	return m
}

func TestBurstsAreBatchedWithoutLossBelowTheBound(t *testing.T) {
	const total, capacity = 50000, 20000
	f := &fakeStarts{feed: func(ctx context.Context, req logline.Request, out func([]logline.Line), notices event.Sink) error {
		notices.Emit(event.Event{Target: "win-a", Step: "source", Message: "reading kubelet over SSH: asked for"})
		for i := 0; i < total; i += 100 {
			batch := make([]logline.Line, 100)
			for j := range batch {
				batch[j] = logline.Line{Node: "win-a", Source: logline.SourceSSH, Seq: uint64(i + j + 1), Text: fmt.Sprint(i + j + 1)}
			}
			out(batch)
		}
		return nil
	}}
	m := New(Options{Request: logline.Request{Nodes: nodes("win-a"), Follow: true}, Start: f.start, Capacity: capacity, Theme: noColor})
	m.SetSize(60, 12)
	m = pump(t, m, m.Init())
	b := m.Buffer()
	require.Equal(t, capacity, b.Len())
	require.Equal(t, uint64(total), b.At(b.Len()-1).Seq)
	for i := range b.Len() {
		require.Equal(t, uint64(total-capacity+i+1), b.At(i).Seq, "no line lost within the bound")
	}
	require.Contains(t, screen(m), "via SSH")
	require.Contains(t, screen(m), "end of logs")
}

func TestServiceSwitchRestartsTheStream(t *testing.T) {
	f := &fakeStarts{}
	m := New(Options{Request: logline.Request{Nodes: nodes("win-a"), Follow: true}, Start: f.start,
		Services: []string{"kubelet", "kube-proxy", "events"}, Theme: noColor})
	m.SetSize(60, 12)
	first := m.Init()
	m = send(m, LinesMsg{Stream: 1, Lines: logLines("win-a", 1, 3, logline.LevelInfo)})
	m, next := m.Update(keys("tab")[0])
	require.Equal(t, "kube-proxy", m.Service())
	require.Equal(t, 0, m.Buffer().Len(), "the new service starts empty")
	// The old stream's pending command ends, and its late lines are ignored.
	m = send(m, first(), LinesMsg{Stream: 1, Lines: logLines("win-a", 4, 4, logline.LevelInfo)})
	require.Equal(t, 0, m.Buffer().Len())
	m, _ = m.Update(keys("shift+tab")[0])
	m, _ = m.Update(keys("shift+tab")[0])
	require.Equal(t, "events", m.Service())
	m.Stop()
	require.NotNil(t, next)
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.reqs) == 4
	}, 10*time.Second, time.Millisecond)
	f.mu.Lock()
	defer f.mu.Unlock()
	var services []string
	for _, r := range f.reqs {
		services = append(services, r.Service)
	}
	require.ElementsMatch(t, []string{"kubelet", "kube-proxy", "kubelet", "events"}, services)
}

// TestFilterAppliesWhileTyping: each keystroke in the filter prompt filters the lines (before enter), a
// half-typed regular expression keeps the last good filter and says why, and esc puts back the filter the
// prompt opened with.
func TestFilterAppliesWhileTyping(t *testing.T) {
	m := newView(t, "win-a")
	m = send(m, LinesMsg{Lines: logLines("win-a", 1, 300, logline.LevelInfo)})
	m = send(m, keys("&", "l0299")...) // no enter yet
	require.Equal(t, []string{" I0304 05:06:07.000000 1 k.go:1] line 0299"}, nonEmpty(body(m)))
	m = send(m, keys("backspace")...)
	require.Contains(t, screen(m), "of 300 lines")
	require.Greater(t, len(nonEmpty(body(m))), 1, "l029 matches more lines")

	m = send(m, keys("enter", "&", "tab")...) // regex mode, with the text l029 kept
	m = send(m, keys("backspace", "backspace", "backspace", "backspace", "line 00(1")...)
	require.Contains(t, screen(m), "bad regular expression", "half typed")
	m = send(m, keys("|2)0$")...)
	require.Len(t, nonEmpty(body(m)), 2, "line 0010 and line 0020")
	m = send(m, keys("esc")...)
	require.Contains(t, screen(m), `[fuzzy "l029"]`, "esc puts back the filter the prompt opened with")
}
