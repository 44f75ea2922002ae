package logs_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/actions/logs"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/testsupport/actiontest"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

const kubeletLogPath = `C:\var\log\kubelet\kubelet.log`

// logSink collects what StreamLogs delivers.
type logSink struct {
	mu      sync.Mutex
	lines   []logline.Line
	events  []event.Event
	changed chan struct{}
}

func newLogSink() *logSink { return &logSink{changed: make(chan struct{}, 1)} }

func (s *logSink) out(lines []logline.Line) {
	s.mu.Lock()
	s.lines = append(s.lines, lines...)
	s.mu.Unlock()
	s.poke()
}

func (s *logSink) notice(e event.Event) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
	s.poke()
}

func (s *logSink) poke() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *logSink) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.lines {
		out = append(out, l.Text)
	}
	return out
}

func (s *logSink) messages(step string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.events {
		if e.Step == step || step == "*" {
			out = append(out, e.Target+": "+e.Message+e.Err)
		}
	}
	return out
}

// waitUntil waits (bounded) until cond holds on the sink.
func (s *logSink) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; lines %d, events:\n%s", what, len(s.texts()), strings.Join(s.messages("*"), "\n"))
		}
	}
}

func (s *logSink) waitLast(t *testing.T, want string) {
	t.Helper()
	s.waitUntil(t, want, func() bool {
		tx := s.texts()
		return len(tx) > 0 && tx[len(tx)-1] == want
	})
}

func numberedLines(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("I0101 00:00:00.000000    1 test.go:1] line %05d", i))
	}
	return out
}

// follow runs StreamLogs in the background; the returned func cancels it and waits (bounded).
func followLogs(t *testing.T, req logline.Request, deps logs.LogDeps, sink *logSink) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- logs.StreamLogs(ctx, req, deps, sink.out, event.EmitFunc(sink.notice)) }()
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			t.Fatal("StreamLogs did not stop when cancelled")
			return nil
		}
	}
	t.Cleanup(func() { cancel() })
	return stop
}

func TestStreamLogsOverSSHSurvivesDropsAndRotation(t *testing.T) {
	h := actiontest.NewLogHosts(t)
	sim := h.Add("win-a", "127.0.0.2")
	sim.AppendLog(kubeletLogPath, numberedLines(1, 10)...)
	sink := newLogSink()
	stop := followLogs(t, logline.Request{Nodes: h.Infos("win-a"), Follow: true, Tail: 5},
		logs.LogDeps{Resolver: h.Resolver, Interval: 50 * time.Millisecond}, sink)

	sink.waitLast(t, numberedLines(10, 10)[0])
	sim.AppendLog(kubeletLogPath, numberedLines(11, 50)...)
	sink.waitLast(t, numberedLines(50, 50)[0])
	sim.DropConnections()
	sim.AppendLog(kubeletLogPath, numberedLines(51, 100)...) // written while the tail is disconnected
	sink.waitLast(t, numberedLines(100, 100)[0])
	sim.DropConnections()
	sim.RotateLog(kubeletLogPath)
	sim.AppendLog(kubeletLogPath, numberedLines(101, 110)...)
	sink.waitLast(t, numberedLines(110, 110)[0])
	require.NoError(t, stop())

	require.Equal(t, numberedLines(6, 110), sink.texts(), "every line once, in order")
	require.NotEmpty(t, sink.messages("reconnecting"))
	require.NotEmpty(t, sink.messages("rotated"))
	require.Contains(t, sink.messages("source")[0], "over SSH")
	for i, l := range sink.lines {
		require.Equal(t, logline.SourceSSH, l.Source)
		require.Equal(t, "win-a", l.Node)
		require.Equal(t, "kubelet", l.Service)
		require.Equal(t, uint64(i+1), l.Seq)
		require.Equal(t, logline.LevelInfo, l.Level)
	}
}

func TestStreamLogsOnceOverSSH(t *testing.T) {
	h := actiontest.NewLogHosts(t)
	sim := h.Add("win-a", "127.0.0.2")
	sim.AppendLog(`C:\var\log\kube-proxy\kube-proxy.log`, numberedLines(1, 30)...)
	for _, tail := range []int{-1, 7} {
		sink := newLogSink()
		err := logs.StreamLogs(context.Background(), logline.Request{Nodes: h.Infos("win-a"), Service: "kube-proxy", Tail: tail, Via: logline.SourceSSH},
			logs.LogDeps{Resolver: h.Resolver}, sink.out, event.EmitFunc(sink.notice))
		require.NoError(t, err)
		want := numberedLines(1, 30)
		if tail >= 0 {
			want = want[len(want)-tail:]
		}
		require.Equal(t, want, sink.texts())
	}
}

func TestLogRequestValidation(t *testing.T) {
	node := []model.NodeInfo{{Name: "win-a", Windows: true}}
	for _, tc := range []struct {
		req  logline.Request
		want string
	}{
		{logline.Request{}, "no node given"},
		{logline.Request{Nodes: node, Service: "kubelett"}, `unknown log "kubelett": choose one of`},
		{logline.Request{Nodes: node, Via: "telnet"}, "unknown log source"},
		{logline.Request{Nodes: node, Service: "events", Via: logline.SourceAPI}, "only reachable over SSH"},
		{logline.Request{Nodes: node, Since: -time.Minute}, "negative"},
	} {
		require.ErrorContains(t, logs.ValidateLogRequest(tc.req), tc.want)
	}
	require.NoError(t, logs.ValidateLogRequest(logline.Request{Nodes: node, Service: "wicd"}))
	require.NoError(t, logs.ValidateLogRequest(logline.Request{Nodes: node, Service: "events:kubelet"}))
}

func klogAt(t time.Time, msg string) string {
	return fmt.Sprintf("I%s    1 test.go:1] %s", t.Format("0102 15:04:05.000000"), msg)
}

func TestStreamLogsThroughNodeProxy(t *testing.T) {
	np, err := kubeapi.NewNodeProxy()
	require.NoError(t, err)
	t.Cleanup(func() { np.Close() })
	s := kubeapi.Start(t, kubeapi.WithCRDs(), kubeapi.WithNamespaces(), kubeapi.WithNodeProxy(np))
	h := actiontest.NewLogHosts(t)
	simA, simB := h.Add("win-a", "127.0.0.2"), h.Add("win-b", "127.0.0.3")
	h.Register(s, np, "win-a", "127.0.0.2")
	h.Register(s, np, "win-b", "127.0.0.3")
	admin := kubernetes.NewForConfigOrDie(s.AdminConfig())
	deps := logs.LogDeps{Kube: admin, Resolver: h.Resolver, Interval: 20 * time.Millisecond}

	t.Run("follow with rotation, no gaps or duplicates", func(t *testing.T) {
		simA.AppendLog(kubeletLogPath, numberedLines(1, 20)...)
		sink := newLogSink()
		stop := followLogs(t, logline.Request{Nodes: h.Infos("win-a"), Follow: true, Tail: 20}, deps, sink)
		sink.waitLast(t, numberedLines(20, 20)[0])
		simA.AppendLog(kubeletLogPath, numberedLines(21, 60)...)
		sink.waitLast(t, numberedLines(60, 60)[0])
		simA.RotateLog(kubeletLogPath)
		simA.AppendLog(kubeletLogPath, numberedLines(61, 70)...)
		sink.waitLast(t, numberedLines(70, 70)[0])
		// The log disappears for a while (the kubelet answers 404): retried, then read again from the top.
		require.NoError(t, simA.RemoveFile(kubeletLogPath))
		sink.waitUntil(t, "a reconnecting notice", func() bool { return len(sink.messages("reconnecting")) > 0 })
		simA.AppendLog(kubeletLogPath, numberedLines(71, 75)...)
		sink.waitLast(t, numberedLines(75, 75)[0])
		require.NoError(t, stop())
		require.Equal(t, numberedLines(1, 75), sink.texts())
		require.Contains(t, sink.messages("source")[0], "node log proxy")
		require.Len(t, sink.messages("rotated"), 2)
		require.Len(t, sink.messages("resumed"), 1)
		for _, l := range sink.lines {
			require.Equal(t, logline.SourceAPI, l.Source)
		}
	})

	t.Run("falls back to SSH when the user may not get nodes/proxy", func(t *testing.T) {
		simA.RotateLog(kubeletLogPath)
		simA.AppendLog(kubeletLogPath, numberedLines(1, 5)...)
		user := kubernetes.NewForConfigOrDie(s.UserConfig("logs-reader-without-proxy"))
		sink := newLogSink()
		err := logs.StreamLogs(context.Background(), logline.Request{Nodes: h.Infos("win-a"), Tail: -1},
			logs.LogDeps{Kube: user, Resolver: h.Resolver}, sink.out, event.EmitFunc(sink.notice))
		require.NoError(t, err)
		require.Equal(t, numberedLines(1, 5), sink.texts())
		require.Contains(t, sink.messages("source")[0], "over SSH: you may not get nodes/proxy")
		require.Equal(t, logline.SourceSSH, sink.lines[0].Source)

		// Asked for the node proxy explicitly, the refusal is an error that says what is missing.
		sink = newLogSink()
		err = logs.StreamLogs(context.Background(), logline.Request{Nodes: h.Infos("win-a"), Tail: -1, Via: logline.SourceAPI},
			logs.LogDeps{Kube: user, Resolver: h.Resolver}, sink.out, event.EmitFunc(sink.notice))
		require.ErrorContains(t, err, "you may not get nodes/proxy")
		require.Len(t, sink.messages("read"), 1)
	})

	t.Run("several nodes merged in time order", func(t *testing.T) {
		base := time.Now().Add(-time.Hour).Truncate(time.Second)
		simA.RotateLog(kubeletLogPath)
		simB.RotateLog(kubeletLogPath)
		var want []string
		for i := range 20 {
			sim, node := simA, "win-a"
			if i%3 == 1 {
				sim, node = simB, "win-b"
			}
			line := klogAt(base.Add(time.Duration(i)*time.Second), fmt.Sprintf("event %02d", i))
			sim.AppendLog(kubeletLogPath, line)
			want = append(want, node+" "+line)
		}
		sink := newLogSink()
		err := logs.StreamLogs(context.Background(), logline.Request{Nodes: h.Infos("win-a", "win-b"), Tail: -1}, deps, sink.out, event.EmitFunc(sink.notice))
		require.NoError(t, err)
		var got []string
		for _, l := range sink.lines {
			got = append(got, l.Node+" "+l.Text)
		}
		require.Equal(t, want, got)

		// Following, lines written on both hosts at about the same time come out in time order too
		// (the reorder window is made generous so that a slow test machine cannot reorder them).
		sink = newLogSink()
		slow := deps
		slow.Window = 2 * time.Second
		stop := followLogs(t, logline.Request{Nodes: h.Infos("win-a", "win-b"), Follow: true, Tail: 1}, slow, sink)
		sink.waitUntil(t, "the last line of each node", func() bool { return len(sink.texts()) == 2 })
		later := base.Add(time.Minute)
		simB.AppendLog(kubeletLogPath, klogAt(later.Add(2*time.Second), "b2"), klogAt(later.Add(3*time.Second), "b3"))
		simA.AppendLog(kubeletLogPath, klogAt(later.Add(1*time.Second), "a1"), klogAt(later.Add(4*time.Second), "a4"))
		sink.waitUntil(t, "four more lines", func() bool { return len(sink.texts()) == 6 })
		require.NoError(t, stop())
		var order []string
		for _, l := range sink.lines[2:] {
			order = append(order, l.Text[len(l.Text)-2:])
		}
		require.Equal(t, []string{"a1", "b2", "b3", "a4"}, order)
	})
}

// BenchmarkLogLatencySSH is the time from a line written on a simulated host to its delivery by
// StreamLogs (what the log view's stream queues for the screen), following over SSH.
func BenchmarkLogLatencySSH(b *testing.B) {
	h := actiontest.NewLogHosts(b)
	sim := h.Add("win-a", "127.0.0.2")
	sim.AppendLog(kubeletLogPath, "start")
	got := make(chan string, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go logs.StreamLogs(ctx, logline.Request{Nodes: h.Infos("win-a"), Follow: true, Tail: 1, Via: logline.SourceSSH},
		logs.LogDeps{Resolver: h.Resolver}, func(lines []logline.Line) {
			for _, l := range lines {
				got <- l.Text
			}
		}, nil)
	waitLine(b, got, "start")
	b.ResetTimer()
	for i := range b.N {
		want := fmt.Sprintf("latency %d", i)
		sim.AppendLog(kubeletLogPath, want)
		waitLine(b, got, want)
	}
}

func waitLine(b *testing.B, got <-chan string, want string) {
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l := <-got:
			if l == want {
				return
			}
		case <-deadline:
			b.Fatalf("line %q never arrived", want)
		}
	}
}

func TestStreamLogsSince(t *testing.T) {
	h := actiontest.NewLogHosts(t)
	sim := h.Add("win-a", "127.0.0.2")
	now := time.Now()
	sim.AppendLog(kubeletLogPath,
		klogAt(now.Add(-2*time.Hour), "old"), "    old continuation",
		klogAt(now.Add(-time.Minute), "recent"), "    recent continuation")
	sink := newLogSink()
	err := logs.StreamLogs(context.Background(), logline.Request{Nodes: h.Infos("win-a"), Tail: -1, Since: 10 * time.Minute},
		logs.LogDeps{Resolver: h.Resolver}, sink.out, event.EmitFunc(sink.notice))
	require.NoError(t, err)
	require.Len(t, sink.texts(), 2)
	require.Contains(t, sink.texts()[0], "recent")
	require.Equal(t, "    recent continuation", sink.texts()[1])
	require.Equal(t, sink.lines[0].Time, sink.lines[1].Time, "a continuation line takes its predecessor's time")
}
