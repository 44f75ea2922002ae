package remote

import (
	"context"
	"io"
	"time"
)

// A Windows host over SSH is a small transport plus capabilities, as WMCO keeps its transport apart from
// the host procedures. Each consumer declares the few methods it needs where it uses them (composed from
// these), so a test fake implements only those; *Client implements all of them, and Host is their union
// for the resolvers that hand a host out.

// Transport runs commands and moves files: everything else is built on it.
type Transport interface {
	Name() string // user@address, for messages
	Run(ctx context.Context, cmd string) (Result, error)
	RunOK(ctx context.Context, cmd string) (string, error)
	Stream(ctx context.Context, cmd string, line func(Line)) (int, error)
	Upload(ctx context.Context, files []Upload, opts UploadOptions) (UploadReport, error)
	Download(ctx context.Context, remotePath string, w io.Writer, progress func(int64)) error
	// Hostname is the name the host gives itself: the cheapest proof that it answers.
	Hostname(ctx context.Context) (string, error)
}

// Files reads and changes files and directories, one round trip for many paths where it can (batch.go).
type Files interface {
	Exists(ctx context.Context, path string) (bool, error)
	FileHash(ctx context.Context, path string) (string, error)
	Remove(ctx context.Context, path string, recurse bool) error
	// ReplaceDir swaps a whole directory for files, all or nothing; ReadTree reads one back.
	ReplaceDir(ctx context.Context, dir string, files map[string][]byte, opts ReplaceDirOptions) error
	ReadTree(ctx context.Context, dir string) (map[string][]byte, bool, error)
	PathsExist(ctx context.Context, paths []string) (map[string]bool, error)
	FileHashes(ctx context.Context, paths []string) (map[string]string, error)
	MakeDirs(ctx context.Context, paths []string) error
	RemovePaths(ctx context.Context, paths []string) error
	ListDir(ctx context.Context, path string) ([]string, error)
	// UploadLeftovers lists the temporary files interrupted uploads left in dirs.
	UploadLeftovers(ctx context.Context, dirs []string) ([]string, error)
	// PublicKeyOf reads a private key file and returns only its public half (keyfile.go).
	PublicKeyOf(ctx context.Context, path string) (KeyFile, bool, error)
}

// Logs reads log files: followed across drops and rotations, or their end once.
type Logs interface {
	Tail(ctx context.Context, path string, opts TailOptions, ev func(TailEvent)) error
	TailOnce(ctx context.Context, path string, n int) ([]string, error)
}

// Services reads and changes Windows services (sc.exe semantics), and reads the Service Control
// Manager's events.
type Services interface {
	ServiceQuery(ctx context.Context, name string) (ServiceStatus, error)
	ServiceStates(ctx context.Context, names ...string) (map[string]ServiceState, error)
	ServiceConfigs(ctx context.Context, names ...string) (map[string]ServiceConfig, error)
	CreateService(ctx context.Context, spec ServiceSpec) error
	StartService(ctx context.Context, name string) error
	StopService(ctx context.Context, name string) error
	DeleteService(ctx context.Context, name string) error
	EnsureServices(ctx context.Context, specs []ServiceSpec) error
	ServiceEvents(ctx context.Context, max int) ([]ServiceEvent, error)
}

// Rebooter restarts the host and follows it down and back up.
type Rebooter interface {
	Reboot(ctx context.Context, opts RebootOptions) error
}

// Routes reads and repairs the EC2 metadata route.
type Routes interface {
	Gateway(ctx context.Context) (string, error)
	HasMetadataRoute(ctx context.Context) (bool, error)
	EnsureMetadataRoute(ctx context.Context) (bool, error)
}

// Environment reads and changes machine-wide environment variables (the registry's).
type Environment interface {
	GetEnv(ctx context.Context, name string) (string, error)
	SetEnv(ctx context.Context, name, value string) error
	RemoveEnv(ctx context.Context, name string) error
	GetEnvs(ctx context.Context, names []string) (map[string]string, error)
	SetEnvs(ctx context.Context, vars map[string]string) error
}

// Networks reads and removes the host's HNS networks (through WMCO's hns.psm1 module).
type Networks interface {
	HNSNetworks(ctx context.Context, module string) ([]string, error)
	RemoveHNSNetworks(ctx context.Context, module string, names []string) error
}

// Clock reads the host's clock: a kubelet's certificates and wmcon's CSR checks need it close to the API
// server's.
type Clock interface {
	HostTime(ctx context.Context) (time.Time, error)
}

// Host is every capability: what a resolver hands out and *Client implements.
type Host interface {
	Transport
	Files
	Logs
	Services
	Rebooter
	Routes
	Environment
	Networks
	Clock
	HostNetwork
	PreScripts
	Defender
	CloudMetadata
	ComputerName
	HostDNS
}

var _ Host = (*Client)(nil)
