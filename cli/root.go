// Package cli is wmcon's command line: the root command opens the console, and every action is also a
// headless subcommand that runs the same code and prints the same events as text or JSON.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/klog/v2"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/session"
)

// Version is stamped by the Makefile from git.
var Version = "dev"

// globalOptions are the flags every command shares.
type globalOptions struct {
	kube  *genericclioptions.ConfigFlags
	demo  bool
	fresh bool // --demo=fresh
	// demoCluster is the demo --demo opens, as main hands it in; nil in a build without one.
	demoCluster DemoCluster
	readOnly    bool
	noColor     bool
	mouse       bool
	ascii       bool
	// prometheus is the console's metrics source (top has its own flag of the same name).
	prometheus string
	ssh        session.SSHOptions
	// configPath is --config; the file's values fill the options above that no flag gave (see settings.go).
	configPath string
	auditLog   string // --audit-log or the file's auditLog; "": actions.DefaultAuditPath
	theme      string // the console's look (config.Themes)
	// metricsInterval is the console's refresh of the metrics, from the config file; 0: the session's default.
	metricsInterval time.Duration
	// settings are the config file's settings in effect, once the command line is parsed.
	settings settings
	stdout   io.Writer
	stderr   io.Writer
}

// Main runs wmcon with args and returns the process exit code; demo is the cluster --demo opens.
func Main(args []string, stdout, stderr io.Writer, demo DemoCluster) int {
	quietKlog()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	in := &interrupts{cancel: cancel, stderr: stderr, exit: exitNow}
	stop := in.listen()
	defer stop()
	root := NewRootCommand(stdout, stderr, demo)
	calledAs(root, os.Args[0])
	root.SetArgs(args)
	if err := root.ExecuteContext(withInterrupts(ctx, in)); err != nil {
		fmt.Fprintln(stderr, "wmcon:", err)
		return exitCode(err)
	}
	return 0
}

// exitNow ends the process at once (a signal handler's choice), removing first what a deferred Close
// would have: the backend's private files (the demo's).
func exitNow(code int) {
	session.RemoveSandboxFiles()
	os.Exit(code)
}

// exitError carries a specific exit code (for example 2 for a node left half-done).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// quietKlog keeps client-go's own logging off the terminal: the console owns the screen, and headless
// commands report errors themselves. Redirecting klog's output is not enough (it still copies errors to
// stderr, such as a client key that does not match its certificate), so every line goes to a discarding logger.
func quietKlog() {
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	klog.SetLoggerWithOptions(logr.Discard(), klog.ContextualLogger(true))
}

// NewRootCommand builds the command tree; demo is the cluster --demo opens.
func NewRootCommand(stdout, stderr io.Writer, demo DemoCluster) *cobra.Command {
	return newRootCommand(&globalOptions{kube: genericclioptions.NewConfigFlags(true), demoCluster: demo, stdout: stdout, stderr: stderr})
}

// newRootCommand builds the command tree on g.
func newRootCommand(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "wmcon",
		Short: "A terminal console for the Windows worker nodes of OpenShift/OKD clusters",
		Long: "wmcon shows the Windows nodes, MachineSets, WMCO secrets and registry mirrors of a cluster live,\n" +
			"and runs the operations an administrator needs on them. Without a subcommand it opens the console.\n" +
			"Try it without a cluster: wmcon --demo",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return runConsole(cmd.Context(), g) },
		// Every command reads the config file once its flags are parsed, so a flag overrides the file.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if skipsSettings(cmd) {
				return nil
			}
			s, err := g.loadSettings(cmd, os.Getenv)
			g.settings = s
			return err
		},
	}
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	flags := root.PersistentFlags()
	g.kube.AddFlags(flags)
	demoFlag := flags.VarPF(demoFlag{g}, "demo", "", "use the built-in demo cluster with simulated Windows hosts (no cluster needed); --demo=fresh: one where Windows was never set up")
	demoFlag.NoOptDefVal = "true"
	flags.BoolVar(&g.readOnly, "read-only", false, "refuse every action that changes the cluster or a host")
	addSSHFlags(flags, &g.ssh)
	flags.StringVar(&g.configPath, "config", "", "config file with your defaults (default $XDG_CONFIG_HOME/wmcon/config.yaml or ~/.config/wmcon/config.yaml; "+config.FileEnv+" overrides); see wmcon config view")
	flags.StringVar(&g.auditLog, "audit-log", "", "file every change is recorded in (default ~/.local/state/wmcon/audit.log; "+actions.AuditEnv+" overrides the config file)")
	root.Flags().BoolVar(&g.noColor, "no-color", false, "render without colours (NO_COLOR is honoured too)")
	root.Flags().BoolVar(&g.mouse, "mouse", false, "enable mouse wheel scrolling and click to select")
	root.Flags().BoolVar(&g.ascii, "ascii", false, "draw marks with ASCII characters only")
	root.Flags().StringVar(&g.theme, "theme", "dark", "the console's colours: "+strings.Join(config.Themes, ", ")+" (--no-color and NO_COLOR turn colours off in every theme)")
	root.Flags().StringVar(&g.prometheus, "prometheus", "", "URL of a Prometheus or Thanos querier for the Nodes pane's metrics (default: each node's windows_exporter through the API server's node proxy)")
	root.AddCommand(newVersionCommand(g))
	root.AddCommand(newHostKeyCommand(g))
	root.AddCommand(newRebootCommand(g))
	root.AddCommand(newCordonCommand(g), newUncordonCommand(g), newDrainCommand(g))
	root.AddCommand(newTriageCommand(g), newRestartServiceCommand(g), newDoctorCommand(g))
	root.AddCommand(newLogsCommand(g), newTopCommand(g))
	root.AddCommand(newOperatorCommand(g), newKeyCommand(g), newMachineSetCommand(g), newBYOHCommand(g))
	root.AddCommand(newMirrorsCommand(g), newProxyCommand(g), newUpgradeCommand(g))
	root.AddCommand(newConfigureCommand(g), newDeconfigureCommand(g), newSetupCommand(g))
	root.AddCommand(newConfigCommand(g))
	addCompletions(root, g)
	addExamples(root)
	// cobra adds its completion command only when the command line runs; added now, it gets the usage
	// errors of every command (completion tcsh: an unknown shell, not help and 0).
	root.InitDefaultCompletionCmd()
	markUsageErrors(root)
	return root
}
