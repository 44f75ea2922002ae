package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/nodeops"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/session"
)

// outputFlags choose between text lines and JSON lines.
type outputFlags struct{ format string }

func (o *outputFlags) add(fs *pflag.FlagSet) {
	fs.StringVarP(&o.format, "output", "o", "text", "output format: text, or json for one JSON object per event")
}

func (o *outputFlags) sink(w io.Writer, answers map[string]string) (*event.TextSink, error) {
	switch o.format {
	case "text", "":
		return &event.TextSink{W: w, Answers: answers}, nil
	case "json":
		return &event.TextSink{W: w, JSON: true, Answers: answers}, nil
	}
	return nil, usageErrorf("--output %q: use text or json", o.format)
}

// drainFlags are `oc adm drain`'s options, defaulting to the documented reboot procedure's.
type drainFlags struct {
	gracePeriod        int
	timeout            time.Duration
	ignoreDaemonSets   bool
	deleteEmptyDirData bool
	force              bool
	disableEviction    bool
	onPDB              string
	yesDisableEviction bool
	dryRun             bool
}

func (d *drainFlags) add(fs *pflag.FlagSet) {
	def := request.DefaultDrainOptions()
	fs.IntVar(&d.gracePeriod, "grace-period", def.GracePeriodSeconds, "seconds each pod gets to terminate; -1 uses the pod's own terminationGracePeriodSeconds")
	fs.DurationVar(&d.timeout, "timeout", def.Timeout, "give up draining a node after this long (0: no limit)")
	fs.BoolVar(&d.ignoreDaemonSets, "ignore-daemonsets", def.IgnoreDaemonSets, "leave DaemonSet-managed pods (they would come back anyway)")
	fs.BoolVar(&d.deleteEmptyDirData, "delete-emptydir-data", def.DeleteEmptyDirData, "drain pods that use emptyDir volumes (their data is lost)")
	fs.BoolVar(&d.force, "force", def.Force, "also delete pods that no controller manages")
	fs.BoolVar(&d.disableEviction, "disable-eviction", false, "delete pods instead of evicting them, bypassing PodDisruptionBudgets")
	fs.StringVar(&d.onPDB, "on-pdb", event.ChoiceAbort,
		"when a PodDisruptionBudget blocks an eviction: abort (node stays cordoned), wait (until --timeout), or disable-eviction (needs --yes-disable-eviction)")
	fs.BoolVar(&d.yesDisableEviction, "yes-disable-eviction", false, "confirm --on-pdb=disable-eviction: delete the blocked pods past their budgets")
	fs.BoolVar(&d.dryRun, "dry-run", false, "change nothing: show the pods that would be evicted and the PodDisruptionBudgets covering them")
}

// options turns the flags into drain options and the answers to give a PodDisruptionBudget question.
func (d *drainFlags) options() (request.DrainOptions, map[string]string, error) {
	opts := request.DrainOptions{GracePeriodSeconds: d.gracePeriod, Timeout: d.timeout, IgnoreDaemonSets: d.ignoreDaemonSets,
		DeleteEmptyDirData: d.deleteEmptyDirData, Force: d.force, DisableEviction: d.disableEviction}
	switch d.onPDB {
	case event.ChoiceAbort, event.ChoiceWait:
	case event.ChoiceDisableEviction:
		if !d.yesDisableEviction {
			return opts, nil, usageErrorf("--on-pdb=disable-eviction deletes pods past their PodDisruptionBudgets: confirm it with --yes-disable-eviction")
		}
	default:
		return opts, nil, usageErrorf("--on-pdb %q: use abort, wait or disable-eviction", d.onPDB)
	}
	if d.timeout < 0 {
		return opts, nil, usageErrorf("--timeout must not be negative")
	}
	answers := map[string]string{"drain": d.onPDB, "reboot": d.onPDB}
	return opts, answers, nil
}

// changing is how a command that changes the cluster or a host starts: refused under --read-only, then
// a sink for its events (answers pre-answer its questions) and a session, closed when f returns.
func (g *globalOptions) changing(cmd *cobra.Command, verb string, out *outputFlags, answers map[string]string,
	f func(*session.Session, event.Sink) error) error {
	if err := g.refuseReadOnly(verb); err != nil {
		return err
	}
	sink, err := out.sink(cmd.OutOrStdout(), answers)
	if err != nil {
		return err
	}
	s, err := g.openSession(cmd.Context())
	if err != nil {
		return err
	}
	defer s.Close()
	return cancellable(cmd.Context(), func() error { return f(s, sink) })
}

// refuseReadOnly stops a changing command under --read-only.
func (g *globalOptions) refuseReadOnly(verb string) error {
	if g.readOnly {
		return fmt.Errorf("--read-only is set: refusing to %s", verb)
	}
	return nil
}

// exitFor maps an action's error to the command's: ExitHalfDone when a node was left half-done.
func exitFor(err error) error {
	if err == nil {
		return nil
	}
	var partial *nodeops.PartialError
	var changed *configure.ChangedError
	if errors.As(err, &partial) || errors.As(err, &changed) {
		return &exitError{code: exitPartial, err: err} // the output says how to finish, or to run it again
	}
	return err
}

// nodeOpsCommand builds cordon and uncordon: the same shape, one request each.
func nodeOpsCommand(g *globalOptions, use, short string, req func(nodes []string) request.Request) *cobra.Command {
	var out outputFlags
	var sel selectorFlag
	cmd := &cobra.Command{
		Use:   use + " NODE... | -l SELECTOR",
		Short: short,
		Args:  sel.args,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.changing(cmd, use, &out, nil, func(s *session.Session, sink event.Sink) error {
				nodes, err := sel.nodes(cmd.Context(), s, args)
				if err != nil {
					return err
				}
				return exitFor(s.Runner.Run(cmd.Context(), req(nodes), sink))
			})
		},
	}
	out.add(cmd.Flags())
	sel.add(cmd.Flags())
	return cmd
}

func newCordonCommand(g *globalOptions) *cobra.Command {
	return nodeOpsCommand(g, "cordon", "Mark nodes unschedulable (any node)",
		func(nodes []string) request.Request { return request.Cordon{Nodes: nodes} })
}

func newUncordonCommand(g *globalOptions) *cobra.Command {
	return nodeOpsCommand(g, "uncordon", "Mark nodes schedulable again (any node)",
		func(nodes []string) request.Request { return request.Uncordon{Nodes: nodes} })
}

func newDrainCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	var df drainFlags
	var sel selectorFlag
	cmd := &cobra.Command{
		Use:   "drain NODE... | -l SELECTOR",
		Short: "Cordon nodes and evict their pods, as oc adm drain does (any node)",
		Long: "drain cordons each node and evicts its pods with kubectl's drain library, one node after another; it\n" +
			"stops at the first node that cannot be drained. The defaults are the documented reboot procedure's:\n" +
			"--ignore-daemonsets --delete-emptydir-data --force, with eviction. The node stays cordoned afterwards:\n" +
			"run wmcon uncordon NODE when done. Exit code 3 means a node was left cordoned but not fully drained.",
		Args: sel.args,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, answers, err := df.options()
			if err != nil {
				return err
			}
			if df.dryRun {
				return g.dryRun(cmd, &out, &sel, args, opts, false)
			}
			return g.changing(cmd, "drain", &out, answers, func(s *session.Session, sink event.Sink) error {
				nodes, err := sel.nodes(cmd.Context(), s, args)
				if err != nil {
					return err
				}
				return exitFor(s.Runner.Run(cmd.Context(), request.Drain{Nodes: nodes, Options: opts}, sink))
			})
		},
	}
	out.add(cmd.Flags())
	sel.add(cmd.Flags())
	df.add(cmd.Flags())
	return cmd
}
