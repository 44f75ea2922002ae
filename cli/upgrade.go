package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/upgrade"
	"github.com/wmcon/wmcon/session"
)

func newUpgradeCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Bring Windows nodes to the installed operator's version (or, without an operator, the payload's)",
	}
	cmd.AddCommand(newUpgradePlanCommand(g), newUpgradeRunCommand(g))
	return cmd
}

func newUpgradePlanCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	var dir, image string
	cmd := &cobra.Command{
		Use:   "plan [--payload DIR | --payload-image REF]",
		Short: "List the Windows nodes whose version differs from the target, by MachineSet / BYOH / standalone, in order and why",
		Long: "plan compares each Windows node's windowsmachineconfig.openshift.io/version annotation with the target: the\n" +
			"installed operator's version (its CSV), or without an operator the payload's version (--payload DIR,\n" +
			"--payload-image REF). Nodes the operator owns (a Windows Machine, a windows-instances entry) are upgraded by\n" +
			"it, one at a time; standalone nodes (configured by wmcon) by wmcon upgrade run. It changes nothing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir != "" && image != "" {
				return usageErrorf("give --payload DIR or --payload-image REF, not both")
			}
			s, _, err := openFleet(cmd.Context(), g, out, nil)
			if err != nil {
				return err
			}
			defer s.Close()
			plan, _, err := upgrade.ReadUpgradePlan(cmd.Context(), s.Runner.Backends, dir, image)
			if err != nil {
				return err
			}
			if out.format == "json" {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(plan)
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), plan.Text())
			return err
		},
	}
	out.add(cmd.Flags())
	cmd.Flags().StringVar(&dir, "payload", "", "payload directory laid out like WMCO's /payload: its version is the target when no operator is installed")
	cmd.Flags().StringVar(&image, "payload-image", "", "OCI image whose /payload gives the target when no operator is installed")
	return cmd
}

func newUpgradeRunCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	var df drainFlags
	var req request.Upgrade
	cmd := &cobra.Command{
		Use:   "run [NODE…] [--max-unavailable N] [--payload DIR | --payload-image REF] | run --watch",
		Short: "Upgrade the standalone Windows nodes in place (or, with --watch, follow the operator upgrading its own)",
		Long: "run reconfigures each standalone node (configured by wmcon, not owned by the operator) through the\n" +
			"configuration engine: cordon, drain (PodDisruptionBudgets respected), stop its services, send the payload\n" +
			"files that changed, recreate and start the services, wait for a Ready heartbeat of the new kubelet, uncordon,\n" +
			"set the version annotation (last: a node stopped short of it is planned again). One node at a time unless --max-unavailable says otherwise, never two Machines\n" +
			"of one MachineSet at once and never its last healthy Machine; it stops at the first failure and says in which\n" +
			"state the node was left and how to finish. Audited. Nodes the operator owns are upgraded by it: --watch\n" +
			"follows it (which node, its steps, what holds it: a PodDisruptionBudget, an unhealthy MachineSet) and\n" +
			"changes nothing.",
		RunE: func(cmd *cobra.Command, nodes []string) error {
			req.Nodes = uniqueNodes(nodes)
			switch {
			case req.PayloadDir != "" && req.PayloadImage != "":
				return usageErrorf("give --payload DIR or --payload-image REF, not both")
			case req.MaxUnavailable < 1:
				return usageErrorf("--max-unavailable %d: at least one node must be allowed to be upgrading", req.MaxUnavailable)
			case req.Watch && len(req.Nodes) > 0:
				return usageErrorf("--watch follows every node the operator owns: name no NODE")
			}
			drain, answers, err := df.options()
			if err != nil {
				return err
			}
			req.Drain = drain
			run := func(s *session.Session, sink event.Sink) error {
				return exitFor(s.Runner.Run(cmd.Context(), req, sink))
			}
			if req.Watch {
				return g.reading(cmd, &out, run)
			}
			return g.changing(cmd, "upgrade nodes (wmcon upgrade plan shows what would change; --watch follows the operator)", &out, answers, run)
		},
	}
	fs := cmd.Flags()
	out.add(fs)
	df.add(fs)
	fs.IntVar(&req.MaxUnavailable, "max-unavailable", request.DefaultMaxUnavailable, "how many nodes may be upgrading at once")
	fs.StringVar(&req.PayloadDir, "payload", "", "payload directory laid out like WMCO's /payload (binaries and sha256sum)")
	fs.StringVar(&req.PayloadImage, "payload-image", "", "OCI image whose /payload to install (default: the installed WMCO operator's image)")
	fs.BoolVar(&req.Watch, "watch", false, "follow the operator upgrading the nodes it owns; changes nothing")
	fs.DurationVar(&req.ReadyTimeout, "ready-timeout", 10*time.Minute, "how long to wait for each node to be Ready again")
	return cmd
}
