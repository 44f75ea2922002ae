package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/session"
)

func newLogsCommand(g *globalOptions) *cobra.Command {
	var (
		out     outputFlags
		service string
		follow  bool
		tail    int
		since   time.Duration
		via     string
	)
	cmd := &cobra.Command{
		Use:   "logs NODE...",
		Short: "Show or follow a Windows service's log on nodes (kubelet by default)",
		Long: "logs prints the log of a WMCO service on Windows nodes: " + strings.Join(logline.Services(), ", ") + ".\n" +
			"\"wicd\" is windows-instance-config-daemon; \"events\" is the Windows event log of the services\n" +
			"(Get-WinEvent, over SSH only), \"events:kubelet\" keeps one service's events.\n\n" +
			"Logs are read through the API server's node log proxy (GET /api/v1/nodes/NODE/proxy/logs/...) when\n" +
			"you may get nodes/proxy, which needs no SSH, and over SSH otherwise; --via forces one. Which source\n" +
			"is used is said on stderr. With several nodes, lines are merged in time order and prefixed with\n" +
			"[node]. -f follows until ctrl+c, across dropped connections and log rotations.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			names = uniqueNodes(names)
			req := logline.Request{Service: service, Follow: follow, Tail: tail, Since: since, Via: logline.Source(via)}
			if err := checkLogFlags(req, names, out.format); err != nil {
				return err
			}
			ctx := cmd.Context()
			s, err := g.openSession(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			if req.Nodes, err = windowsNodes(ctx, s, names); err != nil {
				return err
			}
			p := &logPrinter{w: bufio.NewWriter(cmd.OutOrStdout()), errW: cmd.ErrOrStderr(), json: out.format == "json", prefix: len(names) > 1}
			deps := s.LogDeps()
			err = actions.StreamLogs(ctx, req, deps, p.lines, event.EmitFunc(p.notice))
			p.flush()
			if ctx.Err() != nil {
				return nil // ctrl+c ends a follow: not a failure
			}
			return err
		},
	}
	fs := cmd.Flags()
	out.add(fs)
	fs.StringVar(&service, "service", "kubelet", "which log: a WMCO service, wicd, events or events:<service>")
	fs.BoolVarP(&follow, "follow", "f", false, "keep printing new lines until interrupted")
	fs.IntVar(&tail, "tail", -1, "existing lines per node to print first (-1: the whole log)")
	fs.DurationVar(&since, "since", 0, "only lines newer than this, e.g. 10m or 2h (lines with a time stamp)")
	fs.StringVar(&via, "via", "", "where to read logs: api (the node log proxy) or ssh (default: api when allowed, else ssh)")
	return cmd
}

// checkLogFlags refuses bad flags before connecting to anything.
func checkLogFlags(req logline.Request, names []string, format string) error {
	if format != "text" && format != "json" && format != "" {
		return usageErrorf("--output %q: use text or json", format)
	}
	if req.Tail < -1 || req.Tail > math.MaxInt32 {
		return usageErrorf("--tail %d: give a number of lines from 0 to %d, or -1 for the whole log", req.Tail, math.MaxInt32)
	}
	for _, n := range names {
		req.Nodes = append(req.Nodes, model.NodeInfo{Name: n})
	}
	if err := actions.ValidateLogRequest(req); err != nil {
		return &usageError{err: err}
	}
	return nil
}

// uniqueNodes drops repeated node names, keeping the first of each: naming a node twice must not act on it
// (or print its log) twice.
func uniqueNodes(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := names[:0:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// windowsNodes looks the named nodes up, refusing Linux ones.
func windowsNodes(ctx context.Context, s *session.Session, names []string) ([]model.NodeInfo, error) {
	var out []model.NodeInfo
	var errs []error
	for _, name := range names {
		n, err := s.Node(ctx, name)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !n.Windows:
			errs = append(errs, fmt.Errorf("%s is not a Windows node: wmcon reads the logs of Windows nodes only (use oc adm node-logs for others)", name))
		default:
			out = append(out, n)
		}
	}
	return out, errors.Join(errs...)
}

// logPrinter prints lines on stdout and notices on stderr (so stdout stays a clean log), as text or JSON.
type logPrinter struct {
	mu     sync.Mutex
	w      *bufio.Writer
	errW   io.Writer
	json   bool
	prefix bool
}

func (p *logPrinter) lines(lines []logline.Line) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range lines {
		switch {
		case p.json:
			b, _ := json.Marshal(l)
			p.w.Write(b)
			p.w.WriteByte('\n')
		case p.prefix:
			fmt.Fprintf(p.w, "[%s] %s\n", l.Node, l.Text)
		default:
			p.w.WriteString(l.Text)
			p.w.WriteByte('\n')
		}
	}
	p.w.Flush()
}

func (p *logPrinter) notice(e event.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		b, _ := json.Marshal(e)
		fmt.Fprintln(p.errW, string(b))
		return
	}
	fmt.Fprintln(p.errW, event.Format(e))
}

func (p *logPrinter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.w.Flush()
}
