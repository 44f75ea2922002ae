// Package logs streams Windows services' logs from nodes (through the API server's node proxy, else over
// SSH), merged in time order, for the console's log view and wmcon logs.
package logs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/config"
)

// LogDeps are what StreamLogs reads through.
type LogDeps struct {
	Kube     kubernetes.Interface // nil or a fake clientset: SSH only
	Resolver actions.HostResolver
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
		if svc == "wicd" || svc == "WICD" {
			svc = "windows-instance-config-daemon"
		}
		if _, ok := config.ServiceByName(svc); svc != "" && !ok {
			return logTarget{}, fmt.Errorf("unknown service %q in %q: events:<service> takes one of WMCO's services (%s)", svc, name, strings.Join(wmcoServiceNames(), ", "))
		}
		return logTarget{name: name, events: true, filter: svc}, nil
	}
	s, ok := config.ServiceByName(name)
	if !ok || s.LogFile == "" {
		return logTarget{}, fmt.Errorf("unknown log %q: choose one of %s (or events:<service>)", name, strings.Join(logline.Services(), ", "))
	}
	return logTarget{name: name, service: s}, nil
}

func wmcoServiceNames() []string {
	var out []string
	for _, s := range config.Services {
		out = append(out, s.Name)
	}
	return out
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
// chooseSource) and reported, with reconnections and rotations, as Events to the notices Sink. Lines of several
// nodes are merged in time order within LogDeps.Window. out and notices are called from one goroutine
// at a time and must not block. The error joins the nodes that failed; cancelling ctx is not an error.
func StreamLogs(ctx context.Context, req logline.Request, deps LogDeps, out func([]logline.Line), notices event.Sink) error {
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
	emit event.Sink
	mu   *sync.Mutex
}

func (s *noticeSink) Emit(e event.Event) {
	if s.emit == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit.Emit(e)
}

func (s *noticeSink) Ask(context.Context, event.Question) (string, error) {
	return "", errors.New("reading logs asks nothing")
}
