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

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/actions/logs"
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
		sel     selectorFlag
	)
	cmd := &cobra.Command{
		Use:   "logs (NODE... | -l SELECTOR)",
		Short: "Show or follow a Windows service's log on nodes (kubelet by default)",
		Long: "logs prints the log of a WMCO service on Windows nodes: " + strings.Join(logline.Services(), ", ") + ".\n" +
			"\"wicd\" is windows-instance-config-daemon; \"events\" is the Windows event log of the services\n" +
			"(Get-WinEvent, over SSH only), \"events:kubelet\" keeps one service's events.\n\n" +
			"Logs are read through the API server's node log proxy (GET /api/v1/nodes/NODE/proxy/logs/...) when\n" +
			"you may get nodes/proxy, which needs no SSH, and over SSH otherwise; --via forces one. Which source\n" +
			"is used is said on stderr. With several nodes, lines are merged in time order and prefixed with\n" +
			"[node]. -f follows until ctrl+c, across dropped connections and log rotations. With -l, the\n" +
			"Windows nodes matching the selector (Linux ones it matches are left out, and said so).",
		Example: `  wmcon logs ip-127-0-1-23.ec2.internal --tail 50
  wmcon logs -l kubernetes.io/os=windows -f
  wmcon logs NODE --service containerd --since 10m
  wmcon logs NODE --service events:kubelet --via ssh -o json`,
		Args: sel.args,
		RunE: func(cmd *cobra.Command, names []string) error {
			names = uniqueNodes(names)
			req := logline.Request{Service: service, Follow: follow, Tail: tail, Since: since, Via: logline.Source(via)}
			checked := names
			if sel.selector != "" {
				checked = []string{"-l " + sel.selector} // the nodes are looked up later; check the rest now
			}
			if err := checkLogFlags(req, checked, out.format); err != nil {
				return err
			}
			ctx := cmd.Context()
			s, err := g.openSession(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			if sel.selector != "" {
				if req.Nodes, err = selectedWindowsNodes(ctx, s, &sel, cmd.ErrOrStderr()); err != nil {
					return err
				}
				names = nodeNames(req.Nodes)
			} else if req.Nodes, err = windowsNodes(ctx, s, names); err != nil {
				return err
			}
			p := &logPrinter{w: bufio.NewWriter(cmd.OutOrStdout()), errW: cmd.ErrOrStderr(), json: out.format == "json", prefix: len(names) > 1}
			deps := s.LogDeps()
			err = logs.StreamLogs(ctx, req, deps, p.lines, event.EmitFunc(p.notice))
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
	sel.add(fs)
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
	if err := logs.ValidateLogRequest(req); err != nil {
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

// selectedWindowsNodes are the Windows nodes matching the selector, in name order. Linux nodes it matches
// are left out with a notice (logs reads Windows services); matching only Linux nodes is a usage error.
func selectedWindowsNodes(ctx context.Context, s *session.Session, sel *selectorFlag, errW io.Writer) ([]model.NodeInfo, error) {
	names, err := sel.nodes(ctx, s, nil)
	if err != nil {
		return nil, err
	}
	var out []model.NodeInfo
	var linux []string
	for _, name := range names {
		n, err := s.Node(ctx, name)
		switch {
		case err != nil:
			return nil, err
		case n.Windows:
			out = append(out, n)
		default:
			linux = append(linux, name)
		}
	}
	if len(out) == 0 {
		return nil, usageErrorf("-l %q matches only Linux nodes (%s): wmcon reads the logs of Windows nodes; add kubernetes.io/os=windows to the selector",
			sel.selector, strings.Join(linux, ", "))
	}
	if len(linux) > 0 {
		fmt.Fprintf(errW, "leaving out %d Linux node(s) matching -l %q: %s\n", len(linux), sel.selector, strings.Join(linux, ", "))
	}
	return out, nil
}

func nodeNames(nodes []model.NodeInfo) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
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
