package cli

import (
	"encoding/json"
	"time"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/session"
)

func newConfigureCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	var req request.Configure
	var rs renderServicesFlags
	cmd := &cobra.Command{
		Use:   "configure (NODE | --address ADDR [--user NAME] | --render-services --platform P --api-server URL)",
		Short: "Make a Windows host a Ready worker node over SSH, as WMCO does (or show the plan with --dry-run)",
		Long: "configure reads the cluster's facts and the payload, reads what the host already has, and applies only\n" +
			"the difference: directories, the payload's binaries (SHA-256 checked, unchanged files skipped), kubelet.conf,\n" +
			"the bootstrap kubeconfig and CAs, containerd's configuration, the services in dependency order. It then\n" +
			"approves this host's kubelet CSRs (and no others), labels and annotates the Node and waits until it is Ready.\n" +
			"A re-run changes nothing on a configured host; after a failure it resumes where the host stands.\n" +
			"--dry-run prints every directory, file and service command line it would apply and changes nothing.\n" +
			"The payload is --payload DIR (laid out like WMCO's /payload, with sha256sum), --payload-image REF, or by\n" +
			"default the installed WMCO operator's image, pulled with the cluster pull secret and cached by digest.\n" +
			"A host the operator owns (a Windows Machine, or a windows-instances entry) is left to it: --watch follows\n" +
			"the operator's progress instead (Machine phase, the Node, its CSRs and events, the version annotation, Ready).\n" +
			"--render-services prints, with no cluster, the services data wmcon applies without WMCO, in the format of\n" +
			"WMCO's windows-services-<version> ConfigMap (-o json: its .data, to diff against the cluster's).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rs.render {
				if len(args) > 0 || req.Address != "" || req.User != "" || req.DryRun || req.Watch || req.PayloadDir != "" || req.PayloadImage != "" {
					return usageErrorf("--render-services reads only --platform, --api-server and --vxlan-port: drop the NODE, --address, --user, --dry-run, --watch and payload flags")
				}
				return rs.write(cmd.OutOrStdout(), out.format)
			}
			if rs.platform != "" || rs.apiServer != "" || rs.vxlanPort != "" {
				return usageErrorf("--platform, --api-server and --vxlan-port go with --render-services (a host's configuration reads them from the cluster)")
			}
			if len(args) == 1 {
				req.Node = args[0]
			}
			switch {
			case (req.Node == "") == (req.Address == ""):
				return usageErrorf("name a NODE or give --address ADDR (not both)")
			case req.Node != "" && req.User != "":
				return usageErrorf("--user goes with --address; a node's host is reached as its SSH settings say")
			case req.PayloadDir != "" && req.PayloadImage != "":
				return usageErrorf("give --payload DIR or --payload-image REF, not both")
			}
			if !req.DryRun && !req.Watch {
				if err := g.refuseReadOnly("configure a host (--dry-run shows the plan and changes nothing)"); err != nil {
					return err
				}
			}
			return g.reading(cmd, &out, func(s *session.Session, sink event.Sink) error {
				if req.DryRun && !req.Watch {
					return printConfigurePlan(cmd, s, req, sink, out.format)
				}
				// A first signal stops it between steps; the Runner audits it (a watch changes nothing).
				return exitFor(cancellable(cmd.Context(), func() error { return s.Runner.Run(cmd.Context(), req, sink) }))
			})
		},
	}
	fs := cmd.Flags()
	out.add(fs)
	fs.StringVar(&req.Address, "address", "", "the host's address (IPv4 or DNS name, optionally :port) when it has no Node yet")
	fs.StringVar(&req.User, "user", "", "SSH user for --address (default Administrator, capi on Azure)")
	fs.StringVar(&req.PayloadDir, "payload", "", "payload directory laid out like WMCO's /payload (binaries and sha256sum)")
	fs.StringVar(&req.PayloadImage, "payload-image", "", "OCI image whose /payload to install (default: the installed WMCO operator's image)")
	fs.BoolVar(&req.DryRun, "dry-run", false, "print the plan (every directory, file and service command line) and change nothing")
	fs.BoolVar(&req.Watch, "watch", false, "on a host the operator owns, follow its progress (Machine phase, Node, CSRs, events, version, Ready) instead; changes nothing")
	fs.DurationVar(&req.CSRTimeout, "csr-timeout", 5*time.Minute, "how long to wait for each of the kubelet's certificate requests")
	fs.DurationVar(&req.ReadyTimeout, "ready-timeout", 10*time.Minute, "how long to wait for the Node to register and to be Ready")
	rs.add(fs)
	return cmd
}

// printConfigurePlan runs a dry run, which changes nothing, and prints its plan: the one configure that
// calls the engine itself rather than the Runner, since only that call returns the plan as a value.
func printConfigurePlan(cmd *cobra.Command, s *session.Session, req request.Configure, sink event.Sink, format string) error {
	res, err := configure.ConfigureHost(cmd.Context(), s.Runner.Backends, req, sink)
	if err != nil {
		return err
	}
	if format == "json" {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(res.Plan)
	}
	return res.Plan.Write(cmd.OutOrStdout())
}

func newDeconfigureCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	var df drainFlags
	cmd := &cobra.Command{
		Use:   "deconfigure NODE",
		Short: "Reverse configure: cordon, drain, remove the node services, files and HNS networks, delete the Node",
		Long: "deconfigure does what WMCO does when a BYOH host is removed: it cordons and drains the node, stops and\n" +
			"deletes the node services (dependents first), removes the hybrid overlay's HNS networks, C:\\k, the kubelet's\n" +
			"certificates, CNI state and the services' log directories, and deletes the Node. The host stays reachable over\n" +
			"SSH. Running it again skips what is already gone. A host the operator owns is refused.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			drain, answers, err := df.options()
			if err != nil {
				return err
			}
			return g.changing(cmd, "deconfigure a host", &out, answers, func(s *session.Session, sink event.Sink) error {
				return exitFor(s.Runner.Run(cmd.Context(), request.Deconfigure{Node: args[0], Drain: drain}, sink))
			})
		},
	}
	out.add(cmd.Flags())
	df.add(cmd.Flags())
	return cmd
}
