package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
)

// NodeManagerOptions are what the simulated cloud-node-manager knows beyond its command line.
type NodeManagerOptions struct {
	// Find gives the instance a node name names (Azure's manager asks the instance metadata).
	Find func(node string) (Instance, bool)
	// OnError, when set, is told each new error of an attempt to initialize the Node: WMCO gives the real
	// manager no log file, so this is where a test reads what the API server answered.
	OnError func(node string, err error)
}

// nodeManagerPoll is how often the simulated cloud-node-manager looks at its Node again (the real one
// resyncs on watch events and every few minutes; a test wants it sooner).
var nodeManagerPoll = 200 * time.Millisecond

// NodeManager is the program behind a simulated host's azure-cloud-node-manager.exe, the node-side half of
// Azure's cloud provider: it initializes its own Node (--node-name) as the cloud controller does — the
// instance's providerID set and the uninitialized taint removed — with the credentials of its --kubeconfig,
// against the real API server. Those must be allowed to change the Node's taints: a node's own credentials
// (C:\k\kubeconfig) are refused by NodeRestriction, and then, like the real one, it logs the API server's
// refusal and tries again, leaving the Node uninitialized.
func NodeManager(opts NodeManagerOptions) windows.Program {
	return func(ctx context.Context, p *windows.Process) error {
		name, _ := p.Flag("node-name")
		kcPath, _ := p.Flag("kubeconfig")
		if name == "" || kcPath == "" {
			return errors.New("cloud-node-manager: --node-name and --kubeconfig are required")
		}
		cfg, err := kubelet.LoadKubeconfig(p, kcPath)
		if err != nil {
			p.Log('E', "nodemanager.go:78", "failed to create kubeconfig: "+err.Error())
			return err
		}
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("cloud-node-manager: %w", err)
		}
		lastErr := ""
		for {
			done, err := initializeOwnNode(ctx, kube, name, opts.Find)
			switch {
			case err != nil && err.Error() != lastErr && ctx.Err() == nil:
				lastErr = err.Error()
				p.Log('E', "node_controller.go:271", fmt.Sprintf("failed to initialize node %s: %v", name, err))
				if opts.OnError != nil {
					opts.OnError(name, err)
				}
			case done && lastErr != "-":
				lastErr = "-"
				p.Log('I', "node_controller.go:301", "Successfully initialized node "+name+" with cloud provider")
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(nodeManagerPoll):
			}
		}
	}
}

// initializeOwnNode initializes the Node once it exists and is uninitialized; done says it is initialized.
func initializeOwnNode(ctx context.Context, kube kubernetes.Interface, name string, find func(string) (Instance, bool)) (bool, error) {
	n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if !uninitialized(n) {
		return true, nil
	}
	inst, ok := Instance{}, false
	if find != nil {
		inst, ok = find(name)
	}
	if !ok {
		return false, fmt.Errorf("failed to get instance metadata for node %s: instance not found", name)
	}
	if err := initializeNode(ctx, kube, n, inst); err != nil {
		return false, err
	}
	return true, nil
}
