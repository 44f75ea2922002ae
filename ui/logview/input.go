package logview

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/logline"
)

// onInputKey edits the bottom-line prompt: text, backspace, enter to accept, esc to cancel; in the filter
// prompt tab switches between fuzzy and regex matching.
func (m Model) onInputKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	if m.input == inputOverwrite {
		return m.onOverwriteKey(msg)
	}
	switch msg.String() {
	case "esc":
		if m.input == inputFilter { // back to the filter as it was before the prompt opened
			_ = m.filter.set(m.buf, m.filterBefore.text, m.filterBefore.regex) // it was valid then
		}
		m.input = inputNone
		if m.bad {
			m.setStatus("", false)
		}
		return m, nil
	case "enter":
		return m.acceptInput()
	case "backspace":
		if r := []rune(m.inputText); len(r) > 0 {
			m.inputText = string(r[:len(r)-1])
		}
	case "tab":
		if m.input == inputFilter {
			m.filter.regex = !m.filter.regex
		}
	default:
		if msg.Text != "" {
			m.inputText += msg.Text
		}
	}
	if m.input == inputFilter {
		m.filterWhileTyping()
	}
	return m, nil
}

// filterWhileTyping applies the filter prompt's text at each keystroke, as the node list's filter does; a
// regular expression that does not compile yet (half typed) keeps the last good one and says why.
func (m *Model) filterWhileTyping() {
	if err := m.filter.set(m.buf, m.inputText, m.filter.regex); err != nil {
		m.setStatus(err.Error(), true)
		return
	}
	m.setStatus("", false)
	m.hasCursor = false
}

func (m Model) acceptInput() (Model, tea.Cmd) {
	kind, text := m.input, m.inputText
	m.input = inputNone
	switch kind {
	case inputSearch:
		m.search, m.hasCursor = text, false
		if text != "" {
			m.searchFirst()
		}
	case inputFilter:
		if err := m.filter.set(m.buf, text, m.filter.regex); err != nil {
			m.setStatus(err.Error()+": fix it, or esc to keep the filter as it was", true)
			m.input = inputFilter
			return m, nil
		}
		m.setStatus("", false)
		m.hasCursor = false
	case inputSave:
		return m.startSave(text)
	}
	return m, nil
}

// searchFirst jumps to the newest match when following, else to the first one from the top of the screen.
func (m *Model) searchFirst() {
	none := "no match for " + m.search
	if m.follow {
		m.jump(-1, m.matchesSearch, none, true)
		return
	}
	m.hasCursor = false
	m.jump(1, m.matchesSearch, none, true)
}

func (m Model) onOverwriteKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	switch strings.ToLower(msg.String()) {
	case "y":
		m.input = inputNone
		return m, m.saveCmd(m.savePath, true)
	case "n", "esc":
		m.input = inputNone
		m.setStatus("not saved: "+m.savePath+" was left as it was", false)
	}
	return m, nil
}

// savedMsg reports a finished save.
type savedMsg struct {
	path  string
	lines int
	err   error
}

func (m Model) startSave(path string) (Model, tea.Cmd) {
	path = strings.TrimSpace(path)
	if path == "" {
		m.setStatus("not saved: no file name given", true)
		return m, nil
	}
	if _, err := os.Stat(path); err == nil {
		m.input, m.savePath = inputOverwrite, path
		return m, nil
	}
	return m, m.saveCmd(path, false)
}

// saveCmd writes the buffered lines off the UI goroutine. Without overwrite the file must not exist
// (O_EXCL), so a file created meanwhile is never clobbered either.
func (m Model) saveCmd(path string, overwrite bool) tea.Cmd {
	lines := m.buf.Lines()
	prefixed := len(m.opts.Request.Nodes) > 1
	return func() tea.Msg {
		return savedMsg{path: path, lines: len(lines), err: writeLog(path, lines, prefixed, overwrite)}
	}
}

func writeLog(path string, lines []logline.Line, prefixed, overwrite bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		if prefixed {
			fmt.Fprintf(w, "[%s] ", l.Node)
		}
		w.WriteString(l.Text)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (m *Model) onSaved(msg savedMsg) {
	switch {
	case errors.Is(msg.err, fs.ErrExist):
		m.input, m.savePath = inputOverwrite, msg.path
	case msg.err != nil:
		m.setStatus(fmt.Sprintf("not saved: %v: choose another path with s", msg.err), true)
	default:
		m.setStatus(fmt.Sprintf("saved %d lines to %s", msg.lines, msg.path), false)
	}
}

// defaultSavePath is ./<node>-<service>-<time>.log (the first node, "+N" for the others).
func (m Model) defaultSavePath() string {
	nodes := m.nodeNames()
	who := "logs"
	if len(nodes) > 0 {
		who = nodes[0]
		if len(nodes) > 1 {
			who += fmt.Sprintf("+%d", len(nodes)-1)
		}
	}
	name := fmt.Sprintf("%s-%s-%s.log", who, strings.ReplaceAll(m.service, ":", "-"), m.opts.Now().Format("20060102-150405"))
	if m.opts.SaveDir == "." {
		return "./" + name
	}
	return filepath.Join(m.opts.SaveDir, name)
}
