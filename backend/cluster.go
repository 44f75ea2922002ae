package backend

import (
	"context"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/wmcon/wmcon/cluster"
)

// Cluster is a real cluster, reached through the kubeconfig flags, and its Windows hosts over SSH as
// the cluster reports them.
type Cluster struct {
	kube    *genericclioptions.ConfigFlags
	clients cluster.Clients
}

// NewCluster is the cluster the kubeconfig flags name.
func NewCluster(kube *genericclioptions.ConfigFlags) *Cluster { return &Cluster{kube: kube} }

// Connect connects with the kubeconfig.
func (c *Cluster) Connect(ctx context.Context) (cluster.Clients, cluster.Target, error) {
	clients, target, err := cluster.Connect(ctx, c.kube)
	c.clients = clients
	return clients, target, err
}

// Run does nothing: a real cluster runs by itself.
func (*Cluster) Run(context.Context) {}

// Close does nothing: the session closes its own connections.
func (*Cluster) Close() {}

// Sandbox is empty: a real cluster uses the user's own setup.
func (*Cluster) Sandbox() Sandbox { return Sandbox{} }

// HostAddrs is nil: hosts are reached at the addresses the cluster reports.
func (*Cluster) HostAddrs() map[string]string { return nil }

// Exporters is nil: the nodes' exporters are read through the cluster.
func (*Cluster) Exporters() *Exporters { return nil }

// PayloadDir is "": the payload comes from the installed operator's image.
func (*Cluster) PayloadDir() (string, error) { return "", nil }

// User is the user as the API server knows them, else the kubeconfig's user entry, else "" (the local user).
func (c *Cluster) User(ctx context.Context) string {
	if c.clients.Kube == nil || c.kube == nil {
		return ""
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if u := cluster.NewOps(c.clients).WhoAmI(wctx); u != "" {
		return u
	}
	raw, err := c.kube.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return ""
	}
	name := raw.CurrentContext
	if c.kube.Context != nil && *c.kube.Context != "" {
		name = *c.kube.Context
	}
	if c.kube.AuthInfoName != nil && *c.kube.AuthInfoName != "" {
		return *c.kube.AuthInfoName
	}
	if kc, ok := raw.Contexts[name]; ok {
		return kc.AuthInfo
	}
	return ""
}
