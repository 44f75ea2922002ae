package cli

import (
	"context"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/demo"
	"github.com/wmcon/wmcon/ui"
)

// runConsole opens the console on the demo cluster or on the cluster of the kubeconfig.
func runConsole(ctx context.Context, g *globalOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clients, target, err := connect(ctx, g)
	if err != nil {
		return err
	}
	w := cluster.NewWatcher(clients, target, cluster.WatcherOptions{})
	go w.Run(ctx)
	return ui.Run(ctx, w.Snapshots(), ui.Options{ReadOnly: g.readOnly, NoColor: g.noColor, Mouse: g.mouse, ASCII: g.ascii})
}

// connect returns clients for the demo cluster (started and playing until ctx ends) or the real one.
func connect(ctx context.Context, g *globalOptions) (cluster.Clients, cluster.Target, error) {
	if g.demo {
		d, err := demo.New(demo.Options{})
		if err != nil {
			return cluster.Clients{}, cluster.Target{}, err
		}
		go d.Run(ctx)
		return d.Clients, d.Target, nil
	}
	return cluster.Connect(ctx, g.kube)
}
