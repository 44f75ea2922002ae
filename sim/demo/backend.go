package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/wmcon/wmcon/backend"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
)

// Backend is the demo cluster as a session's backend (backend.Backend). Besides the cluster it keeps
// what a session on it must not take from the user's own setup: host-key pins and the audit log in a
// throwaway directory, the key its hosts accept, and a synthetic payload for configuring them. Close
// removes all of it.
type Backend struct {
	*Cluster
	dir string // the throwaway directory: known_hosts, audit.log, payload/

	payloadOnce sync.Once
	payloadErr  error
}

var _ backend.Backend = (*Backend)(nil)

// NewBackend starts a demo cluster (New) as a session's backend; the session runs and closes it.
func NewBackend(opts Options) (*Backend, error) {
	dir, err := os.MkdirTemp("", "wmcon-demo-")
	if err != nil {
		return nil, fmt.Errorf("the demo's scratch directory: %w", err)
	}
	c, err := New(opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c.payload.parent = dir
	return &Backend{Cluster: c, dir: dir}, nil
}

// Connect hands over the demo's fake clientsets.
func (b *Backend) Connect(context.Context) (cluster.Clients, cluster.Target, error) {
	return b.Clients, b.Target, nil
}

// Run plays the demo's live changes (Cluster.Run) in the background until ctx ends.
func (b *Backend) Run(ctx context.Context) { go b.Cluster.Run(ctx) }

// Close stops the simulated hosts and removes the throwaway directory.
func (b *Backend) Close() {
	b.Cluster.Close()
	_ = os.RemoveAll(b.dir)
}

// User is "": the demo's user is the local user, never one from the user's kubeconfig.
func (*Backend) User(context.Context) string { return "" }

// Sandbox keeps the demo's pins and audit records out of the user's files; its hosts accept only the demo's
// key, so the user's agent and ssh_config stay out too. The fresh demo's guided setup offers the key file
// its bare hosts were prepared with, as it has no cloud-private-key yet.
func (b *Backend) Sandbox() backend.Sandbox {
	sb := backend.Sandbox{Key: b.KeyPEM, KnownHosts: filepath.Join(b.dir, "known_hosts"),
		AuditLog: filepath.Join(b.dir, "audit.log"), Dir: b.dir, NoUserSSH: true, BareHosts: b.BareHosts()}
	if b.opts.Fresh {
		sb.KeyFile = b.opts.BYOHKeyFile
		if sb.KeyFile == "" {
			sb.KeyFile = DefaultBYOHKeyFile()
		}
	}
	return sb
}

// Exporters reads the simulated hosts' windows_exporters in-process: the demo has no Prometheus.
func (b *Backend) Exporters() *backend.Exporters {
	return &backend.Exporters{Via: "the demo's simulated hosts (in-process)", Why: "the demo cluster has no Prometheus",
		Scrape: func(_ context.Context, n metrics.Node) ([]byte, error) { return b.ScrapeExporter(n) }}
}

// PayloadDir writes the demo's synthetic payload once; the files stay until Close, since a configuration
// sends them from where they were verified.
func (b *Backend) PayloadDir() (string, error) {
	dir := filepath.Join(b.dir, "payload")
	b.payloadOnce.Do(func() {
		if err := payload.WriteSynthetic(dir, allPayloadNames()); err != nil {
			b.payloadErr = fmt.Errorf("the demo's payload: %w", err)
		}
	})
	return dir, b.payloadErr
}

// allPayloadNames is every file any platform's node needs, for the demo's synthetic payload.
func allPayloadNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range []string{"None", "AWS", "Azure"} {
		for _, n := range nodeconfig.RequiredPayload(p) {
			if !seen[n] {
				seen[n], out = true, append(out, n)
			}
		}
	}
	return out
}

// Launcher opens demo clusters for the command line (cli.DemoCluster): --demo, and --demo=fresh for one
// where Windows was never set up.
type Launcher struct{}

// Open starts a demo cluster as a session's backend.
func (Launcher) Open(fresh bool) (backend.Backend, error) {
	b, err := NewBackend(Options{Fresh: fresh})
	if err != nil {
		return nil, err // not a nil *Backend in a non-nil interface
	}
	return b, nil
}

// NodeNames are the demo's node names, without starting it (shell completion).
func (Launcher) NodeNames(fresh bool) (windows, linux []string) { return NodeNames(fresh) }
