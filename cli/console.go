package cli

import (
	"context"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/ui"
)

// runConsole opens the console on the demo cluster or on the cluster of the kubeconfig.
func runConsole(ctx context.Context, g *globalOptions) error {
	s, err := g.session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	opts := ui.Options{ReadOnly: g.readOnly, NoColor: g.noColor, Mouse: g.mouse, ASCII: g.ascii, Runner: consoleRunner{s},
		Triage: func(ctx context.Context, node string) (actions.Report, error) {
			return actions.Triage(ctx, node, actions.TriageDeps{Snapshot: s.Snapshot, Cluster: actions.ClusterReads{Clients: s.Clients}, Hosts: s.Resolver})
		}}
	return ui.Run(ctx, s.Watcher.Snapshots(), opts)
}
