// Package backend is what wmcon works on: a real cluster, reached through the kubeconfig, and its Windows
// hosts over SSH (Cluster); or the built-in demo, whose cluster and hosts are simulated (sim/demo implements
// Backend, and main hands it to the command line: the product never imports sim/). A session takes one
// Backend and does everything else the same way on both, so the interface holds exactly what differs.
package backend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/metrics"
)

// Backend is the cluster and hosts a session works on. The session owns it: it calls Connect, then Run
// once its clients are final, and Close when it ends (also when it fails to start).
type Backend interface {
	// Connect returns the cluster's clients and what they point at.
	Connect(ctx context.Context) (cluster.Clients, cluster.Target, error)
	// Run starts what the backend simulates and returns at once; it runs until ctx ends. The session calls
	// it after wrapping the clients (--read-only's guard), which must not change under a running simulation.
	Run(ctx context.Context)
	// Close stops what Run started and removes the backend's files.
	Close()
	// User names the user in audit records; "" names the local user.
	User(ctx context.Context) string
	// Sandbox is what the backend keeps apart from the user's own files and SSH setup.
	Sandbox() Sandbox
	// HostAddrs maps node names and host addresses to where their SSH servers listen, when that is not the
	// address the cluster reports (the demo's hosts listen on loopback ports); nil when none is mapped. It
	// changes as hosts come and go, so callers ask again each time.
	HostAddrs() map[string]string
	// Exporters are the backend's own windows_exporters, read in-process; nil: the session reads the
	// nodes' exporters through the cluster (Prometheus, the node proxy, or SSH).
	Exporters() *Exporters
	// PayloadDir is the payload a configuration uses when the user names none, written on first use;
	// "" means the installed operator's image.
	PayloadDir() (string, error)
}

// Sandbox is what a simulated backend provides in place of the user's own setup and the cluster's
// secrets, so that running it never touches the user's pins, audit log or SSH agent. The zero value is a
// real cluster's: nothing is kept apart.
type Sandbox struct {
	// Key is the private key (PEM) the hosts accept, offered when no --ssh-key is given in place of the
	// cluster's cloud-private-key secret.
	Key []byte
	// KeyFile is a private key file the guided setup offers in its key step ("" offers none).
	KeyFile string
	// KnownHosts is the host-key pin file used when --known-hosts is not given.
	KnownHosts string
	// AuditLog is the audit log the session writes instead of the user's ($WMCON_AUDIT_LOG is ignored).
	AuditLog string
	// Dir is the private directory holding the files above, which Close removes; a process that a signal
	// ends at once removes it too (session.RemoveSandboxFiles).
	Dir string
	// NoUserSSH leaves out the user's ssh-agent, ssh_config and the cluster's bastion: the hosts are the
	// backend's own, on loopback, and accept Key.
	NoUserSSH bool
	// BareHosts are the addresses of unconfigured Windows hosts the console offers to configure.
	BareHosts []string
}

// KeyOut is where a generated private key of kind (ed25519, rsa) goes when no path is given: the backend's
// private directory (the demo never writes into ~/.ssh), else ~/.ssh/wmcon_windows_KIND. Every default
// (wizard, O view, wmcon setup --generate-key, doctor's hint) is this one path.
func (s Sandbox) KeyOut(kind string) (string, error) {
	name := "wmcon_windows_" + kind
	if s.Dir != "" {
		return filepath.Join(s.Dir, name), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the default key file (%w): give the path", err)
	}
	return filepath.Join(home, ".ssh", name), nil
}

// Exporters are windows_exporters a backend serves in-process.
type Exporters struct {
	Scrape metrics.Scrape // reads one node's exporter
	Via    string         // where the figures come from, for the user
	Why    string         // why they come from there
}
