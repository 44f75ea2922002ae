package session

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote"
)

// SSHOptions say how to reach Windows hosts (the --ssh-* flags).
type SSHOptions struct {
	Keys          []string // private key files; none = the cluster's cloud-private-key secret
	User          string   // "" = WMCO's user for the platform (and BYOH's windows-instances user)
	Bastion       string   // jump hosts in ProxyJump form; "" = the cluster's run=ssh-bastion Service, if any
	SSHConfig     string   // an ssh_config file for addresses and jump hosts; "" = none
	KnownHosts    string   // local pins when the cluster cannot store host keys; "" = ~/.config/wmcon/known_hosts
	Agent         bool     // also offer the ssh-agent's keys when there is an agent
	AgentRequired bool     // --ssh-agent given explicitly: a missing agent is an error, not skipped
	PassphraseEnv string   // the variable holding an encrypted key's passphrase
	// Passphrase asks for an encrypted key's passphrase (the console's prompt); nil reads PassphraseEnv.
	Passphrase remote.PassphraseFunc
}

// openPool builds the SSH pool: keys from the options or the cluster's secret, pins on the cluster
// (known_hosts when RBAC forbids), and the bastion from the options or the cluster's run=ssh-bastion Service.
func (s *Session) openPool(ctx context.Context, opts Options) error {
	o := opts.SSH
	if o.Passphrase == nil {
		o.Passphrase = remote.PassphraseFromEnv(o.PassphraseEnv)
	}
	sandbox := s.backend.Sandbox()
	pins, unavailable := knownHostsPath(o.KnownHosts, sandbox.KnownHosts)
	local := &remote.KnownHostsStore{Path: pins, Unavailable: unavailable}
	s.HostKeys = &cluster.HostKeyStore{Kube: s.Clients.Kube, Local: local, NodeFor: s.nodeFor,
		NodeAnnotations: s.nodeAnnotations, ReadOnly: opts.ReadOnly, Told: opts.KeyTrustedOnce}
	cfg := remote.Config{
		ReadOnly: opts.ReadOnly,
		Auth: remote.Auth{KeyFiles: o.Keys, Agent: o.Agent && !sandbox.NoUserSSH, Passphrase: o.Passphrase,
			AgentRequired: o.AgentRequired && !sandbox.NoUserSSH},
		User:     o.User,
		HostKeys: s.HostKeys,
	}
	// The cluster's key and bastion are looked up when the first action reaches a host, not at start: the
	// first screen needs neither, and most sessions never log in to a host.
	if len(o.Keys) == 0 {
		cfg.Auth.LoadKeyPEM = func() ([]byte, string) { return s.clusterKey(ctx) }
	}
	if o.Bastion != "" {
		jumps, err := remote.ParseJumpSpec(o.Bastion)
		if err != nil {
			return fmt.Errorf("--ssh-bastion %q: %w (expected [user@]host[:port][,...])", o.Bastion, err)
		}
		cfg.Jumps = jumps
	} else if !sandbox.NoUserSSH {
		cfg.FindJumps = func() ([]remote.Hop, error) { return s.clusterBastion(ctx) }
	}
	var err error
	if !sandbox.NoUserSSH {
		cfg.SSHConfigPath = o.SSHConfig
	}
	s.Pool, err = remote.NewPool(cfg)
	return err
}

// lookupTimeout bounds the lookups of the cluster's key and bastion an action's first login waits for.
const lookupTimeout = 15 * time.Second

// useClusterKey hands the pool cloud-private-key once the guided setup installed it, so a host configured
// later in the same run is logged in to with it; with --ssh-key the user's keys stay what is offered.
func (s *Session) useClusterKey(opts Options) func(ctx context.Context) {
	return func(ctx context.Context) {
		if len(opts.SSH.Keys) > 0 || s.Pool == nil {
			return
		}
		if pemBytes, name := s.clusterKey(ctx); len(pemBytes) > 0 {
			s.Pool.UseKeyPEM(pemBytes, name)
		}
	}
}

// clusterKey reads cloud-private-key, the key WMCO itself uses. The key the cluster holds wins on every
// backend: a simulated cluster's hosts made after a new key was installed accept only that key. Without
// the secret, a simulated backend offers the key its own hosts accept, and a real cluster falls back to
// the agent.
func (s *Session) clusterKey(ctx context.Context) ([]byte, string) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	sec, err := s.Clients.Kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, config.PrivateKeySecret, metav1.GetOptions{})
	if err == nil && len(sec.Data[config.PrivateKeySecretKey]) > 0 {
		return sec.Data[config.PrivateKeySecretKey], config.PrivateKeySecret
	}
	if key := s.backend.Sandbox().Key; key != nil {
		return key, "the demo's key"
	}
	return nil, ""
}

// clusterBastion finds the cluster's ssh-bastion Service (user core); none, or a failed lookup, means
// nodes are dialled directly.
func (s *Session) clusterBastion(ctx context.Context) ([]remote.Hop, error) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addr, ok, err := cluster.FindBastion(ctx, s.Clients.Kube)
	if err != nil || !ok {
		return nil, err
	}
	return remote.ParseJumpSpec(config.BastionUser + "@" + addr)
}

// nodeFor names the node of a host address, for the host-key pins kept on Nodes.
func (s *Session) nodeFor(addr string) (string, bool) {
	if snap := s.Watcher.Current(); snap != nil {
		return snap.NodeByAddress(addr)
	}
	return "", false
}

// nodeAnnotations are a node's annotations in the watcher's current snapshot (the cache's own map).
func (s *Session) nodeAnnotations(node string) (map[string]string, bool) {
	if snap := s.Watcher.Current(); snap != nil {
		if n, ok := snap.Node(node); ok {
			return n.Annotations, true
		}
	}
	return nil, false
}

// knownHostsPath is the local pin file: the option (made absolute), else $XDG_CONFIG_HOME or
// ~/.config/wmcon/known_hosts. Never a path relative to the working directory: without an absolute home
// it returns why, and pins that would go there are refused. A backend that keeps its own pins (the demo's
// throwaway file, sandbox) never touches the user's.
func knownHostsPath(flag, sandbox string) (string, error) {
	if flag != "" {
		p, err := filepath.Abs(remote.ExpandHome(flag))
		if err != nil {
			return "", fmt.Errorf("--known-hosts %s: %w", flag, err)
		}
		return p, nil
	}
	if sandbox != "" {
		return sandbox, nil
	}
	return remote.DefaultKnownHostsPath()
}
