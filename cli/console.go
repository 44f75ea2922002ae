package cli

import (
	"context"

	"github.com/wmcon/wmcon/ui"
)

// runConsole opens the console on the demo cluster or on the cluster of the kubeconfig.
func runConsole(ctx context.Context, g *globalOptions) error {
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
	opts := ui.Options{ReadOnly: g.readOnly, NoColor: g.noColor, Mouse: g.mouse, ASCII: g.ascii, Runner: s.Runner,
		Triage: s.Triage, Logs: s.StreamLogs, Mirrors: s.Mirrors}
	return ui.Run(ctx, s.Watcher.Snapshots(), opts)
}
