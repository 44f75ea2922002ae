package cli

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/wmcon/wmcon/backend"
	"github.com/wmcon/wmcon/session"
	"github.com/wmcon/wmcon/sim/fleet"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
	"github.com/wmcon/wmcon/ui"
)

// idleBudget is what a console may ask of the API server per second while the cluster is quiet, on average
// over a minute after the list: issue 27's goal for a fleet of any size.
const idleBudget = 1.0

// The console on a quiet cluster of 400 realistic nodes (100 Windows), through its real wiring (session,
// metrics feed, the console's model), with the clock and ticker injected: one simulated minute after the
// Nodes are listed, the requests it sends the real API server are counted and held to idleBudget a second.
// The start is counted too, and no single node may be read in it or later (no per-node GET), no node's
// exporter asked twice (no retry of a 400 every interval), no more exporters than the screen has rows.
// Before: one GET per Windows node right after the list (host keys for the Mirrors pane's read of every
// host) and one node-proxy scrape of every Windows node's exporter per refresh (the test tier's nodes have
// loopback addresses the API server refuses to proxy to, 400 each time) — about 400 requests in the minute.
func TestConsoleIsQuietAtIdle(t *testing.T) {
	const nodes = 400
	srv := kubeapi.Start(t)
	seedFleet(t, srv.AdminConfig(), nodes)

	var log countingLog
	flags := genericclioptions.NewConfigFlags(false)
	kubeconfig := srv.AdminKubeconfig()
	flags.KubeConfig = &kubeconfig
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.Wrap(log.wrap)
		return c
	}
	t.Setenv("HOME", t.TempDir())
	ctx := context.Background()
	s, err := session.New(ctx, session.Options{Backend: backend.NewCluster(flags), SSH: session.SSHOptions{
		KnownHosts: filepath.Join(t.TempDir(), "known_hosts"), Agent: false}})
	require.NoError(t, err)
	t.Cleanup(s.Close)

	clock := newSimClock(time.Now())
	opts, err := consoleWithMetrics(&globalOptions{}, s, session.MetricsOptions{Now: clock.Now})
	require.NoError(t, err)
	opts.Now, opts.Tick = clock.Now, clock.Tick
	console := newConsoleDriver(ui.New(ui.NewProgramContext(opts), s.Watcher.Snapshots()))
	// Fewer rows than a refresh may read, so that asking a node again would show.
	console.send(tea.WindowSizeMsg{Width: 200, Height: 24})
	// Counted from the start: at 400 nodes a per-node sweep is over in the first seconds.
	log.start()
	console.start()

	snap, err := s.Snapshot(ctx) // the Nodes listed, and every other resource answered
	require.NoError(t, err)
	require.Len(t, snap.Nodes, nodes)
	require.True(t, console.settleUntil(fmt.Sprintf("Nodes (%d)", nodes), 60*time.Second), "the console shows the list:\n%s", console.screen())

	atStart := log.stop()
	t.Logf("%d requests from the console's start until the list was on screen:\n%s", len(atStart), summary(atStart))

	log.start()
	end := clock.Now().Add(time.Minute)
	for clock.advance(end, console.deliver) {
	}
	console.settle()
	sent := log.stop()
	t.Logf("%d requests in the simulated minute after the list:\n%s", len(sent), summary(sent))
	// What made a large fleet loud, each held apart, since at 10,000 nodes any one of them alone is far over
	// the budget while at 400 it might hide in the start or under it: a GET of single nodes (host keys are
	// read from the watcher's cache; at 10,000 nodes the client's rate limit spread such a sweep over the
	// minute), a node's exporter asked twice (the test tier's loopback nodes answer 400, which waits
	// minutes before it is asked again), more exporters than the screen has rows.
	perNode := map[string]int{}
	proxied := 0
	for _, s := range append(atStart, sent...) {
		parts := strings.Split(s, "/")
		if len(parts) == 5 && strings.HasPrefix(s, "GET /api/v1/nodes/") {
			t.Errorf("a single node was read from the API server: %s", s)
		}
		if strings.HasSuffix(s, "/proxy/metrics") && len(parts) > 4 {
			perNode[parts[4]]++
			proxied++
		}
	}
	for node, n := range perNode {
		if n > 1 {
			t.Errorf("node %s's exporter was asked %d times, though it answered 400", node, n)
		}
	}
	require.LessOrEqual(t, proxied, 24, "exporters read through the node proxy: at most the rows of a 24-line screen")
	require.LessOrEqual(t, float64(len(sent)), idleBudget*60, "requests at idle over a minute (budget %.0f/s)", idleBudget)
	require.Contains(t, console.screen(), fmt.Sprintf("Nodes (%d)", nodes))
}

// seedFleet creates n realistic nodes (sim/fleet), every fourth Windows, with loopback addresses.
func seedFleet(t *testing.T, cfg *rest.Config, n int) {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(cfg)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				name := fmt.Sprintf("ip-127-%d-%d-%d.us-east-2.compute.internal", i/65536, i/256%256, i%256)
				node := fleet.Node(i, name, fmt.Sprintf("127.%d.%d.%d", 1+i/65536, i/256%256, i%256))
				if _, err := kube.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// countingLog records the requests sent while it is started.
type countingLog struct {
	mu   sync.Mutex
	on   bool
	seen []string
}

func (l *countingLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		if l.on {
			l.seen = append(l.seen, r.Method+" "+r.URL.Path)
		}
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

func (l *countingLog) start() {
	l.mu.Lock()
	l.on, l.seen = true, nil
	l.mu.Unlock()
}

func (l *countingLog) stop() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.seen
}

// summary counts requests by verb and path, a node's name replaced by NAME.
func summary(sent []string) string {
	count := map[string]int{}
	for _, s := range sent {
		verb, path, _ := strings.Cut(s, " ")
		parts := strings.Split(path, "/")
		if len(parts) > 4 && parts[3] == "nodes" {
			parts[4] = "NAME"
		}
		count[verb+" "+strings.Join(parts, "/")]++
	}
	var lines []string
	for k, v := range count {
		lines = append(lines, fmt.Sprintf("%5d %s", v, k))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// simClock is the console's clock and ticker in a test: ticks wait for advance, not for real time.
type simClock struct {
	mu      sync.Mutex
	now     time.Time
	pending []simTimer
}

type simTimer struct {
	at time.Time
	fn func(time.Time) tea.Msg
}

func newSimClock(start time.Time) *simClock { return &simClock{now: start} }

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Tick is tea.Tick on the simulated clock.
func (c *simClock) Tick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		c.mu.Lock()
		c.pending = append(c.pending, simTimer{at: c.now.Add(d), fn: fn})
		c.mu.Unlock()
		return nil
	}
}

// advance fires the earliest timer due by end, moving the clock to it, and reports whether it fired one;
// with none due it moves the clock to end.
func (c *simClock) advance(end time.Time, deliver func(tea.Msg)) bool {
	c.mu.Lock()
	sort.SliceStable(c.pending, func(i, j int) bool { return c.pending[i].at.Before(c.pending[j].at) })
	if len(c.pending) == 0 || c.pending[0].at.After(end) {
		c.now = end
		c.mu.Unlock()
		return false
	}
	next := c.pending[0]
	c.pending = c.pending[1:]
	c.now = next.at
	c.mu.Unlock()
	deliver(next.fn(next.at))
	return true
}

// consoleDriver runs the console's model as Bubble Tea would, without a terminal: commands run on their
// own goroutines and their messages come back to Update one at a time.
type consoleDriver struct {
	model tea.Model
	msgs  chan tea.Msg
}

func newConsoleDriver(m tea.Model) *consoleDriver {
	return &consoleDriver{model: m, msgs: make(chan tea.Msg, 1024)}
}

func (d *consoleDriver) start() { d.run(d.model.Init()) }

func (d *consoleDriver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		if msg := cmd(); msg != nil {
			d.msgs <- msg
		}
	}()
}

func (d *consoleDriver) send(msg tea.Msg) {
	if batch, ok := msg.(tea.BatchMsg); ok {
		for _, c := range batch {
			d.run(c)
		}
		return
	}
	next, cmd := d.model.Update(msg)
	d.model = next
	d.run(cmd)
}

// deliver hands the console a message and lets what it starts finish.
func (d *consoleDriver) deliver(msg tea.Msg) {
	d.send(msg)
	d.settle()
}

// settle handles messages until none has come for a while (commands still waiting, such as the next
// snapshot, are left waiting); bounded.
func (d *consoleDriver) settle() {
	deadline := time.After(60 * time.Second)
	for {
		select {
		case msg := <-d.msgs:
			d.send(msg)
		case <-time.After(500 * time.Millisecond):
			return
		case <-deadline:
			return
		}
	}
}

// settleUntil handles messages until the screen shows text; false if it did not within limit.
func (d *consoleDriver) settleUntil(text string, limit time.Duration) bool {
	deadline := time.After(limit)
	for !strings.Contains(d.screen(), text) {
		select {
		case msg := <-d.msgs:
			d.send(msg)
		case <-deadline:
			return false
		}
	}
	d.settle()
	return true
}

func (d *consoleDriver) screen() string { return d.model.View().Content }
