package logs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/remote"
)

// Reading a log over SSH: the file (followed across drops and rotations) or the Windows event log.

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

// logFiles is what reading a log file over SSH needs from the host: its end once or followed, or the whole
// file over SFTP.
type logFiles interface {
	remote.Logs
	Download(ctx context.Context, remotePath string, w io.Writer, progress func(int64)) error
}

// serviceEvents is what reading the Windows event log needs from the host.
type serviceEvents interface {
	ServiceEvents(ctx context.Context, max int) ([]remote.ServiceEvent, error)
}

// followSSH follows over SSH. remote.Tail resumes dropped connections without gaps or duplicates; its
// backlog has no end marker, so the node counts as caught up once lines stop for a moment.
func (s *nodeLogStream) followSSH(ctx context.Context, host remote.Logs) error {
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

// readWholeLog reads a log once: the last tail lines (one request), or the whole file over SFTP.
func readWholeLog(ctx context.Context, host logFiles, path string, tail int) ([]string, error) {
	if tail >= 0 {
		return host.TailOnce(ctx, path, tail)
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
func (s *nodeLogStream) runEvents(ctx context.Context, host serviceEvents) error {
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
