package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/sim/demo"
)

// mainChildEnv marks a child process that runs Main (the real binary's signal handling) with the
// arguments in mainArgsEnv, a JSON list.
const (
	mainChildEnv = "WMCON_MAIN_CHILD"
	mainArgsEnv  = "WMCON_MAIN_ARGS"
)

// fileSizeEnv, when set, is the child's file-size limit in bytes: RLIMIT_FSIZE, what `ulimit -f` sets. A
// write past it fails with EFBIG, as one on a full disk fails.
const fileSizeEnv = "WMCON_TEST_FILE_SIZE_LIMIT"

// runMainChild is the child's half: it never returns to the test framework.
func runMainChild() {
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(mainArgsEnv)), &args); err != nil {
		os.Exit(99)
	}
	if v := os.Getenv(fileSizeEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			os.Exit(98)
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			os.Exit(97)
		}
	}
	os.Exit(Main(args, os.Stdout, os.Stderr, testDemo))
}

// child is wmcon run as a process, so real signals reach Main's handler.
type child struct {
	cmd    *exec.Cmd
	out    *os.File // the read end of stdout: closing it is a reader that went away (| head)
	stderr lockedBuffer
	lines  chan string   // stdout, line by line
	done   chan struct{} // the process ended
	errEnd chan struct{} // all of stderr was read
	code   int
}

// lockedBuffer is stderr, written by a reading goroutine while the test looks at it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startChild runs wmcon with args in its own process group. The child's exit is seen when the process
// ends, not when its output closes: a credential plugin it started may hold the output open after it.
func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	a, err := json.Marshal(args)
	require.NoError(t, err)
	c := &child{lines: make(chan string, 1024), done: make(chan struct{}), errEnd: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(os.Environ(), mainChildEnv+"=1", mainArgsEnv+"="+string(a))
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	errR, errW, err := os.Pipe()
	require.NoError(t, err)
	c.cmd.Stdout, c.cmd.Stderr, c.out = outW, errW, outR
	require.NoError(t, c.cmd.Start())
	outW.Close()
	errW.Close()
	go func() {
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	go func() {
		defer close(c.errEnd)
		defer errR.Close()
		_, _ = io.Copy(&c.stderr, errR)
	}()
	go func() {
		err := c.cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			c.code = exit.ExitCode()
		} else if err != nil {
			c.code = -1
		}
		close(c.done)
	}()
	t.Cleanup(func() { // stopped even when the test fails, with anything it started
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
	})
	return c
}

// exited waits for the child to end on its own; a child that needs SIGKILL fails the test.
func (c *child) exited(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
		// What it started (a credential plugin) may still hold stderr open: stop it, then read the rest.
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.errEnd
		return c.code
	case <-time.After(within):
		t.Fatalf("the process did not exit within %s of the signal; stderr:\n%s", within, c.stderr.String())
		return 0
	}
}

// waitLine reads stdout until a line contains s.
func (c *child) waitLine(t *testing.T, s string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("the process ended before printing %q; stderr:\n%s", s, c.stderr.String())
			}
			if strings.Contains(l, s) {
				return
			}
		case <-deadline:
			t.Fatalf("no line with %q within %s", s, within)
		}
	}
}

func (c *child) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(sig))
}

// hangingPlugin writes a kubeconfig whose credential plugin never answers (as one waiting for a browser
// login nobody sees does) and returns it with the path where the plugin writes its PID once it runs.
// client-go runs such a plugin without a time limit and without watching any context.
func hangingPlugin(t *testing.T) (kubeconfig, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	pidFile = filepath.Join(dir, "plugin.pid")
	plugin := filepath.Join(dir, "plugin.sh")
	require.NoError(t, os.WriteFile(plugin, []byte("#!/bin/sh\necho $$ > "+pidFile+"\nexec sleep 600\n"), 0o700))
	kubeconfig = filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: `+plugin+`, interactiveMode: Never}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`), 0o600))
	t.Cleanup(func() { // the plugin outlives wmcon (the operating system's to reap); stop it
		if b, err := os.ReadFile(pidFile); err == nil {
			var pid int
			if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return kubeconfig, pidFile
}

// TestASignalEndsAProcessWaitingForACredentialPlugin: while wmcon waits on a credential plugin that hangs,
// SIGINT and SIGTERM still end it at once, saying nothing was changed, with the cancelled exit code.
func TestASignalEndsAProcessWaitingForACredentialPlugin(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		word string
	}{{syscall.SIGINT, "interrupted"}, {syscall.SIGTERM, "terminated"}} {
		t.Run(tc.word, func(t *testing.T) {
			kubeconfig, pidFile := hangingPlugin(t)
			c := startChild(t, "--kubeconfig", kubeconfig, "triage", "x")
			require.Eventually(t, func() bool { _, err := os.Stat(pidFile); return err == nil }, 30*time.Second, 20*time.Millisecond,
				"wmcon runs the credential plugin")
			c.signal(t, tc.sig)
			code := c.exited(t, 10*time.Second)
			assert.Equal(t, ExitCancelled, code, "stderr:\n%s", c.stderr.String())
			assert.Contains(t, c.stderr.String(), "wmcon: "+tc.word+": exiting; nothing was changed")
		})
	}
}

// TestFirstSignalStopsARunningRebootAndReportsTheNode: a first SIGINT during a reboot on the demo cancels it,
// and the action itself reports how the node was left (its end event), which a process killed at once
// could not do.
func TestFirstSignalStopsARunningRebootAndReportsTheNode(t *testing.T) {
	if testing.Short() {
		t.Skip("reboots a simulated host")
	}
	t.Setenv(actions.AuditEnv, filepath.Join(t.TempDir(), "audit.log"))
	node := demo.NodeName("127.0.0.2")
	c := startChild(t, "--demo", "reboot", node, "-o", "json")
	c.waitLine(t, `"step":"drain"`, 60*time.Second)
	c.signal(t, syscall.SIGINT)
	code := c.exited(t, 60*time.Second)
	var last event.Event
	for l := range c.lines { // the child has ended: its output ends too
		var e event.Event
		if json.Unmarshal([]byte(l), &e) == nil {
			last = e
		}
	}
	assert.Contains(t, c.stderr.String(), "interrupted: stopping; the output says how each node was left")
	assert.Equal(t, event.Finished, last.Kind, "the reboot reported its end: %+v", last)
	assert.NotEqual(t, event.Succeeded, last.Outcome)
	assert.Contains(t, []int{ExitCancelled, ExitHalfDone}, code, "stderr:\n%s", c.stderr.String())
}

// TestInterruptsDecideByWhatRuns covers the handler's choices without real signals.
func TestInterruptsDecideByWhatRuns(t *testing.T) {
	newIn := func() (*interrupts, *bool, *[]int, *bytes.Buffer) {
		cancelled, codes, errOut := false, []int{}, &bytes.Buffer{}
		in := &interrupts{cancel: func(error) { cancelled = true }, stderr: errOut, exit: func(c int) { codes = append(codes, c) }}
		return in, &cancelled, &codes, errOut
	}
	in, cancelled, codes, _ := newIn()
	in.handle(os.Interrupt)
	assert.False(t, *cancelled)
	assert.Equal(t, []int{ExitCancelled}, *codes, "nothing running: exit at once, nothing changed")

	in, cancelled, codes, errOut := newIn()
	ctx := withInterrupts(context.Background(), in)
	require.NoError(t, cancellable(ctx, func() error {
		in.handle(syscall.SIGTERM)
		assert.True(t, *cancelled, "a first signal cancels what runs")
		assert.Empty(t, *codes, "and does not exit")
		in.handle(syscall.SIGTERM)
		return nil
	}))
	assert.Equal(t, []int{ExitHalfDone}, *codes, "a second signal exits at once, saying a node may be half-done")
	assert.Contains(t, errOut.String(), "terminated again: exiting at once")
}

// TestDemoLeavesNothingBehind: the demo keeps its files (audit log, pinned host keys, payload) in a private
// directory that is gone once the process ends — normally, on an error, and when a signal ends it at once
// (SIGTERM, and SIGHUP when the terminal goes away) — and it never writes the user's audit log.
func TestDemoLeavesNothingBehind(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	users := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv(actions.AuditEnv, users)
	left := func() []string {
		entries, err := os.ReadDir(tmp)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	node := demo.NodeName("127.0.0.2")
	if signal.Ignored(syscall.SIGHUP) {
		// The tests run under nohup: the child would inherit SIGHUP ignored, and wmcon leaves an ignored
		// SIGHUP so (as it should). A signal this process handles is reset to its default in a child.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}

	code, _, errOut := runWmcon(t, "--demo", "cordon", node)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, left(), "after a change")
	code, _, _ = runWmcon(t, "--demo", "cordon", "no-such-node")
	require.Equal(t, ExitFailed, code)
	assert.Empty(t, left(), "after an error")

	// A closed pipe (the reader went away: | head) is a signal too (issue 25, Also).
	for _, tc := range []struct {
		sig  syscall.Signal
		word string
	}{{syscall.SIGTERM, "terminated"}, {syscall.SIGHUP, "hung up"}, {syscall.SIGPIPE, "output closed"}} {
		t.Run(tc.word, func(t *testing.T) {
			c := startChild(t, "--demo", "logs", node, "-f")
			c.waitLine(t, "", 60*time.Second) // following: nothing would notice a cancellation, so a signal ends it at once
			dirs := left()
			require.Len(t, dirs, 1, "the demo's directory while it runs")
			fi, err := os.Stat(filepath.Join(tmp, dirs[0]))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "private")
			if tc.sig == syscall.SIGPIPE {
				require.NoError(t, c.out.Close()) // the next line the follow writes meets a closed pipe
			} else {
				c.signal(t, tc.sig)
			}
			assert.Equal(t, ExitCancelled, c.exited(t, 30*time.Second), c.stderr.String())
			assert.Contains(t, c.stderr.String(), "wmcon: "+tc.word+": exiting")
			assert.Empty(t, left(), "removed although the process ended at once")
		})
	}
	assert.NoFileExists(t, users, "the demo never writes the user's audit log")
}
