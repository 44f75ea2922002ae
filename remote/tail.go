package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// TailNotice marks events that are not file lines.
type TailNotice int

// Notices a tail reports besides lines.
const (
	TailLine         TailNotice = iota // Line holds the next line of the file
	TailReconnecting                   // the connection dropped; Err says why; lines are not lost
	TailResumed                        // following again from where it stopped
	TailRotated                        // the file became shorter than what was delivered: restarted at its first line
)

// TailEvent is a line of the followed file or a notice about the follow itself.
type TailEvent struct {
	Notice TailNotice
	Line   string
	Err    error
}

// TailOptions tune Tail.
type TailOptions struct {
	Last          int           // existing lines to deliver first: 0 = only new lines, <0 = the whole file
	RetryInterval time.Duration // between reconnect attempts (default 1s)
}

// Tail follows a file on the host, calling ev for each line and notice, until ctx is cancelled (then it
// returns ctx.Err()) or the file cannot be read. It survives dropped connections without duplicates or
// gaps: it counts the lines it delivered (N) and resumes with Get-Content -Wait | Select-Object -Skip N;
// if the file became shorter than N it was rotated, so the tail restarts at line 0 and says so.
func (c *Client) Tail(ctx context.Context, path string, opts TailOptions, ev func(TailEvent)) error {
	t := &tailer{c: c, path: path, ev: ev, retry: opts.RetryInterval}
	if t.retry <= 0 {
		t.retry = time.Second
	}
	count, err := t.lineCount(ctx)
	if err != nil {
		return err
	}
	if opts.Last >= 0 {
		t.pos = max(0, count-opts.Last)
	}
	for {
		err := t.follow(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var cmdErr *CommandError
		if errors.As(err, &cmdErr) {
			return err
		}
		ev(TailEvent{Notice: TailReconnecting, Err: err})
		if err := t.resume(ctx); err != nil {
			return err
		}
	}
}

type tailer struct {
	c     *Client
	path  string
	ev    func(TailEvent)
	retry time.Duration
	pos   int // lines delivered so far, counted from the top of the file
}

// follow streams the file from pos until the session ends. Only complete lines count as delivered, so
// a line cut by a dropped connection is sent again whole.
func (t *tailer) follow(ctx context.Context) error {
	var stderr strings.Builder
	stdout := newLineWriter(false, func(l Line) {
		t.pos++
		t.ev(TailEvent{Notice: TailLine, Line: l.Text})
	})
	exit, err := t.c.exec(ctx, cmdFollow(t.path, t.pos), stdout, &stderr)
	if err != nil {
		return err
	}
	if exit != 0 {
		return &CommandError{Host: t.c.Name(), Command: cmdFollow(t.path, t.pos), Exit: exit, Stderr: stderr.String()}
	}
	return fmt.Errorf("%s: follow of %s ended", t.c.Name(), t.path)
}

// resume waits until the host answers again and checks for rotation.
func (t *tailer) resume(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(t.retry):
		}
		count, err := t.lineCount(ctx)
		var cmdErr *CommandError
		if errors.As(err, &cmdErr) {
			return err
		}
		if err != nil {
			t.ev(TailEvent{Notice: TailReconnecting, Err: err})
			continue
		}
		if count < t.pos {
			t.pos = 0
			t.ev(TailEvent{Notice: TailRotated})
		}
		t.ev(TailEvent{Notice: TailResumed})
		return nil
	}
}

func (t *tailer) lineCount(ctx context.Context) (int, error) {
	out, err := t.c.RunOK(ctx, cmdLineCount(t.path))
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("%s: line count of %s: unexpected output %q", t.c.Name(), t.path, out)
	}
	return n, nil
}

// TailOnce returns the last n lines of a file.
func (c *Client) TailOnce(ctx context.Context, path string, n int) ([]string, error) {
	out, err := c.RunOK(ctx, cmdTailOnce(path, n))
	if err != nil {
		return nil, err
	}
	return lines(out), nil
}

var _ io.Writer = (*lineWriter)(nil)
