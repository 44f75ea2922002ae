package logs

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/cluster"
)

// Reading a log through the API server's node log proxy.

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
