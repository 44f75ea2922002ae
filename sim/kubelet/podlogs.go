package kubelet

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ContainerLogs are the logs of the containers a simulated kubelet runs, served at
// /containerLogs/<namespace>/<pod>/<container> as the kubelet serves them to the API server's pods/log,
// with its query: timestamps, sinceTime, sinceSeconds, tailLines. Pass it to StartLogServer (it has no
// node log files: /logs/ answers not found), or use LogServer.ServeContainerLogs beside a host's files.
type ContainerLogs struct {
	mu    sync.Mutex
	lines map[string][]stampedLine
	now   func() time.Time
}

type stampedLine struct {
	t    time.Time
	text string
}

// NewContainerLogs returns empty logs.
func NewContainerLogs() *ContainerLogs {
	return &ContainerLogs{lines: map[string][]stampedLine{}, now: time.Now}
}

// Append writes lines to a container's log, stamped now as the container runtime stamps them.
func (c *ContainerLogs) Append(namespace, pod, container string, lines ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := namespace + "/" + pod + "/" + container
	for _, l := range lines {
		c.lines[k] = append(c.lines[k], stampedLine{t: c.now().UTC(), text: l})
	}
}

// ReadFile makes ContainerLogs a LogFiles without node log files.
func (c *ContainerLogs) ReadFile(winPath string) ([]byte, error) { return nil, notFound(winPath) }

func (c *ContainerLogs) log(namespace, pod, container string) ([]stampedLine, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.lines[namespace+"/"+pod+"/"+container]
	return append([]stampedLine(nil), l...), ok
}

// ServeContainerLogs adds the containers' logs to a running log server.
func (s *LogServer) ServeContainerLogs(c *ContainerLogs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.containers = c
}

// containerLogHandler serves GET /containerLogs/<namespace>/<pod>/<container>.
func (s *LogServer) containerLogHandler(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c := s.containers
	s.mu.Unlock()
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if c == nil || len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	lines, ok := c.log(parts[0], parts[1], parts[2])
	if !ok {
		http.Error(w, fmt.Sprintf("container %q in pod %q is not available", parts[2], parts[1]), http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	since := time.Time{}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			http.Error(w, "sinceTime: "+err.Error(), http.StatusBadRequest)
			return
		}
		since = t
	}
	if v := q.Get("sinceSeconds"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			http.Error(w, "sinceSeconds: "+err.Error(), http.StatusBadRequest)
			return
		}
		since = c.now().Add(-time.Duration(n) * time.Second)
	}
	kept := lines[:0]
	for _, l := range lines {
		if !l.t.Before(since) {
			kept = append(kept, l)
		}
	}
	if v := q.Get("tailLines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, "tailLines: must be a number ≥ 0", http.StatusBadRequest)
			return
		}
		kept = kept[max(0, len(kept)-n):]
	}
	stamps := q.Get("timestamps") == "true" || q.Get("timestamps") == "1"
	w.Header().Set("Content-Type", "text/plain")
	for _, l := range kept {
		if stamps {
			fmt.Fprintf(w, "%s %s\n", l.t.Format(time.RFC3339Nano), l.text)
		} else {
			fmt.Fprintln(w, l.text)
		}
	}
}
