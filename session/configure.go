package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/localfile"
	"github.com/wmcon/wmcon/nodeconfig"
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
		Version:    func(ctx context.Context) string { return s.nodeVersion(ctx, opts.Version) },
		ReadOnly:   opts.ReadOnly,
	}
}

// demoAddr is where the demo's simulated host for addr listens: an unconfigured host's own address, or a
// node's address (a BYOH entry names its node by address).
func (s *Session) demoAddr(ctx context.Context, addr string) string {
	addrs := s.Demo.HostAddrs()
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

// HostAt reaches a host by address as user (byoh validate --ssh); the demo's addresses map to its hosts.
func (s *Session) HostAt(ctx context.Context, addr, user string) (remote.Host, error) {
	return s.hostAt(ctx, addr, user)
}

// hostAt reaches a host by address, as the pool reaches nodes (user, platform, ssh_config, bastion).
func (s *Session) hostAt(ctx context.Context, addr, user string) (remote.Host, error) {
	t := remote.Target{Addr: addr, User: user}
	if snap := s.Watcher.Current(); snap != nil {
		t.Platform = snap.Cluster.Platform
	}
	if s.Demo != nil {
		t.Addr = s.demoAddr(ctx, addr)
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

// loadPayload verifies the payload from dir, image, the demo's synthetic one, or the installed operator's
// image, pulled with the cluster's pull secret; images are cached by digest.
func (s *Session) loadPayload(ctx context.Context, ops *cluster.Ops, dir, image string) (*payload.Payload, error) {
	cache, err := payload.DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	if dir != "" {
		return payload.LoadDir(dir, cache)
	}
	if image == "" && s.Demo != nil {
		dir, err := s.demoPayloadDir()
		if err != nil {
			return nil, err
		}
		return payload.LoadDir(dir, filepath.Join(cache, "demo"))
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

// demoPayloadDir writes the demo's synthetic payload once per session; the files stay there until Close,
// since a configuration sends them from where they were verified.
func (s *Session) demoPayloadDir() (string, error) {
	s.demoPayloadOnce.Do(func() {
		dir, err := os.MkdirTemp(s.demoDir, "payload-")
		if err == nil {
			if err = payload.WriteSynthetic(dir, allPayloadNames()); err != nil {
				_ = os.RemoveAll(dir)
			}
		}
		if err != nil {
			s.demoPayloadErr = fmt.Errorf("the demo's payload: %w", err)
			return
		}
		s.demoPayload = dir
	})
	return s.demoPayload, s.demoPayloadErr
}

// allPayloadNames is every file any platform's node needs, for the demo's synthetic payload.
func allPayloadNames() []string {
	seen := map[string]bool{}
	out := []string{"powershell/hns.psm1"} // optional in a payload, but deconfiguring needs it
	for _, p := range []string{"None", "AWS", "Azure"} {
		for _, n := range nodeconfig.RequiredPayload(p) {
			if !seen[n] {
				seen[n], out = true, append(out, n)
			}
		}
	}
	return out
}

// pubKeyHash is WMCO's pub-key-hash of the key wmcon logs in with (the first --ssh-key, else the
// cluster's cloud-private-key), "" when it cannot be read without a passphrase.
func (s *Session) pubKeyHash(ctx context.Context, keys []string) string {
	pem, _ := s.clusterKey(ctx)
	if len(keys) > 0 {
		b, err := localfile.Read(remote.ExpandHome(keys[0]), localfile.MaxKey)
		if err != nil {
			return ""
		}
		pem = b
	}
	if len(pem) == 0 {
		return ""
	}
	signer, err := sshkey.Parse(pem, nil)
	if err != nil {
		return ""
	}
	return sshkey.PubKeyHash(signer.PublicKey())
}
