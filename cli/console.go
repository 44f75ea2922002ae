package cli

import (
	"context"
	"os"
	"runtime/debug"

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
	consoleGC(os.Getenv) // before the session starts the first list
	prompt := newTerminalPrompt(g.ssh.PassphraseEnv, g.stderr)
	if err := prompt.askFor(g.ssh.Keys); err != nil {
		return err
	}
	g.ssh.Passphrase = prompt.Passphrase
	s, opts, err := openConsole(ctx, g)
	if err != nil {
		return err
	}
	defer s.Close()
	// The console ends cleanly (restoring the terminal) when ctx is cancelled: a first signal does that.
	return cancellable(ctx, func() error { return ui.Run(ctx, s.Watcher.Snapshots(), opts) })
}

// openConsole opens the session and the console's options on it, with the metrics feeds; the caller closes
// the session.
func openConsole(ctx context.Context, g *globalOptions) (*session.Session, ui.Options, error) {
	s, err := g.openSession(ctx)
	if err != nil {
		return nil, ui.Options{}, err
	}
	s.HostKeys.Told = nil // the screen is the console's; triage shows the host key it was offered
	opts, err := consoleWithMetrics(g, s, session.MetricsOptions{PrometheusURL: g.prometheus, Refresh: g.metricsInterval})
	if err != nil {
		s.Close()
		return nil, ui.Options{}, err
	}
	return s, opts, nil
}

// consoleWithMetrics are the console's options with its live metrics feed (mopts picks the source).
func consoleWithMetrics(g *globalOptions, s *session.Session, mopts session.MetricsOptions) (ui.Options, error) {
	opts := consoleOptions(g, s)
	return opts, addMetricsFeeds(g, s, &opts, mopts)
}

// consoleOptions connect the console to the session: its Runner runs every action (the guided setup's
// steps too), and the views read through the session's backends. A backend with hosts of its own (the
// demo) has the console offer them and the key file they accept.
func consoleOptions(g *globalOptions, s *session.Session) ui.Options {
	opts := ui.Options{ReadOnly: g.readOnly, NoColor: g.noColor, Theme: g.theme, Mouse: g.mouse, ASCII: g.ascii, Backend: ui.Backend{
		Runner: s.Runner, Triage: s.Triage, Logs: s.StreamLogs, Mirrors: s.Mirrors, Proxy: s.Proxy, NodeDetail: s.NodeDetail,
		DrainPlan: s.DrainPlans, Doctor: func(ctx context.Context) (diagnosis.Report, error) { return s.Doctor(ctx, nil) }}}
	sandbox := s.Sandbox()
	opts.Hosts, opts.KeyFile = sandbox.BareHosts, sandbox.KeyFile
	opts.KeyOut, _ = sandbox.KeyOut("ed25519") // "": the forms start empty and ask for a path
	return opts
}

// addMetricsFeeds has the console read the nodes' figures and their pods' through the session's feeds.
// Without a metrics source the columns stay off; the reason is the one top would give.
func addMetricsFeeds(g *globalOptions, s *session.Session, opts *ui.Options, mopts session.MetricsOptions) error {
	feed, err := s.MetricsFeed(mopts)
	if err != nil {
		return err
	}
	opts.Metrics, opts.MetricsInterval, opts.MetricsWarmup = feed.Refresh, feed.Interval, feed.Warmup
	// The pods' figures are read only for the nodes an open view shows (node details, pod details, health).
	pods, err := s.PodMetricsFeed(session.PodMetricsOptions{PrometheusURL: g.prometheus, Refresh: g.metricsInterval})
	if err != nil {
		return err
	}
	opts.PodMetrics, opts.PodMetricsInterval, opts.PodMetricsWarmup = pods.Node, pods.Interval, pods.Warmup
	return nil
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

// consoleGCPercent is the console's garbage-collection target (Go's GOGC): the heap may grow by half of
// what is live before it is collected, not by all of it. What the console keeps is small and long-lived
// (a row per node); what it throws away comes in one burst, the first list's decoding, and the default
// lets that garbage grow as large as everything kept. At 10,000 realistic nodes this lowers the peak
// resident memory by about an eighth, 30 MiB (docs/benchmarks.md, round 4), for a few more collections
// during the list; at rest the console allocates little, so they cost nothing measurable there.
const consoleGCPercent = 50

// consoleGC sets the console's collection target, unless the user chose one with GOGC.
func consoleGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(consoleGCPercent)
	}
}
