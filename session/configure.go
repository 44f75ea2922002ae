package session

import (
	"context"
	"errors"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/localfile"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// configureBackends wires configure and deconfigure to the session: the cluster, the pool for hosts that
// have no Node yet, the payload sources, and the key wmcon logs in with.
func (s *Session) configureBackends(ops *cluster.Ops, opts Options) *actions.ConfigureBackends {
	return &actions.ConfigureBackends{
		Cluster: ops,
		HostAt:  s.hostAt,
		Payload: func(ctx context.Context, dir, image string) (*payload.Payload, error) {
			return s.loadPayload(ctx, ops, dir, image)
		},
		PubKeyHash: func(ctx context.Context) string { return s.pubKeyHash(ctx, opts.SSH.Keys) },
		Username:   func(ctx context.Context, user string) string { return s.encryptedUsername(ctx, opts.SSH.Keys, user) },
		Version:    func(ctx context.Context) string { return s.nodeVersion(ctx, opts.Version) },
		ReadOnly:   opts.ReadOnly,
	}
}

// mappedAddr is where the backend's own host for addr listens: an unconfigured host's own address, or a
// node's address (a BYOH entry names its node by address).
func (s *Session) mappedAddr(ctx context.Context, addrs map[string]string, addr string) string {
	if a, ok := addrs[addr]; ok {
		return a
	}
	if snap, err := s.Snapshot(ctx); err == nil {
		if node, ok := snap.NodeByAddress(addr); ok {
			if a, ok := addrs[node]; ok {
				return a
			}
		}
	}
	return addr
}

// HostAt reaches a host by address as user (byoh validate --ssh); addresses the backend maps reach its hosts.
func (s *Session) HostAt(ctx context.Context, addr, user string) (remote.Host, error) {
	return s.hostAt(ctx, addr, user)
}

// hostAt reaches a host by address, as the pool reaches nodes (user, platform, ssh_config, bastion).
func (s *Session) hostAt(ctx context.Context, addr, user string) (remote.Host, error) {
	t := remote.Target{Addr: addr, User: user}
	if snap := s.Watcher.Current(); snap != nil {
		t.Platform = snap.Cluster.Platform
	}
	if addrs := s.backend.HostAddrs(); len(addrs) > 0 {
		t.Addr = s.mappedAddr(ctx, addrs, addr)
	}
	return s.Pool.Host(t)
}

// VersionPrefix marks a version annotation wmcon wrote when no operator was installed.
const VersionPrefix = "wmcon-"

// nodeVersion is what the node's version annotation gets: the installed WMCO's version (so the operator,
// once installed, sees the node as its own), else wmcon's.
func (s *Session) nodeVersion(ctx context.Context, own string) string {
	if snap, err := s.Snapshot(ctx); err == nil && snap.Cluster.WMCOVersion != "" {
		return snap.Cluster.WMCOVersion
	}
	if own == "" {
		own = "dev"
	}
	return VersionPrefix + own
}

// loadPayload verifies the payload from dir, image, the backend's own (the demo's synthetic one), or the
// installed operator's image, pulled with the cluster's pull secret; images are cached by digest.
func (s *Session) loadPayload(ctx context.Context, ops *cluster.Ops, dir, image string) (*payload.Payload, error) {
	cache, err := payload.DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	if dir == "" && image == "" {
		if dir, err = s.backend.PayloadDir(); err != nil {
			return nil, err
		}
	}
	if dir != "" {
		return payload.LoadDir(dir, cache)
	}
	if image == "" {
		if image, err = ops.OperatorImage(ctx); err != nil {
			return nil, err
		}
		if image == "" {
			return nil, errors.New("no payload: WMCO is not installed, so there is no operator image to take it from; give --payload DIR or --payload-image REF")
		}
	}
	return payload.Pull(ctx, image, payload.PullOptions{CacheDir: cache, PullSecret: ops.PullSecret(ctx)})
}

// pubKeyHash is WMCO's pub-key-hash of the key wmcon logs in with (the first --ssh-key, else the
// cluster's cloud-private-key), "" when it cannot be read without a passphrase.
func (s *Session) pubKeyHash(ctx context.Context, keys []string) string {
	pem := s.loginKey(ctx, keys)
	if len(pem) == 0 {
		return ""
	}
	signer, err := sshkey.Parse(pem, nil)
	if err != nil {
		return ""
	}
	return sshkey.PubKeyHash(signer.PublicKey())
}

// loginKey is the private key wmcon logs in with (PEM): the first --ssh-key, else cloud-private-key; nil when
// neither can be read.
func (s *Session) loginKey(ctx context.Context, keys []string) []byte {
	pem, _ := s.clusterKey(ctx)
	if len(keys) > 0 {
		b, err := localfile.Read(remote.ExpandHome(keys[0]), localfile.MaxKey)
		if err != nil {
			return nil
		}
		pem = b
	}
	return pem
}

// encryptedUsername is WMCO's username annotation of a BYOH node for user: encrypted with the key wmcon logs
// in with, as WMCO encrypts it with cloud-private-key; "" when there is no key or no user.
func (s *Session) encryptedUsername(ctx context.Context, keys []string, user string) string {
	pem := s.loginKey(ctx, keys)
	if len(pem) == 0 || user == "" {
		return ""
	}
	v, err := cluster.EncryptUsername(user, pem)
	if err != nil {
		return ""
	}
	return v
}
