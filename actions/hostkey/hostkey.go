// Package hostkey forgets the SSH host key pinned for a node's host, so the next connection pins the key
// the host presents (after a host was deliberately reinstalled).
package hostkey

import (
	"context"
	"errors"
	"fmt"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
)

func init() { actions.Register(runHostKeyForget) }

// runHostKeyForget forgets the host key pinned for the node's host, so the next connection pins the key
// the host presents.
func runHostKeyForget(ctx context.Context, b actions.Backends, req request.HostKeyForget, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Node}
	if b.HostKeys == nil {
		return r.Fail("forget", errors.New("no host key store here: forgetting a pinned key needs a cluster connection"), "")
	}
	r.Started("forget", "forgetting the pinned host key of "+req.Address)
	if err := b.HostKeys.Forget(ctx, req.Node, req.Address); err != nil {
		err = fmt.Errorf("forget the host key of %s: %w", req.Node, err)
		r.Failed("forget", err, "")
		r.Finish(event.Failed, err.Error(), "")
		return err
	}
	msg := fmt.Sprintf("forgot the pinned host key of %s (%s): the next connection pins the key it presents", req.Node, req.Address)
	r.Done("forget", msg)
	r.Finish(event.Succeeded, msg, "")
	return nil
}
