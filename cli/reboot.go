package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions/request"
)

func newRebootCommand(g *globalOptions) *cobra.Command {
	var (
		out            outputFlags
		df             drainFlags
		sel            selectorFlag
		maxUnavailable int
		down, up, rdy  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "reboot NODE... | -l SELECTOR",
		Short: "Gracefully reboot Windows nodes: cordon, drain, restart over SSH, wait for Ready, uncordon",
		Long: "reboot runs the documented procedure on each Windows node, showing every step as it happens:\n" +
			"cordon → drain → Restart-Computer -Force over SSH → wait for the host to go down → wait for SSH to\n" +
			"return → on AWS, re-add the EC2 metadata route if the boot lost it → wait for the node to be Ready →\n" +
			"uncordon → verify Ready and schedulable.\n\n" +
			"Nodes reboot one at a time unless --max-unavailable allows more; after a failure no further reboot\n" +
			"starts. Every reboot is recorded in the audit log ($XDG_STATE_HOME/wmcon/audit.log, or\n" +
			"~/.local/state/wmcon/audit.log; WMCON_AUDIT_LOG overrides). Exit code 3 means a node was left\n" +
			"half-done (for example cordoned); the output says how to finish.",
		Args: sel.args,
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxUnavailable < 1 {
				return usageErrorf("--max-unavailable %d: at least one node must be allowed to reboot", maxUnavailable)
			}
			drain, answers, err := df.options()
			if err != nil {
				return err
			}
			if df.dryRun {
				return g.dryRun(cmd, &out, &sel, args, drain, true)
			}
			if err := g.refuseReadOnly("reboot"); err != nil {
				return err
			}
			sink, err := out.sink(cmd.OutOrStdout(), answers)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			s, err := g.openSession(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			nodes, err := sel.nodes(ctx, s, args)
			if err != nil {
				return err
			}
			req := request.Reboot{Nodes: nodes, Drain: drain, MaxUnavailable: maxUnavailable,
				DownTimeout: down, UpTimeout: up, ReadyTimeout: rdy}
			return cancellable(ctx, func() error { return exitFor(s.Runner.Run(ctx, req, sink)) })
		},
	}
	fs := cmd.Flags()
	out.add(fs)
	sel.add(fs)
	df.add(fs)
	def := request.Reboot{}.WithDefaults() // the defaults' one place
	fs.IntVar(&maxUnavailable, "max-unavailable", def.MaxUnavailable, "how many nodes may be rebooting at once")
	fs.DurationVar(&down, "down-timeout", def.DownTimeout, "how long the host may take to go down after Restart-Computer")
	fs.DurationVar(&up, "up-timeout", def.UpTimeout, "how long the host may take to answer SSH again")
	fs.DurationVar(&rdy, "ready-timeout", def.ReadyTimeout, "how long the node may take to be Ready once SSH is back")
	return cmd
}
