package windows

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// Errors of the simulated file system; they map onto the messages PowerShell and SFTP report.
var (
	errNotFound     = fs.ErrNotExist
	errExists       = fs.ErrExist
	errIsDir        = errors.New("the path is a directory")
	errNotDir       = errors.New("the path is not a directory")
	errNotEmpty     = errors.New("the directory is not empty")
	errBadPathChars = errors.New("the given path's format is not supported")
	errNoDrive      = errors.New("only drive C: exists")
	errInUse        = errors.New("a process holds the path open")
)

// fsNode is one file or directory. data is replaced, never mutated in place, so readers may keep a
// slice of it without holding the lock.
type fsNode struct {
	path    string // display form, e.g. C:\k\kubelet.exe
	dir     bool
	data    []byte
	modTime time.Time
	gen     int // bumped when the file is replaced or truncated, so followers start again
	// shared says that a copy of this node (and so of data's slice header) was handed out: its bytes must
	// not change in place any more, so the next write copies them first.
	shared bool
}

// memFS is the host's C: drive: case-insensitive like NTFS, safe for concurrent use, and able to tell
// followers (Get-Content -Wait) that something changed without them polling.
type memFS struct {
	mu      sync.Mutex
	nodes   map[string]*fsNode // key: lower-case display path
	changed chan struct{}      // closed and replaced on every mutation
	now     func() time.Time
	nextGen int
	held    map[string]int // lower-case path → open handles another process holds (HoldOpen)
	// images are the executables of running processes. Windows maps a running program's file: it cannot
	// be deleted, written or replaced until the process exits, though it may be renamed away. Keyed by
	// node, so a renamed image stays locked under its new name.
	images map[*fsNode]int
}

func newMemFS(now func() time.Time) *memFS {
	m := &memFS{nodes: map[string]*fsNode{}, changed: make(chan struct{}), now: now, held: map[string]int{},
		images: map[*fsNode]int{}}
	m.nodes[`c:\`] = &fsNode{path: `C:\`, dir: true, modTime: now()}
	return m
}

// cleanWinPath turns C:\a\b, c:/a/b, /C:/a/b and relative paths (against home) into the display form
// C:\a\b. It refuses other drives and characters NTFS does not allow in names (notably ':').
func cleanWinPath(p, home string) (string, error) {
	p = strings.ReplaceAll(p, "/", `\`)
	if len(p) >= 3 && p[0] == '\\' && p[2] == ':' {
		p = p[1:] // SFTP form /C:/...
	}
	if len(p) < 2 || p[1] != ':' {
		if strings.HasPrefix(p, `\`) {
			p = "C:" + p
		} else {
			p = home + `\` + p
		}
	}
	if p[0] != 'c' && p[0] != 'C' {
		return "", fmt.Errorf("%w: drive %c", errNoDrive, p[0])
	}
	var parts []string
	for _, part := range strings.Split(p[2:], `\`) {
		switch part {
		case "", ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			if strings.ContainsAny(part, `<>:"|?*`) || strings.IndexFunc(part, func(r rune) bool { return r < 32 }) >= 0 {
				return "", fmt.Errorf("%w: %q", errBadPathChars, part)
			}
			parts = append(parts, strings.TrimRight(part, " ."))
		}
	}
	return `C:\` + strings.Join(parts, `\`), nil
}

func fsKey(p string) string { return strings.ToLower(p) }

func parentOf(p string) string {
	i := strings.LastIndex(p, `\`)
	if i <= 2 {
		return `C:\`
	}
	return p[:i]
}

func baseOf(p string) string {
	if p == `C:\` {
		return "C:"
	}
	return p[strings.LastIndex(p, `\`)+1:]
}

// notifyLocked wakes every follower; callers hold mu.
func (m *memFS) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// changes returns a channel closed at the next mutation.
func (m *memFS) changes() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

func (m *memFS) stat(p string) (fsNode, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[fsKey(p)]
	if !ok {
		return fsNode{}, errNotFound
	}
	n.shared = true
	return *n, nil
}

func (m *memFS) mkdirAll(p string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mkdirAllLocked(p)
}

func (m *memFS) mkdirAllLocked(p string) error {
	if n, ok := m.nodes[fsKey(p)]; ok {
		if !n.dir {
			return fmt.Errorf("%s: %w", p, errNotDir)
		}
		return nil
	}
	if err := m.mkdirAllLocked(parentOf(p)); err != nil {
		return err
	}
	m.nodes[fsKey(p)] = &fsNode{path: p, dir: true, modTime: m.now()}
	m.notifyLocked()
	return nil
}

// mkdir creates one directory whose parent must exist.
func (m *memFS) mkdir(p string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.nodes[fsKey(p)]; ok {
		return errExists
	}
	if err := m.requireDirLocked(parentOf(p)); err != nil {
		return err
	}
	m.nodes[fsKey(p)] = &fsNode{path: p, dir: true, modTime: m.now()}
	m.notifyLocked()
	return nil
}

func (m *memFS) requireDirLocked(p string) error {
	n, ok := m.nodes[fsKey(p)]
	if !ok {
		return errNotFound
	}
	if !n.dir {
		return errNotDir
	}
	return nil
}

// writeFile replaces a file's content; the parent directory must exist unless mkParents is set.
func (m *memFS) writeFile(p string, data []byte, mkParents bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mkParents {
		if err := m.mkdirAllLocked(parentOf(p)); err != nil {
			return err
		}
	} else if err := m.requireDirLocked(parentOf(p)); err != nil {
		return err
	}
	if n, ok := m.nodes[fsKey(p)]; ok && n.dir {
		return errIsDir
	} else if ok && m.images[n] > 0 {
		return errInUse
	}
	m.nextGen++
	m.nodes[fsKey(p)] = &fsNode{path: m.displayLocked(p), data: append([]byte(nil), data...), modTime: m.now(), gen: m.nextGen}
	m.notifyLocked()
	return nil
}

// displayLocked keeps the spelling a file was created with, as NTFS does.
func (m *memFS) displayLocked(p string) string {
	if n, ok := m.nodes[fsKey(p)]; ok {
		return n.path
	}
	return p
}

// appendFile adds data at the end, creating the file and its directories: what a service's logger does.
func (m *memFS) appendFile(p string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[fsKey(p)]
	if !ok {
		if err := m.mkdirAllLocked(parentOf(p)); err != nil {
			return err
		}
		m.nextGen++
		n = &fsNode{path: p, gen: m.nextGen}
		m.nodes[fsKey(p)] = n
	}
	if n.dir {
		return errIsDir
	}
	grown := make([]byte, 0, len(n.data)+len(data))
	n.data = append(append(grown, n.data...), data...)
	n.modTime = m.now()
	m.notifyLocked()
	return nil
}

// writeAt is the SFTP write path: it extends the file as needed.
func (m *memFS) writeAt(p string, b []byte, off int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[fsKey(p)]
	if !ok {
		return errNotFound
	}
	if n.dir {
		return errIsDir
	}
	if m.images[n] > 0 {
		return errInUse
	}
	end := max(len(n.data), int(off)+len(b))
	if n.shared && int(off) < len(n.data) {
		// Someone holds these bytes: copy before overwriting (with room to grow, as uploads append).
		next := make([]byte, len(n.data), max(end, 2*len(n.data)))
		copy(next, n.data)
		n.data, n.shared = next, false
	}
	// Bytes beyond the old length are never seen by earlier readers, so growing in place is safe.
	n.data = growTo(n.data, end)
	copy(n.data[off:], b)
	n.modTime = m.now()
	m.notifyLocked()
	return nil
}

func (m *memFS) truncate(p string, size int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[fsKey(p)]
	if !ok {
		return errNotFound
	}
	if n.dir {
		return errIsDir
	}
	if m.images[n] > 0 {
		return errInUse
	}
	next := make([]byte, size)
	copy(next, n.data)
	if int(size) < len(n.data) {
		m.nextGen++
		n.gen = m.nextGen
	}
	n.data = next
	n.modTime = m.now()
	m.notifyLocked()
	return nil
}

func (m *memFS) readFile(p string) ([]byte, error) {
	n, err := m.stat(p)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, errIsDir
	}
	return n.data, nil
}

// list returns the children of a directory, sorted case-insensitively as NTFS enumerates them.
func (m *memFS) list(p string) ([]fsNode, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.requireDirLocked(p); err != nil {
		return nil, err
	}
	prefix := fsKey(p)
	if !strings.HasSuffix(prefix, `\`) {
		prefix += `\`
	}
	var out []fsNode
	for k, n := range m.nodes {
		if strings.HasPrefix(k, prefix) && k != prefix && !strings.Contains(k[len(prefix):], `\`) {
			out = append(out, *n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return fsKey(out[i].path) < fsKey(out[j].path) })
	return out, nil
}

// remove deletes a file, or a directory (with its content only when recursive).
func (m *memFS) remove(p string, recursive bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := fsKey(p)
	n, ok := m.nodes[k]
	if !ok {
		return errNotFound
	}
	if p == `C:\` {
		return os.ErrPermission
	}
	if m.heldLocked(k) || m.imageUnderLocked(k) {
		return errInUse
	}
	children := m.descendantsLocked(k)
	if n.dir && len(children) > 0 && !recursive {
		return errNotEmpty
	}
	for _, c := range children {
		delete(m.nodes, c)
	}
	delete(m.nodes, k)
	m.notifyLocked()
	return nil
}

func (m *memFS) descendantsLocked(k string) []string {
	var out []string
	for c := range m.nodes {
		if strings.HasPrefix(c, k+`\`) {
			out = append(out, c)
		}
	}
	return out
}

// rename moves a file or directory tree. With replace, an existing destination file is overwritten
// (Move-Item -Force, posix-rename); otherwise an existing destination is an error.
func (m *memFS) rename(from, to string, replace bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	src, ok := m.nodes[fsKey(from)]
	if !ok {
		return errNotFound
	}
	if err := m.requireDirLocked(parentOf(to)); err != nil {
		return err
	}
	if dst, ok := m.nodes[fsKey(to)]; ok && fsKey(to) != fsKey(from) {
		if !replace || dst.dir || src.dir {
			return errExists
		}
		if m.images[dst] > 0 {
			return errInUse // replacing a running program's file deletes it: refused
		}
	}
	if src.dir && m.imageUnderLocked(fsKey(from)) {
		return errInUse
	}
	if strings.HasPrefix(fsKey(to), fsKey(from)+`\`) {
		return fmt.Errorf("cannot move %s into itself: %w", from, os.ErrInvalid)
	}
	if m.heldLocked(fsKey(from)) {
		return errInUse
	}
	m.moveTreeLocked(from, to)
	m.notifyLocked()
	return nil
}

// hold marks a path as open in another process (opened without FILE_SHARE_DELETE, as Go's and most
// programs' opens are): until released, Windows refuses to rename or delete it or any directory above it.
func (m *memFS) hold(p string) (release func(), err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := fsKey(p)
	if _, ok := m.nodes[k]; !ok {
		return nil, errNotFound
	}
	m.held[k]++
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.held[k]--; m.held[k] <= 0 {
				delete(m.held, k)
			}
		})
	}, nil
}

// lockImage marks a file as the image of a running process until release is called; a missing file
// locks nothing.
func (m *memFS) lockImage(p string) (release func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[fsKey(p)]
	if !ok || n.dir {
		return func() {}
	}
	m.images[n]++
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.images[n]--; m.images[n] <= 0 {
				delete(m.images, n)
			}
		})
	}
}

// imageUnderLocked reports whether k, or a file below the directory k, is a running image.
func (m *memFS) imageUnderLocked(k string) bool {
	for n := range m.images {
		if nk := fsKey(n.path); nk == k || strings.HasPrefix(nk, k+`\`) {
			return true
		}
	}
	return false
}

// heldLocked reports whether k or anything below it is held open.
func (m *memFS) heldLocked(k string) bool {
	for h := range m.held {
		if h == k || strings.HasPrefix(h, k+`\`) {
			return true
		}
	}
	return false
}

func (m *memFS) moveTreeLocked(from, to string) {
	fromKey := fsKey(from)
	moved := map[string]*fsNode{}
	for k, n := range m.nodes {
		if k == fromKey || strings.HasPrefix(k, fromKey+`\`) {
			moved[k] = n
			delete(m.nodes, k)
		}
	}
	for k, n := range moved {
		n.path = to + n.path[len(from):]
		if k == fromKey {
			m.nextGen++
			n.gen = m.nextGen // a follower of the destination path must start again
		}
		m.nodes[fsKey(n.path)] = n
	}
}

// rotate moves a log aside (to <path>.1, replacing an older one) and starts an empty file, as a
// size-based log rotator does.
func (m *memFS) rotate(p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.nodes[fsKey(p)]; ok && !n.dir {
		old := *n
		old.path = n.path + ".1"
		m.nodes[fsKey(old.path)] = &old
	}
	_ = m.mkdirAllLocked(parentOf(p))
	m.nextGen++
	m.nodes[fsKey(p)] = &fsNode{path: m.displayLocked(p), modTime: m.now(), gen: m.nextGen}
	m.notifyLocked()
}

func sha256Upper(b []byte) string {
	sum := sha256.Sum256(b)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

// splitLines splits file content the way Get-Content does: CRLF or LF separated, a trailing newline
// does not start an extra line. complete reports whether the last line was terminated.
func splitLines(data []byte) (lines []string, complete bool) {
	if len(data) == 0 {
		return nil, true
	}
	s := string(data)
	complete = strings.HasSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\n")
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.TrimSuffix(l, "\r"))
	}
	return lines, complete
}

// growTo extends data to size, doubling its capacity when it must reallocate. The bytes between the old
// length and size are zero: capacity beyond the length is only ever fresh memory from here.
func growTo(data []byte, size int) []byte {
	if size <= cap(data) {
		old := len(data)
		data = data[:size]
		clear(data[old:])
		return data
	}
	next := make([]byte, size, max(size, 2*cap(data)))
	copy(next, data)
	return next
}
