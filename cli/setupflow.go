package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup"
	"github.com/wmcon/wmcon/session"
)

// setupFlags are wmcon setup's flags beyond SetupOptions' own fields.
type setupFlags struct {
	o        setup.SetupOptions
	byoh     []string
	platform string
	out      outputFlags
}

func newSetupCommand(g *globalOptions) *cobra.Command {
	var f setupFlags
	cmd := &cobra.Command{
		Use:   "setup [--standalone] [--key FILE | --generate-key] [--byoh ADDR=USER]... [--machineset-image IMAGE] [--yes]",
		Short: "Guided first-time setup, headless: from no Windows nodes to a Ready one, resuming where the cluster stands",
		Long: "setup detects from the cluster which steps are done — check (the doctor), operator (WMCO through OLM, or\n" +
			"--standalone: no operator, wmcon configures each host), key (cloud-private-key), machines (a Windows MachineSet\n" +
			"or BYOH hosts), configure (standalone: wmcon configure; with WMCO: follow the operator until the node is\n" +
			"Ready), workloads (a RuntimeClass for the node's Windows build) — and runs the first one not done, showing\n" +
			"its plan (YAML, commands) first. Without --yes it shows the next step's plan and stops; with --yes it\n" +
			"applies each step and goes on. What it needs and was not given stops it with the flag to pass. Run it again\n" +
			"to resume: the steps done stay done.\n\n" +
			"Exit 0 when a Windows node is Ready and the setup complete, 1 when a step failed (or a blocking doctor\n" +
			"check, or --read-only refused a change), 2 when it stopped part-way (a flag or --yes is needed, a wait ran\n" +
			"out, a host was left part-configured: the output says what to run), 130 when interrupted before it changed\n" +
			"anything, 64 for a bad command line.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options(g)
			if err != nil {
				return err
			}
			answers := yesAnswers(o.Yes, map[string]string{request.ActionKeyInstall: event.ChoiceReplace,
				request.ActionMachineSetGenerate: event.ChoiceApply, request.ActionOperator: event.ChoiceApprove})
			sink, err := f.out.sink(cmd.OutOrStdout(), answers)
			if err != nil {
				return err
			}
			s, err := g.openSession(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			var res setup.SetupResult
			err = cancellable(cmd.Context(), func() (err error) {
				res, err = runSetup(cmd.Context(), s, o, sink)
				return err
			})
			return setupExit(err, res)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.o.Standalone, "standalone", false, "no operator: wmcon configures each BYOH host itself (wmcon configure)")
	fs.StringVar(&f.o.KeyFile, "key", "", "create cloud-private-key from this private key file")
	fs.BoolVar(&f.o.GenerateKey, "generate-key", false, "generate a key pair (written to --key-out, 0600) and install it")
	fs.StringVar(&f.o.KeyType, "key-type", "ed25519", "type of a generated key: ed25519 or rsa")
	fs.StringVar(&f.o.KeyOut, "key-out", "", "where a generated private key goes (PATH.pub gets the public key; default ~/.ssh/wmcon_windows_TYPE)")
	fs.StringArrayVar(&f.byoh, "byoh", nil, "a Windows host for windows-instances, ADDRESS=USER (repeat for several)")
	fs.StringVar(&f.platform, "platform", "", "platform of a generated MachineSet: aws, azure, vsphere, gcp, nutanix (default: the cluster's)")
	fs.StringVar(&f.o.MachineSet.Image, "machineset-image", "", "create a Windows MachineSet from this image (AWS AMI, Azure publisher:offer:sku:version, GCP image, vSphere template, Nutanix image)")
	fs.StringVar(&f.o.MachineSet.Name, "machineset-name", "", "the MachineSet's name (default per platform)")
	fs.StringVar(&f.o.MachineSet.Zone, "zone", "", "the MachineSet's zone (default the first worker's)")
	fs.StringVar(&f.o.MachineSet.InstanceType, "instance-type", "", "the MachineSet's instance size")
	fs.StringVar(&f.o.Operator.Channel, "channel", "", "WMCO's channel (default stable)")
	fs.StringVar(&f.o.Operator.Approval, "approval", "", "InstallPlan approval: Automatic (default) or Manual")
	fs.StringVar(&f.o.Operator.Source, "source", "", "CatalogSource (default redhat-operators; OKD: community-operators)")
	fs.StringVar(&f.o.RuntimeClass, "runtime-class", "", "name of the RuntimeClass for the node's Windows build (default windows-<build>)")
	fs.BoolVar(&f.o.SmokeTest, "smoke-test", false, "at the end, run a small Windows pod with the RuntimeClass on the new node until Running, then remove it")
	fs.DurationVar(&f.o.SmokeTimeout, "smoke-timeout", 5*time.Minute, "how long the smoke-test pod has to run")
	fs.BoolVar(&f.o.Yes, "yes", false, "apply each step after showing its plan (without it, setup shows the next plan and stops)")
	fs.StringVar(&f.o.PayloadDir, "payload", "", "standalone: the node payload directory for wmcon configure")
	fs.StringVar(&f.o.PayloadImage, "payload-image", "", "standalone: an OCI image whose /payload to install")
	fs.DurationVar(&f.o.CSRTimeout, "csr-timeout", 5*time.Minute, "standalone: for each of the kubelet's CSRs to appear")
	fs.DurationVar(&f.o.ReadyTimeout, "ready-timeout", 10*time.Minute, "standalone: for the node to register and be Ready")
	fs.DurationVar(&f.o.FollowTimeout, "follow-timeout", 30*time.Minute, "with WMCO: for the operator to make the machines Ready nodes")
	f.out.add(fs)
	return cmd
}

// options checks the flags and builds the setup's options.
func (f *setupFlags) options(g *globalOptions) (setup.SetupOptions, error) {
	o := f.o
	o.ReadOnly = g.readOnly
	switch {
	case o.KeyFile != "" && o.GenerateKey:
		return o, usageErrorf("give --key FILE or --generate-key, not both")
	case o.PayloadDir != "" && o.PayloadImage != "":
		return o, usageErrorf("give --payload DIR or --payload-image REF, not both")
	case o.Standalone && o.MachineSet.Image != "":
		return o, usageErrorf("--machineset-image needs WMCO to configure the Machines: in standalone mode give --byoh ADDRESS=USER")
	}
	p, err := parsePlatform(f.platform)
	if err != nil {
		return o, &usageError{err: err}
	}
	o.MachineSet.Platform = strings.ToLower(string(p))
	for _, b := range f.byoh {
		addr, user, ok := strings.Cut(b, "=")
		if !ok || strings.TrimSpace(addr) == "" || strings.TrimSpace(user) == "" {
			return o, usageErrorf("--byoh %q: give ADDRESS=USER, e.g. --byoh win1.example.com=Administrator", b)
		}
		if err := checkBYOHHost(addr, user); err != nil {
			return o, usageErrorf("--byoh %q: %v", b, err)
		}
		o.BYOH = append(o.BYOH, request.BYOHAdd{Address: addr, User: user})
	}
	if o.GenerateKey && o.KeyOut == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return o, usageErrorf("--generate-key: no home directory for the default key file; pass --key-out PATH")
		}
		o.KeyOut = filepath.Join(home, ".ssh", "wmcon_windows_"+o.KeyType)
	}
	return o, nil
}

func runSetup(ctx context.Context, s *session.Session, o setup.SetupOptions, sink event.Sink) (setup.SetupResult, error) {
	return setup.RunSetup(ctx, s.Runner, o, sink)
}

// setupExit maps how the setup ended to the exit code table: a stop part-way is ExitSetupPartly, an
// interrupt before anything changed ExitCancelled.
func setupExit(err error, res setup.SetupResult) error {
	var stop *setup.SetupStopped
	switch {
	case err == nil:
		return nil
	case errors.As(err, &stop):
		return &exitError{code: ExitSetupPartly, err: err}
	case errors.Is(err, context.Canceled) && res.Changed:
		return &exitError{code: ExitSetupPartly, err: errors.New("setup interrupted part-way: run wmcon setup again with the same flags to resume")}
	case errors.Is(err, context.Canceled):
		return err
	}
	return &exitError{code: ExitFailed, err: err}
}
