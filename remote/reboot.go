package remote

import (
	"context"
	"errors"
	"time"

	"github.com/wmcon/wmcon/config"
)

// RebootPhase is where a reboot is.
type RebootPhase int

// Phases reported to RebootOptions.Progress, in order.
const (
	RebootSent      RebootPhase = iota // Restart-Computer -Force sent
	RebootDown                         // the host stopped answering
	RebootWaitingUp                    // a reconnect attempt failed; Err says why
	RebootUp                           // SSH answers again, with the pinned host key
)

// RebootProgress is one progress report.
type RebootProgress struct {
	Phase   RebootPhase
	Elapsed time.Duration // since the restart was sent
	Err     error         // with RebootWaitingUp: the last attempt's error
}

// RebootOptions bound a reboot. Zero values take the defaults.
type RebootOptions struct {
	DownTimeout  time.Duration // to stop answering (default config.RebootDownTimeout)
	UpTimeout    time.Duration // to answer SSH again once down (default config.RebootUpTimeout)
	PollInterval time.Duration // between checks (default 2s)
	Progress     func(RebootProgress)
}

func (o *RebootOptions) applyDefaults() {
	if o.DownTimeout <= 0 {
		o.DownTimeout = config.RebootDownTimeout
	}
	if o.UpTimeout <= 0 {
		o.UpTimeout = config.RebootUpTimeout
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
	if o.Progress == nil {
		o.Progress = func(RebootProgress) {}
	}
}

// Reboot restarts the host with Restart-Computer -Force, waits until it goes down, then until SSH
// answers again on a new connection whose host key must still match the pin. A host that does not
// return in time gives *HostNeverCameBackError.
func (c *Client) Reboot(ctx context.Context, opts RebootOptions) error {
	if err := c.changing("reboot"); err != nil {
		return err
	}
	opts.applyDefaults()
	conn, release, err := c.acquire(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	progress := func(p RebootPhase, err error) {
		opts.Progress(RebootProgress{Phase: p, Elapsed: time.Since(start), Err: err})
	}
	_, err = c.Run(ctx, cmdRestart())
	release()
	if err != nil && !errors.Is(err, ErrConnectionLost) {
		return err // the command could not be sent: nothing is rebooting
	}
	progress(RebootSent, nil)
	if err := c.waitDown(ctx, conn, opts); err != nil {
		return err
	}
	progress(RebootDown, nil)
	return c.waitUp(ctx, opts, progress)
}

// waitDown waits for the connection that sent the restart to end, probing it with keepalives.
func (c *Client) waitDown(ctx context.Context, conn *connection, opts RebootOptions) error {
	deadline := time.NewTimer(opts.DownTimeout)
	defer deadline.Stop()
	for conn.alive() {
		probe := make(chan error, 1)
		go func() {
			_, _, err := conn.chain.client.SendRequest("keepalive@openssh.com", true, nil)
			probe <- err
		}()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return &HostStayedUpError{Host: c.Name(), Waited: opts.DownTimeout}
		case <-conn.dead:
		case err := <-probe:
			if err != nil {
				conn.chain.Close()
			} else {
				sleep(ctx, opts.PollInterval)
			}
		case <-time.After(opts.PollInterval):
			conn.chain.Close() // no answer in time: the host is going away
		}
	}
	c.Close()
	return nil
}

// waitUp dials until the host answers SSH again. A changed host key is not waited out: it is refused.
func (c *Client) waitUp(ctx context.Context, opts RebootOptions, progress func(RebootPhase, error)) error {
	upCtx, cancel := context.WithTimeout(ctx, opts.UpTimeout)
	defer cancel()
	for {
		_, release, err := c.acquire(upCtx)
		if err == nil {
			release()
			progress(RebootUp, nil)
			return nil
		}
		var mismatch *HostKeyMismatchError
		if errors.As(err, &mismatch) || ctx.Err() != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		progress(RebootWaitingUp, err)
		if !sleep(upCtx, opts.PollInterval) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &HostNeverCameBackError{Host: c.Name(), Waited: opts.UpTimeout, Err: err}
		}
	}
}

// sleep waits d or until ctx ends; it reports whether the full time passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
