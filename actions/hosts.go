package actions

import (
	"context"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

// HostResolver turns a Windows node into its host over SSH. Every action that touches a host gets it here,
// so the console, the headless commands, the demo and the tests differ only in the resolver they pass
// (session.PoolResolver follows WMCO's conventions).
type HostResolver interface {
	Host(ctx context.Context, node model.NodeInfo) (remote.Host, error)
}

// HostKeyPins are where wmcon pins each host's SSH key on first use (on the Node, in the
// windows-ssh-host-keys ConfigMap, or locally); cluster.HostKeyStore has them.
type HostKeyPins interface {
	// Forget removes the key pinned for node's host at addr, wherever it is kept.
	Forget(ctx context.Context, node, addr string) error
}

// HostAt reaches a host by address as user (the session's, which verifies host keys).
type HostAt func(ctx context.Context, addr, user string) (remote.Host, error)
