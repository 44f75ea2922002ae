package cli

import (
	"context"

	"github.com/wmcon/wmcon/ui"
)

// runConsole opens the console on the demo cluster or on the cluster of the kubeconfig.
func runConsole(ctx context.Context, g *globalOptions) error {
	s, err := g.session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	opts := ui.Options{ReadOnly: g.readOnly, NoColor: g.noColor, Mouse: g.mouse, ASCII: g.ascii, Runner: consoleRunner{s}}
	return ui.Run(ctx, s.Watcher.Snapshots(), opts)
}
