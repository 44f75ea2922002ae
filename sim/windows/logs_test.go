package windows

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

// follower is a running `Get-Content -Wait` session whose lines arrive on a channel.
type follower struct {
	session *ssh.Session
	lines   chan string
	done    chan error
}

func startFollow(t *testing.T, c *ssh.Client, cmd string) *follower {
	t.Helper()
	s, err := c.NewSession()
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	out, err := s.StdoutPipe()
	require.NoError(t, err)
	f := &follower{session: s, lines: make(chan string, 100), done: make(chan error, 1)}
	require.NoError(t, s.Start(cmd))
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f.lines <- strings.TrimSuffix(sc.Text(), "\r")
		}
		close(f.lines)
	}()
	go func() { f.done <- s.Wait() }()
	return f
}

func (f *follower) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-f.lines:
		require.True(t, ok, "the follow ended early")
		return l
	case <-time.After(testTimeout):
		t.Fatal("timed out waiting for a followed line")
	}
	return ""
}

func TestFollowSkipsThenStreamsAndSurvivesRotation(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	path := `C:\var\log\test\it's.log`
	th.AppendLog(path, "one", "two", "three")
	f := startFollow(t, c, "Get-Content -LiteralPath "+q(path)+" -Wait | Select-Object -Skip 2")

	assert.Equal(t, "three", f.next(t))
	th.AppendLog(path, "four")
	assert.Equal(t, "four", f.next(t))
	require.NoError(t, th.fs.appendFile(path, []byte("fi")))
	require.NoError(t, th.fs.appendFile(path, []byte("ve\n")))
	assert.Equal(t, "five", f.next(t), "a line is emitted once its newline is written")

	th.RotateLog(path)
	th.AppendLog(path, "after rotation")
	assert.Equal(t, "after rotation", f.next(t))
	old, err := th.ReadFile(path + ".1")
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\nthree\nfour\nfive\n", string(old))

	require.NoError(t, f.session.Close())
	eventually(t, "the follow to stop with its session", func() bool { return th.activeExecs.Load() == 0 })
}

func TestTailWithWaitFollowsFromTheEnd(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	th.AppendLog(`C:\var\log\a.log`, "1", "2", "3")
	f := startFollow(t, c, `Get-Content -LiteralPath 'C:\var\log\a.log' -Tail 1 -Wait`)
	assert.Equal(t, "3", f.next(t))
	th.AppendLog(`C:\var\log\a.log`, "4")
	assert.Equal(t, "4", f.next(t))
}

func TestFollowOfMissingFileFails(t *testing.T) {
	th := startHost(t, Options{})
	r := run(t, th.dial(t), `Get-Content -LiteralPath 'C:\var\log\none.log' -Wait | Select-Object -Skip 0`)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "does not exist")
}

func TestRunningServicesWriteLogs(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	c := th.dial(t)
	count := func() int {
		n, err := strconv.Atoi(strings.TrimSpace(run(t, c, `@(Get-Content -LiteralPath 'C:\var\log\kubelet\kubelet.log').Count`).stdout))
		require.NoError(t, err)
		return n
	}
	first := count()
	eventually(t, "the kubelet log to grow", func() bool { return count() > first+3 })
	log, err := th.ReadFile(`C:\var\log\kubelet\kubelet.log`)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ kubelet\.go:\d+\] "Syncing pods"$`, string(log))
	eventually(t, "a warning line", func() bool {
		b, _ := th.ReadFile(`C:\var\log\kubelet\kubelet.log`)
		return strings.Contains(string(b), "\nW")
	})
	eventually(t, "containerd to log", func() bool { return th.Exists(`C:\var\log\containerd\containerd.log`) })
}

func TestDeterministicClock(t *testing.T) {
	fixed := time.Date(2026, 11, 22, 5, 40, 1, 123456000, time.UTC)
	th := startHost(t, Options{Configured: true, Clock: func() time.Time { return fixed }})
	log, err := th.ReadFile(`C:\var\log\kubelet\kubelet.log`)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(log), "I1122 05:40:01.123456 "), string(log))
}

// TestLogHistory: a host started with LogHistory already has that much of its services' logs, starting
// with each service's start line and ending at the current time, in time order; without it a log holds
// only the start line.
func TestLogHistory(t *testing.T) {
	fixed := time.Date(2026, 11, 22, 5, 40, 1, 0, time.UTC)
	clock := func() time.Time { return fixed }
	th := startHost(t, Options{Configured: true, Clock: clock, LogInterval: time.Hour, LogHistory: 30})
	b, err := th.ReadFile(`C:\var\log\kubelet\kubelet.log`)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 31, "the start line and one line per interval (the kubelet talks every tick)")
	assert.Contains(t, lines[0], `"Kubelet version"`)
	assert.True(t, strings.HasPrefix(lines[0], "I1120 22:40:01."), "started 31 intervals ago: %s", lines[0])
	assert.True(t, strings.HasPrefix(lines[30], "I1122 04:40:01.") || strings.HasPrefix(lines[30], "W1122 04:40:01.") ||
		strings.HasPrefix(lines[30], "E1122 04:40:01."), "the newest line is one interval old: %s", lines[30])
	b, err = th.ReadFile(`C:\var\log\containerd\containerd.log`)
	require.NoError(t, err)
	assert.Contains(t, string(b), "starting containerd")
	assert.Contains(t, string(b), "ImageCreate event", "quieter services have some history too")

	bare := startHost(t, Options{Configured: true, Clock: clock, LogInterval: time.Hour})
	b, err = bare.ReadFile(`C:\var\log\kubelet\kubelet.log`)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(b), "\n"), "no history: only the start line")
}

// TestStoppedServiceLogEndsWhenItStopped: a service that stopped before the host started is stopped, its
// history (as long as a running one's) ends when it stopped, and it writes nothing afterwards while the
// others keep writing.
func TestStoppedServiceLogEndsWhenItStopped(t *testing.T) {
	fixed := time.Date(2026, 11, 22, 5, 40, 1, 0, time.UTC)
	th := startHost(t, Options{Configured: true, Clock: func() time.Time { return fixed }, LogInterval: 20 * time.Millisecond,
		LogHistory: 30, StoppedAgo: map[string]time.Duration{"kubelet": 10 * 20 * time.Millisecond}})
	assert.False(t, th.ServiceRunning("kubelet"))
	read := func(path string) string {
		b, err := th.ReadFile(path)
		require.NoError(t, err)
		return string(b)
	}
	kubelet := read(`C:\var\log\kubelet\kubelet.log`)
	lines := strings.Split(strings.TrimSpace(kubelet), "\n")
	assert.Len(t, lines, 31, "the start line and a line for each of the 30 intervals, as a running one has")
	assert.Regexp(t, `^[IWE]1122 05:40:00\.780000 `, lines[len(lines)-1], "the last line is from just before it stopped, 10 intervals ago")

	proxy := read(`C:\var\log\kube-proxy\kube-proxy.log`)
	eventually(t, "the running services to write on", func() bool {
		return len(read(`C:\var\log\kube-proxy\kube-proxy.log`)) > len(proxy) ||
			len(read(`C:\var\log\containerd\containerd.log`)) > 0
	})
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, kubelet, read(`C:\var\log\kubelet\kubelet.log`), "a stopped kubelet writes nothing")
}
