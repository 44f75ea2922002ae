package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/session"
)

func newTriageCommand(g *globalOptions) *cobra.Command {
	var (
		format  string
		restart string
		sel     selectorFlag
	)
	cmd := &cobra.Command{
		Use:   "triage NODE... | -l SELECTOR",
		Short: "Explain why a Windows node is unhappy: checks of the node, its host and known Windows limitations",
		Example: "  wmcon triage ip-127-0-1-5.ec2.internal\n" +
			"  wmcon triage NODE1 NODE2 NODE3 -o json     # several nodes at once: a JSON array of reports\n" +
			"  wmcon triage -l kubernetes.io/os=windows    # every Windows node\n" +
			"  wmcon triage NODE --restart kubelet         # start the stopped kubelet first, then check",
		Long: "triage checks Windows nodes and prints the checks likeliest cause first, each with what to do:\n" +
			"SSH to the host and its pinned host key, the state of each WMCO service on the host, the node's\n" +
			"conditions, taints and cordon, errors in the kubelet log, the EC2 metadata route (AWS), WMCO's version\n" +
			"against the node's, the Kubernetes version window, the cluster network (OVN-Kubernetes, hybrid\n" +
			"overlay, class E CIDRs, the VXLAN port on Windows Server 2019), WMCO's SSH key and recent events.\n" +
			"A host that cannot be reached makes its checks unknown; the others still run.\n\n" +
			"Several nodes are checked at once and reported one after another, in the order given.\n\n" +
			"Exit code 0 when no check fails, 4 when one does. --restart SERVICE first starts a stopped service.",
		Args: sel.args,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageErrorf("--output %q: use text or json", format)
			}
			if restart != "" {
				if err := g.refuseReadOnly("restart " + restart); err != nil {
					return err
				}
			}
			s, err := g.openSession(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			if args, err = sel.nodes(cmd.Context(), s, args); err != nil {
				return err
			}
			if restart != "" {
				for _, n := range args {
					if err := restartService(cmd.Context(), s, n, restart, &event.TextSink{W: cmd.ErrOrStderr()}); err != nil {
						return err
					}
				}
			}
			if len(args) == 1 {
				return printTriage(cmd.Context(), s, args[0], format, g.readOnly, cmd.OutOrStdout())
			}
			return printTriages(cmd.Context(), s, args, format, g.readOnly, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text, or json for the report as one JSON object")
	sel.add(cmd.Flags())
	cmd.Flags().StringVar(&restart, "restart", "", "start (or restart) this WMCO service on the node's host before the checks")
	return cmd
}

func newRestartServiceCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	cmd := &cobra.Command{
		Use:   "restart-service NODE SERVICE",
		Short: "Start a stopped WMCO service on a Windows node's host (or restart a running one) and wait until it runs",
		Long: "restart-service starts one of WMCO's services (containerd, kubelet, windows_exporter, csi-proxy,\n" +
			"hybrid-overlay-node, kube-proxy, cloud-node-manager, windows-instance-config-daemon) on the node's host over\n" +
			"SSH and waits until it runs; Windows starts its stopped dependencies first. A running service is stopped\n" +
			"and started again, which Windows refuses while services that depend on it run.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.changing(cmd, "restart "+args[1], &out, nil, func(s *session.Session, sink event.Sink) error {
				return restartService(cmd.Context(), s, args[0], args[1], sink)
			})
		},
	}
	out.add(cmd.Flags())
	return cmd
}

func restartService(ctx context.Context, s *session.Session, node, service string, sink event.Sink) error {
	return s.Runner.Run(ctx, request.RestartService{Nodes: []string{node}, Service: service}, sink)
}

func printTriage(ctx context.Context, s *session.Session, node, format string, readOnly bool, w io.Writer) error {
	r, err := s.Triage(ctx, node)
	if err != nil {
		return err
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else {
		writeReport(w, r, readOnly)
	}
	if !r.Healthy() {
		return &exitError{code: ExitCheckFailed, err: fmt.Errorf("%s: %d failing checks; the first is the likeliest cause", r.Node, r.Count(diagnosis.CheckFail))}
	}
	return nil
}

// triageConcurrency bounds how many nodes are checked at once (each opens an SSH session to its host).
const triageConcurrency = 8

// printTriages checks several nodes at once and prints their reports in the order given (JSON: one array),
// then, in text, one line naming the nodes with failing checks. A node that cannot be checked (unknown, not
// Windows) is reported and the others still are.
func printTriages(ctx context.Context, s *session.Session, nodes []string, format string, readOnly bool, w io.Writer) error {
	reports := make([]diagnosis.Report, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	sem := make(chan struct{}, triageConcurrency)
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			reports[i], errs[i] = s.Triage(ctx, n)
		}()
	}
	wg.Wait()
	var failing, broken []string
	var shown []diagnosis.Report
	for i, n := range nodes {
		switch {
		case errs[i] != nil:
			broken = append(broken, fmt.Sprintf("%s: %v", n, errs[i]))
			continue
		case !reports[i].Healthy():
			failing = append(failing, n)
		}
		shown = append(shown, reports[i])
		if format != "json" {
			writeReport(w, reports[i], readOnly)
			fmt.Fprintln(w)
		}
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(shown); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "%d nodes checked: %s\n", len(shown), triageSummary(failing))
	}
	if len(broken) > 0 {
		return fmt.Errorf("could not check %s", strings.Join(broken, "; "))
	}
	if len(failing) > 0 {
		return &exitError{code: ExitCheckFailed, err: fmt.Errorf("failing checks on %s", strings.Join(failing, ", "))}
	}
	return nil
}

func triageSummary(failing []string) string {
	if len(failing) == 0 {
		return "no failing checks"
	}
	return "failing checks on " + strings.Join(failing, ", ")
}

// changingCommands are the commands a fix may name that --read-only refuses.
var changingCommands = []string{"reboot", "drain", "cordon", "uncordon", "restart-service", "hostkey forget", "configure", "deconfigure"}

// fixText is a fix as printed: under --read-only one that names a command that changes something says the
// command needs a run without it, so the advice is not refused when followed.
func fixText(fix string, readOnly bool) string {
	if !readOnly {
		return fix
	}
	for _, c := range changingCommands {
		if strings.Contains(fix, event.Run(c)+" ") {
			return fix + " (without --read-only: this session refuses changes)"
		}
	}
	return fix
}

var statusLabels = map[diagnosis.CheckStatus]string{
	diagnosis.CheckFail: "FAIL", diagnosis.CheckWarn: "WARN", diagnosis.CheckUnknown: "????", diagnosis.CheckOK: "ok",
}

// writeReport prints the report for a terminal: one line per check, and for the checks that are not ok
// what to do and the evidence.
func writeReport(w io.Writer, r diagnosis.Report, readOnly bool) {
	subject := r.Node
	if subject == "" {
		subject = r.Cluster
	}
	fmt.Fprintf(w, "%s: %s (checked %s)\n\n", subject, r.Summary(), r.Time.Format("2006-01-02 15:04:05 MST"))
	for _, c := range r.Checks {
		fmt.Fprintf(w, "%-4s  %s: %s\n", statusLabels[c.Status], c.Title, c.Detail)
		if c.Status == diagnosis.CheckOK {
			continue
		}
		if c.Fix != "" {
			fmt.Fprintf(w, "      → %s\n", fixText(c.Fix, readOnly))
		}
		for _, e := range c.Evidence {
			fmt.Fprintf(w, "      · %s\n", strings.TrimRight(e, "\r\n"))
		}
	}
}
