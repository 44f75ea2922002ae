package logs

import (
	"context"
	"fmt"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
)

// One node's log stream: which source it reads (the API server's node log proxy or SSH), and how its
// lines reach the merger.

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
