package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

// LogDeps are what StreamLogs reads through.
type LogDeps struct {
	Kube     kubernetes.Interface // nil or a fake clientset: SSH only
	Resolver HostResolver
	// Interval is how often the node proxy is read while following, and the event log polled (default 1s).
	Interval time.Duration
	// Window is how long lines of several nodes are held to be merged in time order (default 300ms): a
	// line reaching wmcon more than Window after a later-stamped line of another node is shown after it.
	Window time.Duration
	// StartupWait bounds how long the first lines of several nodes are held until every node has sent
	// its backlog, so that backlogs merge in order too (default 5s).
	StartupWait time.Duration
	Now         func() time.Time
}

func (d *LogDeps) applyDefaults() {
	if d.Interval <= 0 {
		d.Interval = time.Second
	}
	if d.Window <= 0 {
		d.Window = 300 * time.Millisecond
	}
	if d.StartupWait <= 0 {
		d.StartupWait = 5 * time.Second
	}
	if d.Now == nil {
		d.Now = time.Now
	}
}

// logTarget is a resolved service name: its log file, or the event log (filtered to a service or not).
type logTarget struct {
	name    string // as shown
	service config.WindowsService
	events  bool
	filter  string // events of this service only ("" = all)
}

func resolveLogService(name string) (logTarget, error) {
	if name == "" {
		name = "kubelet"
	}
	if name == "wicd" || name == "WICD" {
		name = "windows-instance-config-daemon"
	}
	if ev, svc, _ := strings.Cut(name, ":"); ev == logline.EventLogService {
		return logTarget{name: name, events: true, filter: svc}, nil
	}
	s, ok := config.ServiceByName(name)
	if !ok || s.LogFile == "" {
		return logTarget{}, fmt.Errorf("unknown log %q: choose one of %s (or events:<service>)", name, strings.Join(logline.Services(), ", "))
	}
	return logTarget{name: name, service: s}, nil
}

// logFileParts splits a log into the node proxy's dir and file: C:\var\log\kubelet\kubelet.log →
// kubelet, kubelet.log.
func (t logTarget) logFileParts() (dir, file string) {
	f := t.service.LogFile
	return t.service.LogDir, f[strings.LastIndexByte(f, '\\')+1:]
}

// ValidateLogRequest checks a request before anything is started.
func ValidateLogRequest(req logline.Request) error {
	if len(req.Nodes) == 0 {
		return errors.New("no node given: name at least one Windows node")
	}
	t, err := resolveLogService(req.Service)
	if err != nil {
		return err
	}
	switch req.Via {
	case logline.SourceAuto, logline.SourceSSH:
	case logline.SourceAPI:
		if t.events {
			return errors.New("the Windows event log is only reachable over SSH: drop --via api")
		}
	default:
		return fmt.Errorf("unknown log source %q: use api or ssh", req.Via)
	}
	if req.Since < 0 {
		return fmt.Errorf("--since %s is negative: give a duration such as 10m", req.Since)
	}
	return nil
}

// StreamLogs delivers the logs of req.Service on every node in req.Nodes to out, in batches, until the
// logs are read (or, with Follow, until ctx ends). Each node's source is picked on its own (see
// chooseSource) and reported, with reconnections and rotations, as Events to notices. Lines of several
// nodes are merged in time order within LogDeps.Window. out and notices are called from one goroutine
// at a time and must not block. The error joins the nodes that failed; cancelling ctx is not an error.
func StreamLogs(ctx context.Context, req logline.Request, deps LogDeps, out func([]logline.Line), notices func(event.Event)) error {
	if err := ValidateLogRequest(req); err != nil {
		return err
	}
	deps.applyDefaults()
	target, _ := resolveLogService(req.Service)
	m := newLogMerger(len(req.Nodes), deps, out)
	var wg sync.WaitGroup
	errs := make([]error, len(req.Nodes))
	for i, n := range req.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &nodeLogStream{req: req, deps: deps, target: target, node: n, merger: m, lane: i,
				report: event.Reporter{Sink: &noticeSink{emit: notices, mu: &m.emitMu}, Action: "logs", Target: n.Name, Now: deps.Now}}
			errs[i] = s.run(ctx)
			m.done(i)
		}()
	}
	stopFlusher := m.startFlusher()
	wg.Wait()
	stopFlusher()
	m.flush(true)
	return errors.Join(errs...)
}

// noticeSink forwards notices, serialised with line delivery.
type noticeSink struct {
	emit func(event.Event)
	mu   *sync.Mutex
}

func (s *noticeSink) Emit(e event.Event) {
	if s.emit == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit(e)
}

func (s *noticeSink) Ask(context.Context, event.Question) (string, error) {
	return "", errors.New("reading logs asks nothing")
}

// nodeLogStream reads one node's log.
type nodeLogStream struct {
	req    logline.Request
	deps   LogDeps
	target logTarget
	node   model.NodeInfo
	merger *logMerger
	lane   int
	report event.Reporter
	stamp  lineStamper
}

func (s *nodeLogStream) run(ctx context.Context) error {
	s.stamp = lineStamper{now: s.deps.Now, since: s.req.Since}
	src, why := s.chooseSource(ctx)
	if src == logline.SourceAPI {
		s.report.Log("source", fmt.Sprintf("reading %s through the API server's node log proxy", s.target.name))
		delivered, err := s.runAPI(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		if s.req.Via == logline.SourceAPI || delivered {
			return s.failed(err, "check the node's kubelet is reachable, or use --via ssh")
		}
		why = fmt.Sprintf("the node log proxy failed (%v)", err)
	}
	s.report.Log("source", fmt.Sprintf("reading %s over SSH: %s", s.target.name, why))
	if err := s.runSSH(ctx); err != nil && ctx.Err() == nil {
		return s.failed(err, "check SSH access to the node (wmcon needs the cloud-private-key secret and a reachable host)")
	}
	return nil
}

func (s *nodeLogStream) failed(err error, hint string) error {
	s.report.Failed("read", err, hint)
	return fmt.Errorf("logs of %s on %s: %w", s.target.name, s.node.Name, err)
}

// chooseSource picks the node proxy when it is asked for, or when allowed (SelfSubjectAccessReview on
// get nodes/proxy) and reachable; SSH otherwise. It says why SSH was chosen.
func (s *nodeLogStream) chooseSource(ctx context.Context) (logline.Source, string) {
	switch {
	case s.req.Via == logline.SourceSSH:
		return logline.SourceSSH, "asked for"
	case s.target.events:
		return logline.SourceSSH, "the event log is only reachable over SSH"
	case s.req.Via == logline.SourceAPI:
		return logline.SourceAPI, ""
	}
	if _, err := cluster.NewNodeLogReader(s.deps.Kube, s.node.Name, "", ""); err != nil {
		return logline.SourceSSH, err.Error()
	}
	ok, err := cluster.CanProxyNodeLogs(ctx, s.deps.Kube, s.node.Name)
	if err == nil && !ok {
		return logline.SourceSSH, "you may not get nodes/proxy"
	}
	return logline.SourceAPI, "" // allowed, or unknown: try it and fall back on failure
}

// runAPI reads through the node proxy; delivered says whether any line got through before an error.
func (s *nodeLogStream) runAPI(ctx context.Context) (delivered bool, err error) {
	dir, file := s.target.logFileParts()
	r, err := cluster.NewNodeLogReader(s.deps.Kube, s.node.Name, dir, file)
	if err != nil {
		return false, err
	}
	opts := cluster.NodeLogOptions{Tail: s.req.Tail, Follow: s.req.Follow, Interval: s.deps.Interval}
	failing := false
	err = cluster.FollowNodeLog(ctx, r, opts, func(c cluster.NodeLogChunk) {
		if c.Err != nil {
			if !failing {
				s.report.Progress("reconnecting", 0, 0, fmt.Sprintf("the node log proxy did not answer (%v): retrying, no line will be lost", c.Err))
			}
			failing = true
			return
		}
		if failing {
			failing = false
			s.report.Log("resumed", "following again")
		}
		if c.Rotated {
			s.report.Log("rotated", fmt.Sprintf("%s was rotated: reading it again from its first line", s.target.name))
			s.stamp.rotated()
		}
		delivered = true
		s.push(logline.SourceAPI, c.Lines...)
		if c.CaughtUp {
			s.merger.caughtUp(s.lane)
		}
	})
	if apierrors.IsForbidden(err) {
		err = fmt.Errorf("you may not get nodes/proxy: %w", err)
	}
	return delivered, err
}

func (s *nodeLogStream) runSSH(ctx context.Context) error {
	if s.deps.Resolver == nil {
		return errors.New("no SSH access configured")
	}
	host, err := s.deps.Resolver.Host(ctx, s.node)
	if err != nil {
		return err
	}
	if s.target.events {
		return s.runEvents(ctx, host)
	}
	if !s.req.Follow {
		lines, err := readWholeLog(ctx, host, s.target.service.LogFile, s.req.Tail)
		if err != nil {
			return err
		}
		s.push(logline.SourceSSH, lines...)
		return nil
	}
	return s.followSSH(ctx, host)
}

// followSSH follows over SSH. remote.Tail resumes dropped connections without gaps or duplicates; its
// backlog has no end marker, so the node counts as caught up once lines stop for a moment.
func (s *nodeLogStream) followSSH(ctx context.Context, host remote.Host) error {
	quiet := time.AfterFunc(s.deps.Window, func() { s.merger.caughtUp(s.lane) })
	defer quiet.Stop()
	opts := remote.TailOptions{Last: s.req.Tail, RetryInterval: s.deps.Interval}
	return host.Tail(ctx, s.target.service.LogFile, opts, func(ev remote.TailEvent) {
		switch ev.Notice {
		case remote.TailLine:
			quiet.Reset(s.deps.Window)
			s.push(logline.SourceSSH, ev.Line)
		case remote.TailReconnecting:
			s.report.Progress("reconnecting", 0, 0, fmt.Sprintf("connection lost (%v): reconnecting, no line will be lost", ev.Err))
		case remote.TailResumed:
			s.report.Log("resumed", "following again")
		case remote.TailRotated:
			s.report.Log("rotated", fmt.Sprintf("%s was rotated: reading it again from its first line", s.target.name))
			s.stamp.rotated()
		}
	})
}

// readWholeLog reads a log once: the last tail lines (the SSH client's TailOnce when it has one), or the
// whole file over SFTP.
func readWholeLog(ctx context.Context, host remote.Host, path string, tail int) ([]string, error) {
	if t, ok := host.(interface {
		TailOnce(context.Context, string, int) ([]string, error)
	}); ok && tail >= 0 {
		return t.TailOnce(ctx, path, tail)
	}
	var buf bytes.Buffer
	if err := host.Download(ctx, path, &buf, nil); err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(buf.String(), "\r\n", "\n"), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil, nil
	}
	if tail >= 0 && tail < len(lines) {
		lines = lines[len(lines)-tail:]
	}
	return lines, nil
}

// runEvents reads the Service Control Manager events (Get-WinEvent), oldest first, polling while following.
func (s *nodeLogStream) runEvents(ctx context.Context, host remote.Host) error {
	var last time.Time
	for {
		events, err := host.ServiceEvents(ctx, max(s.req.Tail, 200))
		if err != nil {
			return err
		}
		var lines []logline.Line
		for _, e := range slices.Backward(events) {
			if !e.Time.After(last) || !eventMentions(e, s.target.filter) || !s.stamp.keepTime(e.Time) {
				continue
			}
			lines = append(lines, logline.Line{Time: e.Time, Level: eventLevel(e.Level),
				Text: e.Time.Format(time.RFC3339) + " " + e.Level + " " + e.Message})
		}
		if last.IsZero() && s.req.Tail >= 0 && len(lines) > s.req.Tail {
			lines = lines[len(lines)-s.req.Tail:]
		}
		if len(lines) > 0 {
			last = lines[len(lines)-1].Time
		}
		s.pushLines(logline.SourceSSH, lines)
		s.merger.caughtUp(s.lane)
		if !s.req.Follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.deps.Interval):
		}
	}
}

func eventMentions(e remote.ServiceEvent, service string) bool {
	return service == "" || strings.Contains(strings.ToLower(e.Message), strings.ToLower(service))
}

func eventLevel(l string) logline.Level {
	switch strings.ToLower(l) {
	case "warning":
		return logline.LevelWarning
	case "error", "critical":
		return logline.LevelError
	case "information":
		return logline.LevelInfo
	}
	return logline.LevelUnknown
}

// push stamps raw lines and queues them for merging.
func (s *nodeLogStream) push(src logline.Source, texts ...string) {
	lines := make([]logline.Line, 0, len(texts))
	for _, t := range texts {
		if l, keep := s.stamp.stamp(t); keep {
			lines = append(lines, l)
		}
	}
	s.pushLines(src, lines)
}

func (s *nodeLogStream) pushLines(src logline.Source, lines []logline.Line) {
	for i := range lines {
		lines[i].Node, lines[i].Service, lines[i].Source = s.node.Name, s.target.name, src
	}
	s.merger.push(s.lane, lines)
}

// lineStamper gives lines their time and level, and applies --since. A line without a time of its own
// (a continuation, a stack trace) takes its predecessor's and is kept or dropped with it.
type lineStamper struct {
	now   func() time.Time
	since time.Duration
	last  time.Time
	keep  bool
	begun bool
}

func (s *lineStamper) stamp(text string) (logline.Line, bool) {
	t, level := ParseLogLine(text, s.now())
	if t.IsZero() {
		t = s.last
		if !s.begun {
			s.keep = s.keepTime(t)
		}
	} else {
		s.last, s.keep = t, s.keepTime(t)
	}
	s.begun = true
	return logline.Line{Time: t, Level: level, Text: text}, s.keep
}

func (s *lineStamper) keepTime(t time.Time) bool {
	return s.since <= 0 || t.IsZero() || !t.Before(s.now().Add(-s.since))
}

// rotated forgets the last time: the new file starts afresh.
func (s *lineStamper) rotated() { s.begun = false }

// ParseLogLine reads the time and level of a line as the services write them: klog
// ("E0102 15:04:05.000000 ..."; klog has no year or zone, so the host's local time in the current year
// is assumed), logrus/containerd (time="..." level=error) and go-kit/windows_exporter (ts=... level=warn),
// or an RFC 3339 time at the start. The zero time and LevelUnknown when the line has none.
func ParseLogLine(text string, now time.Time) (time.Time, logline.Level) {
	if t, l, ok := parseKlog(text, now); ok {
		return t, l
	}
	level := levelWord(fieldValue(text, "level="))
	for _, key := range []string{"time=", "ts="} {
		if v := fieldValue(text, key); v != "" {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				return t, level
			}
		}
	}
	first, _, _ := strings.Cut(text, " ")
	if t, err := time.Parse(time.RFC3339Nano, first); err == nil {
		return t, level
	}
	return time.Time{}, level
}

// parseKlog reads "Lmmdd hh:mm:ss.uuuuuu".
func parseKlog(text string, now time.Time) (time.Time, logline.Level, bool) {
	if len(text) < 21 || !strings.ContainsRune("IWEF", rune(text[0])) || text[5] != ' ' {
		return time.Time{}, "", false
	}
	t, err := time.ParseInLocation("0102 15:04:05.000000", text[1:21], now.Location())
	if err != nil {
		return time.Time{}, "", false
	}
	t = t.AddDate(now.Year(), 0, 0)
	if t.After(now.Add(24 * time.Hour)) { // a December line read in January
		t = t.AddDate(-1, 0, 0)
	}
	return t, logline.Level(text[:1]), true
}

// fieldValue returns the value of key (with its "=") in a logfmt line, unquoted.
func fieldValue(text, key string) string {
	i := strings.Index(text, key)
	if i < 0 || (i > 0 && text[i-1] != ' ') {
		return ""
	}
	v := text[i+len(key):]
	if strings.HasPrefix(v, `"`) {
		end := strings.IndexByte(v[1:], '"')
		if end < 0 {
			return ""
		}
		return v[1 : end+1]
	}
	v, _, _ = strings.Cut(v, " ")
	return v
}

func levelWord(w string) logline.Level {
	switch strings.ToLower(w) {
	case "info", "debug", "trace":
		return logline.LevelInfo
	case "warn", "warning":
		return logline.LevelWarning
	case "error", "err":
		return logline.LevelError
	case "fatal", "panic", "crit", "critical":
		return logline.LevelFatal
	}
	return logline.LevelUnknown
}

// logMerger merges the lines of several nodes in time order. Each node's lines stay in file order; across
// nodes the line with the earliest time goes first, among lines that arrived at least Window ago (or all
// of them once every node has sent its backlog). A single node's lines pass straight through.
type logMerger struct {
	deps   LogDeps
	out    func([]logline.Line)
	emitMu sync.Mutex // serialises out and notices

	mu      sync.Mutex
	lanes   []mergeLane
	seq     uint64
	started time.Time
	startup bool // holding lines until every node has caught up
	signal  chan struct{}
}

type mergeLane struct {
	queue    []queuedLine
	caughtUp bool
}

type queuedLine struct {
	line    logline.Line
	arrived time.Time
}

func newLogMerger(n int, deps LogDeps, out func([]logline.Line)) *logMerger {
	return &logMerger{deps: deps, out: out, lanes: make([]mergeLane, n), started: deps.Now(),
		startup: n > 1, signal: make(chan struct{}, 1)}
}

func (m *logMerger) push(lane int, lines []logline.Line) {
	if len(lines) == 0 {
		return
	}
	if len(m.lanes) == 1 {
		m.emitMu.Lock()
		defer m.emitMu.Unlock()
		m.mu.Lock()
		for i := range lines {
			m.seq++
			lines[i].Seq = m.seq
		}
		m.mu.Unlock()
		m.out(lines)
		return
	}
	now := m.deps.Now()
	m.mu.Lock()
	for _, l := range lines {
		m.lanes[lane].queue = append(m.lanes[lane].queue, queuedLine{line: l, arrived: now})
	}
	m.mu.Unlock()
	m.poke()
}

func (m *logMerger) caughtUp(lane int) {
	m.mu.Lock()
	m.lanes[lane].caughtUp = true
	m.mu.Unlock()
	m.poke()
}

func (m *logMerger) done(lane int) { m.caughtUp(lane) }

func (m *logMerger) poke() {
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

// startFlusher flushes several nodes' lines as they become due; the returned func stops it.
func (m *logMerger) startFlusher() func() {
	if len(m.lanes) == 1 {
		return func() {}
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(max(m.deps.Window/4, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			case <-m.signal:
			}
			m.flush(false)
		}
	}()
	return func() { close(stop); <-stopped }
}

// flush emits the lines that are due (all of them when final).
func (m *logMerger) flush(final bool) {
	m.emitMu.Lock()
	defer m.emitMu.Unlock()
	batch := m.due(final)
	if len(batch) > 0 {
		m.out(batch)
	}
}

func (m *logMerger) due(final bool) []logline.Line {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.deps.Now()
	if m.startup && !final {
		if !m.allCaughtUp() && now.Sub(m.started) < m.deps.StartupWait {
			return nil
		}
		m.startup = false
		final = true // the backlogs merge completely
	}
	var batch []logline.Line
	for {
		best := -1
		for i := range m.lanes {
			q := m.lanes[i].queue
			if len(q) > 0 && (best < 0 || q[0].line.Time.Before(m.lanes[best].queue[0].line.Time)) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		head := m.lanes[best].queue[0]
		if !final && now.Sub(head.arrived) < m.deps.Window {
			break
		}
		m.lanes[best].queue = m.lanes[best].queue[1:]
		m.seq++
		head.line.Seq = m.seq
		batch = append(batch, head.line)
	}
	return batch
}

func (m *logMerger) allCaughtUp() bool {
	for _, l := range m.lanes {
		if !l.caughtUp {
			return false
		}
	}
	return true
}
