package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/session"
)

// dryRun is reboot's and drain's --dry-run: what the drain would evict and which PodDisruptionBudgets
// cover it, read without changing anything (so it runs under --read-only too). reboot says the rest of its
// procedure after the drain. A drain that could not start with these options exits 1.
func (g *globalOptions) dryRun(cmd *cobra.Command, out *outputFlags, sel *selectorFlag, args []string,
	opts request.DrainOptions, reboot bool) error {
	if out.format != "text" && out.format != "json" && out.format != "" {
		return usageErrorf("--output %q: use text or json", out.format)
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
	if reboot {
		if err := refuseLinux(cmd, s, nodes); err != nil {
			return err
		}
	}
	plans, err := s.DrainPlans(ctx, nodes, opts)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	var blocked []string
	for _, p := range plans {
		if p.Blocker != "" {
			blocked = append(blocked, p.Node)
		}
		if out.format == "json" {
			if err := json.NewEncoder(w).Encode(planJSON{DrainPlan: p, Reboot: reboot, WouldBlock: budgetNames(p.WouldBlock())}); err != nil {
				return err
			}
			continue
		}
		printPlan(w, p, reboot)
	}
	if len(blocked) > 0 {
		return fmt.Errorf("the drain could not start on %s with these options (see above): nothing was changed", strings.Join(blocked, ", "))
	}
	return nil
}

// refuseLinux stops a reboot dry run on Linux nodes, as the reboot itself would.
func refuseLinux(cmd *cobra.Command, s *session.Session, nodes []string) error {
	for _, name := range nodes {
		n, err := s.Node(cmd.Context(), name)
		if err != nil {
			return err
		}
		if !n.Windows {
			return fmt.Errorf("%s is a Linux node: wmcon reboots Windows nodes (over SSH) only", name)
		}
	}
	return nil
}

// planJSON is one node's dry run in -o json: the plan, whether it is a reboot's, and the budgets that
// would hold the drain up.
type planJSON struct {
	model.DrainPlan
	Reboot     bool     `json:"reboot"`
	WouldBlock []string `json:"wouldBlock"`
}

func budgetNames(bs []model.PlanBudget) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

// printPlan writes one node's dry run as text: the steps, each pod with its budgets, and what a blocking
// budget would mean headless.
func printPlan(w io.Writer, p model.DrainPlan, reboot bool) {
	cordon := "cordon"
	if p.Cordoned {
		cordon = "already cordoned"
	}
	fmt.Fprintf(w, "%s (dry run, nothing changed): %s, then evict %d pod(s)\n", p.Node, cordon, len(p.Pods))
	if p.Blocker != "" {
		fmt.Fprintf(w, "  %s\n", p.Blocker)
		return
	}
	covering := map[string][]string{}
	for _, b := range p.Budgets {
		for _, pod := range b.Pods {
			covering[pod] = append(covering[pod], b.Name)
		}
	}
	for _, pod := range p.Pods {
		if bs := covering[pod]; len(bs) > 0 {
			fmt.Fprintf(w, "  %s  (PodDisruptionBudget %s)\n", pod, strings.Join(bs, ", "))
		} else {
			fmt.Fprintf(w, "  %s\n", pod)
		}
	}
	if p.Skipped != "" {
		fmt.Fprintf(w, "  %s\n", strings.TrimSpace(p.Skipped))
	}
	for _, b := range p.Budgets {
		mark := "allows it"
		if b.Blocks() {
			mark = "WOULD BLOCK"
		}
		fmt.Fprintf(w, "  budget %s: %s\n", b, mark)
	}
	if len(p.WouldBlock()) > 0 {
		fmt.Fprintf(w, "  with --on-pdb abort (the default) the drain would stop there and leave %s cordoned; "+
			"--on-pdb wait waits up to --timeout; --on-pdb disable-eviction --yes-disable-eviction deletes past the budgets\n", p.Node)
	}
	if reboot {
		fmt.Fprintln(w, "  then Restart-Computer -Force over SSH, wait for SSH, fix the EC2 metadata route (AWS), wait for Ready, uncordon")
	}
}
