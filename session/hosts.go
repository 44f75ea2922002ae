package session

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

// PoolResolver resolves nodes through a connection pool, following WMCO's conventions: the node's first
// IPv4 InternalIP (else its InternalDNS name) on port 22, the platform's default user, and for BYOH nodes
// the user named in the windows-instances ConfigMap.
type PoolResolver struct {
	Pool     *remote.Pool
	Platform string // the cluster's platform type ("AWS", "Azure", ...): Azure logs in as capi
	Port     int    // SSH port; 0 = ~/.ssh/config's Port for the address, else 22
	// Users maps a BYOH node's address to its user (from windows-instances); nil = none known.
	Users func(addr string) (string, bool)
	// Addrs overrides a node's address ("host:port"): a backend's own hosts (the demo's) listen elsewhere.
	Addrs map[string]string
}

// Host returns the pooled client of the node's host; it dials lazily, on first use.
func (r *PoolResolver) Host(_ context.Context, n model.NodeInfo) (remote.Host, error) {
	t, err := r.Target(n)
	if err != nil {
		return nil, err
	}
	return r.Pool.Host(t)
}

// Target is the SSH target of a node.
func (r *PoolResolver) Target(n model.NodeInfo) (remote.Target, error) {
	if !n.Windows {
		return remote.Target{}, fmt.Errorf("%s is not a Windows node: wmcon only connects to Windows nodes", n.Name)
	}
	host := n.InternalIP
	if host == "" {
		host = n.InternalDNS
	}
	if host == "" {
		return remote.Target{}, fmt.Errorf("node %s has no InternalIP or InternalDNS address to connect to: check its status.addresses", n.Name)
	}
	// Without an explicit port the address stays bare, so the pool can apply ~/.ssh/config's Port for it.
	t := remote.Target{Node: n.Name, Platform: r.Platform, Addr: host}
	if r.Port != 0 {
		t.Addr = net.JoinHostPort(host, strconv.Itoa(r.Port))
	}
	if a, ok := r.Addrs[n.Name]; ok {
		t.Addr = a
	}
	if r.Users != nil {
		if u, ok := r.Users(host); ok && n.BYOH {
			t.User = u
		}
	}
	return t, nil
}

// liveResolver resolves nodes with what the current snapshot says (platform, BYOH users), so the console can
// act before and after the cluster changes without rebuilding anything.
type liveResolver struct{ s *Session }

func (r *liveResolver) Host(ctx context.Context, n model.NodeInfo) (remote.Host, error) {
	pr := &PoolResolver{Pool: r.s.Pool}
	if snap := r.s.Watcher.Current(); snap != nil {
		pr.Platform = snap.Cluster.Platform
		pr.Users = snap.BYOHUser
	}
	pr.Addrs = r.s.backend.HostAddrs()
	return pr.Host(ctx, n)
}

// SSHAddr is where wmcon reaches the host of node n: its InternalIP on the SSH port, unless the backend
// maps the node to its own host.
func (s *Session) SSHAddr(n model.NodeInfo) string {
	if a, ok := s.backend.HostAddrs()[n.Name]; ok {
		return a
	}
	return net.JoinHostPort(n.InternalIP, strconv.Itoa(config.SSHPort))
}
