package cli

import (
	"context"
	"os"

	"golang.org/x/term"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/session"
	"github.com/wmcon/wmcon/ui"
)

// runConsole opens the console on the demo cluster or on the cluster of the kubeconfig.
func runConsole(ctx context.Context, g *globalOptions) error {
	if err := needTerminal(); err != nil {
		return err
	}
	prompt := newTerminalPrompt(g.ssh.PassphraseEnv, g.stderr)
	if err := prompt.askFor(g.ssh.Keys); err != nil {
		return err
	}
	g.ssh.Passphrase = prompt.Passphrase
	s, err := g.openSession(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	s.HostKeys.Told = nil // the screen is the console's; triage shows the host key it was offered
	opts := consoleOptions(g, s)
	// Without a metrics source the columns stay off; the reason is the one top would give.
	if feed, err := s.MetricsFeed(session.MetricsOptions{PrometheusURL: g.prometheus}); err == nil {
		opts.Metrics, opts.MetricsInterval, opts.MetricsWarmup = feed.Refresh, feed.Interval, feed.Warmup
	} else {
		return err
	}
	// The console ends cleanly (restoring the terminal) when ctx is cancelled: a first signal does that.
	return cancellable(ctx, func() error { return ui.Run(ctx, s.Watcher.Snapshots(), opts) })
}

// consoleOptions connect the console to the session: its Runner runs every action (the guided setup's
// steps too), and the views read through the session's backends. A backend with hosts of its own (the
// demo) has the console offer them and the key file they accept.
func consoleOptions(g *globalOptions, s *session.Session) ui.Options {
	opts := ui.Options{ReadOnly: g.readOnly, NoColor: g.noColor, Mouse: g.mouse, ASCII: g.ascii, Backend: ui.Backend{
		Runner: s.Runner, Triage: s.Triage, Logs: s.StreamLogs, Mirrors: s.Mirrors, Proxy: s.Proxy, NodeDetail: s.NodeDetail,
		DrainPlan: s.DrainPlans, Doctor: func(ctx context.Context) (diagnosis.Report, error) { return s.Doctor(ctx, nil) }}}
	sandbox := s.Sandbox()
	opts.Hosts, opts.KeyFile = sandbox.BareHosts, sandbox.KeyFile
	return opts
}

// needTerminal refuses to open the console where it cannot be drawn (cron, CI, a pipe), before anything
// connects, with the headless commands to use instead of a raw terminal error.
func needTerminal() error {
	if term.IsTerminal(int(os.Stdout.Fd())) {
		if term.IsTerminal(int(os.Stdin.Fd())) {
			return nil
		}
		if tty, err := os.Open("/dev/tty"); err == nil { // keys can still come from the terminal
			tty.Close()
			return nil
		}
	}
	return usageErrorf("the console needs a terminal, and this process has none (output or input is not a terminal): " +
		"run wmcon in a terminal, or use a headless command such as wmcon triage NODE, wmcon logs NODE or " +
		"wmcon reboot NODE (wmcon --help lists them all)")
}
