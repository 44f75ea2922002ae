package cli

import (
	"context"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/logline"
	"github.com/wmcon/wmcon/ui"
	"github.com/wmcon/wmcon/ui/logview"
)

// runConsole opens the console on the demo cluster or on the cluster of the kubeconfig.
func runConsole(ctx context.Context, g *globalOptions) error {
	prompt := newTerminalPrompt(g.ssh.passphraseEnv, g.stderr)
	if err := prompt.askFor(g.ssh.keys); err != nil {
		return err
	}
	g.ssh.passphrase = prompt.Passphrase
	s, err := g.session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	opts := ui.Options{ReadOnly: g.readOnly, NoColor: g.noColor, Mouse: g.mouse, ASCII: g.ascii, Runner: s.Runner,
		Triage: s.Triage, Logs: streamLogs(actions.LogDeps{Kube: s.Clients.Kube, Resolver: s.Resolver})}
	return ui.Run(ctx, s.Watcher.Snapshots(), opts)
}

// streamLogs binds actions.StreamLogs to the session's backends for the log view.
func streamLogs(deps actions.LogDeps) logview.StartFunc {
	return func(ctx context.Context, req logline.Request, out func([]logline.Line), notices func(event.Event)) error {
		return actions.StreamLogs(ctx, req, deps, out, notices)
	}
}
