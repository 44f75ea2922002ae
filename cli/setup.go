package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	olm "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/operator"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/localfile"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/session"
)

// run is changing with one request, run by the session's Runner (which audits it).
func (g *globalOptions) run(cmd *cobra.Command, verb string, out *outputFlags, answers map[string]string,
	req func(*session.Session) request.Request) error {
	return g.changing(cmd, verb, out, answers, func(s *session.Session, sink event.Sink) error {
		return s.Runner.Run(cmd.Context(), req(s), sink)
	})
}

// reading runs a command that changes nothing.
func (g *globalOptions) reading(cmd *cobra.Command, out *outputFlags, f func(*session.Session, event.Sink) error) error {
	sink, err := out.sink(cmd.OutOrStdout(), nil)
	if err != nil {
		return err
	}
	s, err := g.openSession(cmd.Context())
	if err != nil {
		return err
	}
	defer s.Close()
	return f(s, sink)
}

func yesAnswers(yes bool, actionsConfirmed map[string]string) map[string]string {
	if !yes {
		return nil
	}
	return actionsConfirmed
}

func newOperatorCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "operator", Short: "Install, inspect or uninstall WMCO through OLM"}
	var out outputFlags
	var in request.OperatorInstall
	var approval string
	var approve bool
	install := &cobra.Command{
		Use:   "install",
		Short: "Subscribe to WMCO through OLM (namespace, OperatorGroup, Subscription) and follow the install",
		Long: "install creates the namespace " + config.OperatorNamespace + " (labelled for cluster monitoring), an\n" +
			"OperatorGroup targeting it and a Subscription, then with --wait follows the InstallPlan and the CSV until it\n" +
			"Succeeded, or says why not. A Manual InstallPlan is approved only with --approve. On an installed operator it\n" +
			"changes nothing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if approval != string(olm.ApprovalAutomatic) && approval != string(olm.ApprovalManual) {
				return usageErrorf("--approval %q: use Automatic or Manual", approval)
			}
			in.Approval = approval
			answers := yesAnswers(approve, map[string]string{request.ActionOperator: event.ChoiceApprove})
			return g.run(cmd, "install the operator", &out, answers, func(*session.Session) request.Request { return in })
		},
	}
	install.Flags().StringVar(&in.Channel, "channel", cluster.DefaultChannel, "the operator channel")
	install.Flags().StringVar(&approval, "approval", string(olm.ApprovalAutomatic), "InstallPlan approval: Automatic or Manual")
	install.Flags().StringVar(&in.Source, "source", cluster.DefaultCatalogSource, "CatalogSource (OKD: community-operators)")
	install.Flags().StringVar(&in.SourceNamespace, "source-namespace", cluster.MarketplaceNamespace, "the CatalogSource's namespace")
	install.Flags().BoolVar(&in.Wait, "wait", false, "follow the InstallPlan and CSV until the operator runs")
	install.Flags().DurationVar(&in.Timeout, "timeout", 0, "give up waiting after this long (default 10m)")
	install.Flags().BoolVar(&approve, "approve", false, "approve a Manual InstallPlan that waits for approval")
	out.add(install.Flags())

	var sformat string
	status := &cobra.Command{Use: "status", Short: "Show WMCO's OLM objects, its pods and the last lines of its log (read-only)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkReportFormat(sformat); err != nil {
				return err
			}
			s, err := g.openSession(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			var text statusLines
			st, err := operator.OperatorStatus(cmd.Context(), cluster.NewOLM(s.Clients), text.sink())
			switch {
			case err != nil:
				return err
			case sformat == "json":
				return writeJSON(g.stdout, newOperatorReport(st))
			}
			return text.write(g.stdout)
		}}
	addReportFormat(status.Flags(), &sformat)

	var uout outputFlags
	var yes bool
	uninstall := &cobra.Command{Use: "uninstall", Short: "Delete WMCO's Subscription and CSV (Windows nodes stay as they are)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			answers := yesAnswers(yes, map[string]string{request.ActionOperatorUninstall: event.ChoiceUninstall})
			return g.run(cmd, "uninstall the operator", &uout, answers, func(*session.Session) request.Request { return request.OperatorUninstall{} })
		}}
	uninstall.Flags().BoolVar(&yes, "yes", false, "confirm the uninstall")
	uout.add(uninstall.Flags())
	cmd.AddCommand(install, status, uninstall)
	return cmd
}

func newKeyCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "The SSH key WMCO uses (cloud-private-key) and windows-user-data"}
	var showFormat string
	show := &cobra.Command{Use: "show", Short: "Describe cloud-private-key and the key in windows-user-data (never the key itself)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkReportFormat(showFormat); err != nil {
				return err
			}
			s, err := g.openSession(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := cluster.NewKeys(s.Clients).State(cmd.Context())
			if err != nil {
				return err
			}
			if showFormat == "json" {
				return writeJSON(g.stdout, newKeyReport(st))
			}
			return printKeyState(g, st)
		}}
	addReportFormat(show.Flags(), &showFormat)
	var out outputFlags
	var from string
	var yes bool
	create := &cobra.Command{Use: "create --from-file PATH", Short: "Create or replace cloud-private-key from a private key file", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return usageErrorf("--from-file is required: the private key file (e.g. ~/.ssh/id_ed25519)")
			}
			pemBytes, err := localfile.Read(from, localfile.MaxKey)
			if err != nil {
				return fmt.Errorf("read the key: %w", err)
			}
			if _, _, err := cluster.ValidatePrivateKey(pemBytes); err != nil {
				return fmt.Errorf("%s: %w", from, err)
			}
			answers := yesAnswers(yes, map[string]string{request.ActionKeyInstall: event.ChoiceReplace})
			return g.run(cmd, "install an SSH key", &out, answers, func(*session.Session) request.Request { return request.KeyInstall{File: from} })
		}}
	create.Flags().StringVar(&from, "from-file", "", "the private key file")
	create.Flags().BoolVar(&yes, "yes", false, "confirm replacing an existing, different key")
	out.add(create.Flags())

	var gout outputFlags
	var kind, outPath string
	var gyes bool
	generate := &cobra.Command{Use: "generate --out PATH", Short: "Generate a key pair locally (0600, never overwriting) and install it", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kind != "ed25519" && kind != "rsa" {
				return usageErrorf("--type %q: use ed25519 or rsa", kind)
			}
			if outPath == "" {
				return usageErrorf("--out is required: where to keep the new private key (PATH and PATH.pub)")
			}
			if err := cluster.KeyPairFree(outPath); err != nil {
				return err
			}
			// Nothing is written before every check passed (read-only, the audit log, the cluster, the secret).
			answers := yesAnswers(gyes, map[string]string{request.ActionKeyInstall: event.ChoiceReplace})
			return g.run(cmd, "generate and install an SSH key", &gout, answers, func(*session.Session) request.Request {
				return request.KeyInstall{Generate: true, Type: kind, Out: outPath}
			})
		}}
	generate.Flags().StringVar(&kind, "type", "ed25519", "ed25519 or rsa (4096 bits)")
	generate.Flags().StringVar(&outPath, "out", "", "the private key file to write (PATH.pub gets the public key)")
	generate.Flags().BoolVar(&gyes, "yes", false, "confirm replacing an existing, different key")
	gout.add(generate.Flags())
	cmd.AddCommand(show, create, generate)
	return cmd
}

func printKeyState(g *globalOptions, st cluster.KeyState) error {
	w := g.stdout
	if st.Key == nil {
		fmt.Fprintf(w, "%s: missing in %s (create it with wmcon key create --from-file PATH or wmcon key generate --out PATH)\n", config.PrivateKeySecret, config.OperatorNamespace)
	} else {
		fmt.Fprintf(w, "%s: %s %d bits %s\n", config.PrivateKeySecret, st.Key.Type, st.Key.Bits, st.Key.Fingerprint)
		if st.KeyProblem != "" {
			fmt.Fprintln(w, "  problem:", st.KeyProblem)
		}
	}
	switch {
	case st.UserDataKey == nil:
		fmt.Fprintf(w, "%s: missing in %s\n", config.UserDataSecret, config.MachineAPINamespace)
	case st.UserDataErr != "":
		fmt.Fprintf(w, "%s: %s\n", config.UserDataSecret, st.UserDataErr)
	default:
		match := "does not match cloud-private-key"
		if st.Key != nil && st.Key.Fingerprint == st.UserDataKey.Fingerprint {
			match = "matches cloud-private-key"
		}
		fmt.Fprintf(w, "%s: %s %s (%s)\n", config.UserDataSecret, st.UserDataKey.Type, st.UserDataKey.Fingerprint, match)
	}
	return nil
}

func newMachineSetCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "machineset", Short: "Generate, apply, scale and delete Windows MachineSets"}
	var req cluster.MachineSetRequest
	var platform, format string
	var apply, replace bool
	var replicas int32
	var out outputFlags
	gen := &cobra.Command{Use: "generate --platform P [flags]", Short: "Build a Windows MachineSet from the cluster's own settings; print it, or --apply it", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := parsePlatform(platform)
			if err != nil {
				return err
			}
			if err := printedForm(cmd, &format, out.format, apply); err != nil {
				return err
			}
			req.Platform, req.Replicas = p, replicas
			if apply { // the Runner's request builds, shows and applies it (audited)
				answers := yesAnswers(replace, map[string]string{request.ActionMachineSetGenerate: event.ChoiceApply})
				return g.run(cmd, "apply a MachineSet", &out, answers, func(*session.Session) request.Request {
					return request.MachineSetGenerate{Platform: string(p), Name: req.Name, Zone: req.Zone, Image: req.Image,
						InstanceType: req.InstanceType, Replicas: &replicas, Apply: true}
				})
			}
			s, err := g.openSession(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			infra, machines, err := cluster.NewMachineSets(s.Clients).Inputs(cmd.Context())
			if err != nil {
				return err
			}
			ms, err := cluster.GenerateMachineSet(infra, machines, req)
			if err != nil {
				return err
			}
			if err := cluster.ValidateMachineSet(req.Platform, ms); err != nil {
				return err
			}
			return printObject(g, format, ms)
		}}
	f := gen.Flags()
	f.StringVar(&platform, "platform", "", "aws, azure, vsphere, gcp or nutanix (default: the cluster's)")
	f.StringVar(&req.Name, "name", "", "MachineSet name (default per platform; at most 9 characters on vSphere and Azure)")
	f.StringVar(&req.Zone, "zone", "", "zone (AWS, Azure, GCP; default the first worker's)")
	f.StringVar(&req.Image, "image", "", "AWS AMI ID, Azure publisher:offer:sku:version, GCP image, vSphere template, Nutanix image")
	f.StringVar(&req.InstanceType, "instance-type", "", "instance size (default m5a.large, Standard_D2s_v3, n1-standard-4)")
	f.Int32Var(&replicas, "replicas", 1, "number of Windows Machines")
	f.StringVar(&format, "format", "yaml", "printed form: yaml or json (as -o yaml or -o json)")
	f.BoolVar(&apply, "apply", false, "create the MachineSet instead of printing it (a Windows MachineSet of that name is replaced only with --yes)")
	f.BoolVar(&replace, "yes", false, "with --apply: replace the Windows MachineSet of that name (the difference is shown first)")
	out.add(f)
	f.Lookup("output").Usage = "yaml or json: the MachineSet's printed form; with --apply, text or json for one JSON object per event"

	var sout outputFlags
	scale := &cobra.Command{Use: "scale NAME REPLICAS", Short: "Set a MachineSet's replicas", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.ParseInt(args[1], 10, 32)
			if err != nil || n < 0 {
				return usageErrorf("replicas %q: give a whole number of Machines, 0 or more (see wmcon machineset scale --help)", args[1])
			}
			return g.run(cmd, "scale a MachineSet", &sout, nil, func(*session.Session) request.Request {
				return request.MachineSetScale{Name: args[0], Replicas: int32(n)}
			})
		}}
	sout.add(scale.Flags())
	var dout outputFlags
	var yes bool
	del := &cobra.Command{Use: "delete NAME", Short: "Delete a MachineSet and, with it, its Machines and nodes", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			answers := yesAnswers(yes, map[string]string{request.ActionMachineSetDelete: event.ChoiceRemove})
			return g.run(cmd, "delete a MachineSet", &dout, answers, func(*session.Session) request.Request { return request.MachineSetDelete{Name: args[0]} })
		}}
	del.Flags().BoolVar(&yes, "yes", false, "confirm the deletion")
	dout.add(del.Flags())
	cmd.AddCommand(gen, scale, del)
	return cmd
}

func parsePlatform(s string) (configv1.PlatformType, error) {
	switch strings.ToLower(s) {
	case "":
		return "", nil
	case "aws":
		return configv1.AWSPlatformType, nil
	case "azure":
		return configv1.AzurePlatformType, nil
	case "vsphere":
		return configv1.VSpherePlatformType, nil
	case "gcp":
		return configv1.GCPPlatformType, nil
	case "nutanix":
		return configv1.NutanixPlatformType, nil
	}
	return "", usageErrorf("--platform %q: use aws, azure, vsphere, gcp or nutanix (elsewhere, use BYOH: wmcon byoh add)", s)
}

func printObject(g *globalOptions, format string, obj any) error {
	var b []byte
	var err error
	switch format {
	case "yaml", "":
		b, err = yaml.Marshal(obj)
	case "json":
		b, err = json.MarshalIndent(obj, "", "  ")
		b = append(b, '\n')
	default:
		return usageErrorf("--format %q: use yaml or json", format)
	}
	if err != nil {
		return err
	}
	_, err = g.stdout.Write(b)
	return err
}

// byohReport is windows-instances as byoh list and validate show it: the entries, the problems of each,
// and with validate --ssh whether each host lets wmcon in.
type byohReport struct {
	data     map[string]string
	problems []cluster.BYOHProblem
	reach    map[string]setup.BYOHReach // by address; nil without --ssh
	nodes    map[string]string          // the node of each address that is one
}

// readBYOH reads windows-instances and checks every entry; with ssh it also logs in to each valid one.
func readBYOH(ctx context.Context, g *globalOptions, ssh bool) (byohReport, error) {
	s, err := g.openSession(ctx)
	if err != nil {
		return byohReport{}, err
	}
	defer s.Close()
	b := cluster.NewBYOHConfigMap(s.Clients)
	data, err := b.Read(ctx)
	if err != nil {
		return byohReport{}, err
	}
	rep := byohReport{data: data, problems: cluster.ValidateBYOH(ctx, b.Resolver, data), nodes: byohNodes(ctx, s, data)}
	if ssh {
		hosts, _ := cluster.ParseBYOH(data) // entries that do not parse are problems already
		rep.reach = map[string]setup.BYOHReach{}
		for _, r := range setup.CheckBYOHReach(ctx, s.HostAt, hosts) {
			rep.reach[r.Address] = r
		}
	}
	return rep, nil
}

// unreachable counts the hosts an SSH check could not log in to.
func (r byohReport) unreachable() int {
	n := 0
	for _, x := range r.reach {
		if x.State != setup.ReachOK {
			n++
		}
	}
	return n
}

func newBYOHCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "byoh", Short: "Bring-Your-Own-Host Windows instances (the windows-instances ConfigMap)"}
	var lformat string
	list := &cobra.Command{Use: "list", Short: "List the BYOH instances and the problems of each entry", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if lformat != "text" && lformat != "json" {
				return usageErrorf("--output %q: use text or json", lformat)
			}
			rep, err := readBYOH(cmd.Context(), g, false)
			if err != nil {
				return err
			}
			return printBYOH(g, lformat, rep)
		}}
	list.Flags().StringVarP(&lformat, "output", "o", "text", "text or json")
	var vformat string
	var vssh bool
	validate := &cobra.Command{Use: "validate", Short: "Check every entry of windows-instances (exit 1 when one is wrong)", Args: cobra.NoArgs,
		Long: "validate checks every entry as byoh add would (username=, the user name, IPv6, addresses that are no\n" +
			"host's, names that do not resolve to IPv4, duplicates). With --ssh it also logs in to each host as its\n" +
			"user with the cloud-private-key (or --ssh-key), as WMCO will: the address answers SSH, the host key is the\n" +
			"one pinned, the user may log in.\n" +
			"It changes nothing. Exit code 1 when an entry is wrong or a host does not let wmcon in.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if vformat != "text" && vformat != "json" {
				return usageErrorf("--output %q: use text or json", vformat)
			}
			rep, err := readBYOH(cmd.Context(), g, vssh)
			if err != nil {
				return err
			}
			if err := printBYOH(g, vformat, rep); err != nil {
				return err
			}
			switch {
			case len(rep.problems) > 0:
				return fmt.Errorf("%d of %d entries of %s are wrong", len(rep.problems), len(rep.data), config.BYOHConfigMap)
			case rep.unreachable() > 0:
				return fmt.Errorf("%d of %d hosts of %s do not let wmcon in over SSH (see above)", rep.unreachable(), len(rep.data), config.BYOHConfigMap)
			}
			return nil
		}}
	validate.Flags().StringVarP(&vformat, "output", "o", "text", "text or json")
	validate.Flags().BoolVar(&vssh, "ssh", false, "also log in to each host over SSH (reachable, host key, user)")
	var aout outputFlags
	var user string
	add := &cobra.Command{Use: "add ADDRESS --user NAME", Short: "Add a Windows host (IPv4 address or DNS name) for WMCO to configure", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkBYOHHost(args[0], user); err != nil {
				return &usageError{err: fmt.Errorf("%w (see wmcon byoh add --help)", err)}
			}
			return g.run(cmd, "add a BYOH host", &aout, nil, func(*session.Session) request.Request {
				return request.BYOHAdd{Address: args[0], User: user}
			})
		}}
	add.Flags().StringVar(&user, "user", "", "the Windows user WMCO logs in as (e.g. Administrator)")
	aout.add(add.Flags())
	var rout outputFlags
	var yes bool
	remove := &cobra.Command{Use: "remove ADDRESS", Short: "Remove a host (WMCO deconfigures it and deletes its Node)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			answers := yesAnswers(yes, map[string]string{request.ActionBYOHRemove: event.ChoiceRemove})
			return g.run(cmd, "remove a BYOH host", &rout, answers, func(s *session.Session) request.Request {
				node := ""
				if snap, err := s.Snapshot(cmd.Context()); err == nil {
					node, _ = snap.NodeByAddress(args[0])
				}
				return request.BYOHRemove{Address: args[0], Node: node}
			})
		}}
	remove.Flags().BoolVar(&yes, "yes", false, "confirm the removal")
	rout.add(remove.Flags())
	cmd.AddCommand(list, validate, add, remove)
	return cmd
}

// checkBYOHHost refuses an address or a user windows-instances cannot take, naming it (quoted: a value
// with control characters never reaches the terminal as it is).
func checkBYOHHost(addr, user string) error {
	if err := model.CheckBYOHAddress(addr); err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if err := model.CheckBYOHUser(user); err != nil {
		return fmt.Errorf("user %q: %w: give the Windows user WMCO logs in as (e.g. Administrator)", user, err)
	}
	return nil
}

func printBYOH(g *globalOptions, format string, rep byohReport) error {
	entries := rep.entries()
	if format == "json" {
		return writeJSON(g.stdout, entries)
	}
	if len(entries) == 0 {
		_, err := fmt.Fprintf(g.stdout, "no BYOH instances (%s is missing or empty)\n", config.BYOHConfigMap)
		return err
	}
	if err := writeBYOHTable(g.stdout, entries); err != nil {
		return err
	}
	if w := cluster.BYOHStallWarning(rep.problems, len(entries)); w != "" {
		_, err := fmt.Fprintln(g.stdout, "WARNING: "+w)
		return err
	}
	return nil
}

func reachText(r setup.BYOHReach) string {
	if r.State == setup.ReachOK {
		return "ssh ok (" + r.User + " on " + r.Detail + ")"
	}
	return "✗ ssh " + r.State + ": " + r.Detail
}
