package cli

import (
	"errors"

	"github.com/wmcon/wmcon/backend"
)

// DemoCluster is the built-in demo (--demo) as the command line needs it. main hands it in from sim/demo:
// the product never imports the simulators, and this is the command line's one door to them.
type DemoCluster interface {
	// Open starts a demo cluster (fresh: one where Windows was never set up) as a session's backend.
	Open(fresh bool) (backend.Backend, error)
	// NodeNames are its nodes' names, Windows first, without starting it (shell completion).
	NodeNames(fresh bool) (windows, linux []string)
}

// openBackend is the cluster of the kubeconfig flags, or with --demo the demo cluster.
func (g *globalOptions) openBackend() (backend.Backend, error) {
	if !g.demo {
		return backend.NewCluster(g.kube), nil
	}
	if g.demoCluster == nil {
		return nil, errors.New("this build of wmcon has no demo cluster: run it without --demo")
	}
	return g.demoCluster.Open(g.fresh)
}
