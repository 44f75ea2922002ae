// Package windows simulates Windows Server 2022 hosts with OpenSSH and PowerShell for wmcon's tests and
// demo: a real SSH server per host on its own loopback address, an in-memory C: drive served over SFTP,
// a service manager with sc.exe semantics, services that write logs, reboots and network faults.
//
// It understands exactly the command shapes in remote/COMMANDS.md; anything else fails as PowerShell
// fails on an unknown command.
package windows

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/fnv"
	mrand "math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// Options configures one simulated host. Zero values pick the defaults noted on each field.
type Options struct {
	Addr           string     // "127.0.0.N:port"; port 0 picks a free one. Must be loopback.
	HostKey        ssh.Signer // nil: generate ed25519
	AuthorizedKeys []ssh.PublicKey
	User           string        // default "Administrator"
	Hostname       string        // default derived from the address, e.g. "EC2AMAZ-1A2B3C4" on AWS
	Platform       string        // "AWS", "Azure", "VSphere", "None", ...
	Shell          string        // "powershell" (default) or "cmd"
	Configured     bool          // a node WMCO already configured: directories, binaries, config, services running
	RebootDowntime time.Duration // default 2s
	LogInterval    time.Duration // how often running services write log lines; default 1s
	// LogHistory is how many intervals of log lines the services running at start already have, as if
	// the host had been up that long (0: logs start with the services' start lines).
	LogHistory int
	// StoppedAgo are services (by name) that stopped this long before Start, as a kubelet that crashed
	// minutes ago: they are stopped, and their log history ends when they stopped (an honest log writes
	// nothing after its service stops).
	StoppedAgo map[string]time.Duration
	Gateway    string // default "127.0.0.1" (text only, never dialled)
	// LoseMetadataRouteOnReboot drops the EC2 metadata route at every boot, as EC2Launch sometimes does.
	LoseMetadataRouteOnReboot bool
	Clock                     func() time.Time // optional, for deterministic logs and events
	// Programs are the code behind executables, by file name ("kubelet.exe"): each runs while a service
	// starting that executable (directly or under kube-log-runner.exe) is RUNNING. Without one, a service
	// only writes plausible log lines. sim/kubelet provides an honest kubelet.
	Programs map[string]Program
	// ServicePending is how long sc.exe start/stop leave a service START_PENDING/STOP_PENDING before it
	// reaches RUNNING/STOPPED; default 100ms. Clients must poll, as on Windows.
	ServicePending time.Duration
	// ExporterPort is where the simulated windows_exporter serves /metrics on the host's address while
	// its service runs. 0 picks a free port (tests run in parallel); RealExporterPort is 9182. A
	// windows_exporter.exe entry in Programs replaces the simulated exporter.
	ExporterPort int
	// HybridOverlaySubnet is the node's pod subnet: hybrid-overlay-node gives it to the HNS network it creates
	// (on a cluster it is the node's k8s.ovn.org/hybrid-overlay-node-subnet annotation). Default: a /24 in
	// 127.0.0.0/8 derived from the host's address.
	HybridOverlaySubnet string
	// AWSLocalHostname is the instance metadata's local-hostname on AWS, the name AWS's cloud provider knows
	// the instance by (default: ip-127-0-0-N.ec2.internal from the address). GCPHostname is GCP's instance
	// hostname (default: the host name, lower case, in a project's internal domain).
	AWSLocalHostname, GCPHostname string
	// DNSSuffix is the computer's primary DNS suffix (ipconfig /all's "Primary Dns Suffix"; a vSphere node's
	// name is the host name with it). Default: none.
	DNSSuffix string
	// NoDefender: Windows Defender's antimalware service (MsMpEng) does not run, as on an image without it.
	NoDefender bool
	// ContainerdPipeDelay is how long containerd takes, once its service is RUNNING, to open its named pipe
	// \\.\pipe\containerd-containerd (Process.PipeOpen), as the real one does: a kubelet started in that
	// moment exits with the pipe error and its recovery action restarts it. Default 250ms; negative: the
	// pipe opens with the service (the race never happens).
	ContainerdPipeDelay time.Duration
	// ExporterCert and ExporterKey (PEM) are the certificate a Configured host's windows_exporter serves TLS
	// with, as WMCO writes it from its secret windows-machine-config-operator-tls (nil: one of the host's own).
	ExporterCert, ExporterKey []byte
	// APIServerURL is the internal API server URL a Configured host was configured for (default
	// https://api-int.winsim.example:6443; never dialled): its hybrid-overlay-node command and kubeconfig name it.
	APIServerURL string
}

// Host is one simulated Windows host. All methods are safe for concurrent use.
type Host struct {
	opts Options
	fs   *memFS
	home string // C:\Users\<user>

	mu          sync.Mutex
	hostKey     ssh.Signer
	listener    net.Listener
	addr        string
	conns       map[net.Conn]struct{}
	up          bool
	closed      bool
	reboots     int
	latency     time.Duration
	dropAfter   int64 // bytes the next session may send before its connection is cut; <0: off
	refuseAuth  bool
	neverReturn bool
	commands    []string
	executed    []string
	env         map[string]envVar // key: lower-case name
	routes      []route
	events      []scmEvent
	services    map[string]*service   // key: lower-case name
	hns         map[string]hnsNetwork // HNS networks by name (hybrid-overlay-node creates its own)
	endpoints   []*hnsEndpoint        // HNS endpoints, by creation
	exclusions  []string              // Windows Defender's process exclusions
	epoch       int                   // boot number; timers from an earlier boot do nothing
	bootCtx     context.Context       // ends when this boot ends; service programs run under it
	bootCancel  context.CancelFunc    // stops this boot's service loggers and programs
	rng         *mrand.Rand
	logTick     int

	metrics      *metricsState // the simulated load windows_exporter reports
	exporterAddr string        // where windows_exporter listened first; kept across restarts
	exporterTLS  bool          // it serves TLS (its web configuration has a certificate)

	activeExecs atomic.Int64 // commands still running, e.g. a follow; tests check it drains

	// nameMu guards the computer's name (opts.Hostname) and the name Rename-Computer gave it, which
	// Windows takes only at the next boot.
	nameMu      sync.Mutex
	pendingName string

	closing chan struct{}
	wg      sync.WaitGroup
}

// Start brings a host up and returns once it accepts SSH connections.
func Start(opts Options) (*Host, error) {
	if err := applyDefaults(&opts); err != nil {
		return nil, err
	}
	h := &Host{
		opts:      opts,
		fs:        newMemFS(opts.Clock),
		home:      `C:\Users\` + opts.User,
		hostKey:   opts.HostKey,
		addr:      opts.Addr,
		conns:     map[net.Conn]struct{}{},
		dropAfter: -1,
		env:       defaultEnv(opts),
		services:  map[string]*service{},
		rng:       mrand.New(mrand.NewPCG(seedOf(opts.Hostname), 1)),
		closing:   make(chan struct{}),
		metrics:   newMetricsState(opts.Clock()),
	}
	h.install()
	if err := h.boot(); err != nil {
		return nil, err
	}
	h.writeHistory()
	for name := range opts.StoppedAgo {
		h.StopService(name)
	}
	return h, nil
}

func applyDefaults(o *Options) error {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("winsim: address %q: %w (use 127.0.0.N:port)", o.Addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("winsim: address %q is not a loopback address; the simulator only listens on 127.0.0.0/8 or ::1", o.Addr)
	}
	if o.HostKey == nil {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return fmt.Errorf("winsim: generate host key: %w", err)
		}
		if o.HostKey, err = ssh.NewSignerFromKey(priv); err != nil {
			return fmt.Errorf("winsim: host key: %w", err)
		}
	}
	if o.User == "" {
		o.User = "Administrator"
	}
	if o.Shell == "" {
		o.Shell = "powershell"
	}
	if o.Shell != "powershell" && o.Shell != "cmd" {
		return fmt.Errorf("winsim: shell %q: use \"powershell\" or \"cmd\"", o.Shell)
	}
	if o.Platform == "" {
		o.Platform = "None"
	}
	if o.Hostname == "" {
		o.Hostname = derivedHostname(o.Platform, o.Addr)
	}
	if err := validComputerName(o.Hostname); err != nil {
		return err
	}
	if o.APIServerURL == "" {
		o.APIServerURL = simAPIServer
	}
	if o.HybridOverlaySubnet == "" {
		o.HybridOverlaySubnet = defaultNodeSubnet(o.Addr)
	}
	if _, n, err := net.ParseCIDR(o.HybridOverlaySubnet); err != nil || !n.IP.IsLoopback() {
		return fmt.Errorf("winsim: hybrid overlay subnet %q is not a CIDR in 127.0.0.0/8 (the simulator only hands out loopback addresses)", o.HybridOverlaySubnet)
	}
	if o.AWSLocalHostname == "" {
		o.AWSLocalHostname = defaultAWSLocalHostname(o.Addr)
	}
	if o.GCPHostname == "" {
		o.GCPHostname = strings.ToLower(o.Hostname) + ".c.winsim-project.internal"
	}
	if o.RebootDowntime <= 0 {
		o.RebootDowntime = 2 * time.Second
	}
	if o.LogInterval <= 0 {
		o.LogInterval = time.Second
	}
	if o.ServicePending <= 0 {
		o.ServicePending = 100 * time.Millisecond
	}
	if o.ContainerdPipeDelay == 0 {
		o.ContainerdPipeDelay = 250 * time.Millisecond
	}
	if o.Gateway == "" {
		o.Gateway = "127.0.0.1"
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	programs := make(map[string]Program, len(o.Programs))
	for name, p := range o.Programs {
		programs[strings.ToLower(name)] = p
	}
	if _, ok := programs["windows_exporter.exe"]; !ok {
		programs["windows_exporter.exe"] = runExporter
	}
	if _, ok := programs["kube-proxy.exe"]; !ok {
		programs["kube-proxy.exe"] = runKubeProxy
	}
	o.Programs = programs
	if o.ExporterPort < 0 || o.ExporterPort > 65535 {
		return fmt.Errorf("winsim: exporter port %d: use 0 (a free port) to 65535", o.ExporterPort)
	}
	return nil
}

func seedOf(s string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(s))
	return f.Sum64()
}

// derivedHostname names the host the way each platform's images do, stable for an address.
func derivedHostname(platform, addr string) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	r := mrand.New(mrand.NewPCG(seedOf(addr), 2))
	suffix := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	if strings.EqualFold(platform, "AWS") {
		return "EC2AMAZ-" + suffix(7)
	}
	return "WIN-" + suffix(11)
}

// validComputerName holds Options.Hostname to what Windows allows a computer name to be, since hostname
// prints it: a single DNS label (at most 63 letters, digits and hyphens, not only digits; Windows keeps the
// first 15 characters as its NetBIOS name) — never a DNS name with dots, which is what a cloud provider may
// call the instance instead (AWS's ip-a-b-c-d.ec2.internal).
func validComputerName(name string) error {
	bad := len(name) > 63 || strings.Trim(name, "0123456789") == ""
	for _, r := range name {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("winsim: host name %q is not a Windows computer name (letters, digits and hyphens, no dots)", name)
	}
	return nil
}

// defaultNodeSubnet derives a host's pod subnet from its address: 127.0.0.N → 127.N.64.0/24.
func defaultNodeSubnet(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	last := byte(1)
	if ip := net.ParseIP(host).To4(); ip != nil {
		last = ip[3]
	}
	return fmt.Sprintf("127.%d.64.0/24", last)
}

func (h *Host) now() time.Time { return h.opts.Clock() }

// Now is the host's clock (Options.Clock): what its kubelet stamps its heartbeats with.
func (h *Host) Now() time.Time { return h.now() }

// boot listens, resets what a restart resets, and starts the auto-start services.
func (h *Host) boot() error {
	l, err := listenRetry(h.addr)
	if err != nil {
		return fmt.Errorf("winsim: listen on %s: %w", h.addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		cancel()
		l.Close()
		return errors.New("winsim: host closed")
	}
	h.takePendingName()
	h.listener = l
	h.addr = l.Addr().String()
	h.up = true
	h.epoch++
	h.bootCtx, h.bootCancel = ctx, cancel
	h.routes = bootRoutes(h.opts, h.reboots > 0)
	h.startAutoServicesLocked()
	h.mu.Unlock()
	h.wg.Add(2)
	go h.acceptLoop(l)
	go h.logLoop(ctx)
	return nil
}

// listenRetry re-binds the same address after a reboot; the port may take a moment to be free.
func listenRetry(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var l net.Listener
		if l, err = net.Listen("tcp", addr); err == nil {
			return l, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}

// Addr is the host:port the host listens on.
func (h *Host) Addr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.addr
}

// HostKey is the public host key new connections see.
func (h *Host) HostKey() ssh.PublicKey {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hostKey.PublicKey()
}

// Hostname is what `hostname` prints.
func (h *Host) Hostname() string {
	h.nameMu.Lock()
	defer h.nameMu.Unlock()
	return h.opts.Hostname
}

// renameAtBoot is Rename-Computer: Windows keeps the new name until the next boot takes it.
func (h *Host) renameAtBoot(name string) {
	h.nameMu.Lock()
	defer h.nameMu.Unlock()
	h.pendingName = name
}

// takePendingName gives the computer the name Rename-Computer set, as a restart does.
func (h *Host) takePendingName() {
	h.nameMu.Lock()
	defer h.nameMu.Unlock()
	if h.pendingName != "" {
		h.opts.Hostname, h.pendingName = h.pendingName, ""
	}
}

// Close stops the host: listener, connections, services. It is idempotent.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	close(h.closing)
	h.goDownLocked()
	h.mu.Unlock()
	h.wg.Wait()
	return nil
}

// goDownLocked stops listening, cuts every connection and stops the services without SCM events, as a
// shutdown does.
func (h *Host) goDownLocked() {
	h.up = false
	h.epoch++
	if h.listener != nil {
		h.listener.Close()
		h.listener = nil
	}
	for c := range h.conns {
		c.Close()
	}
	if h.bootCancel != nil {
		h.bootCancel()
	}
	for _, s := range h.services {
		s.endProcessLocked()
		s.state = StateStopped
		s.pid = 0
	}
	h.metrics.endContainers() // a shutdown ends every container (exporter_containers.go)
}

// Reboot restarts the host as Restart-Computer -Force does: it goes down now, refuses connections for
// RebootDowntime, then comes back on the same address with the same host key (unless SetNeverReturn).
func (h *Host) Reboot() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.up || h.closed {
		return
	}
	h.goDownLocked()
	h.wg.Add(1)
	go h.comeBack()
}

func (h *Host) comeBack() {
	defer h.wg.Done()
	select {
	case <-time.After(h.opts.RebootDowntime):
	case <-h.closing:
		return
	}
	h.mu.Lock()
	never := h.neverReturn
	if !never {
		h.reboots++
	}
	h.mu.Unlock()
	if never {
		return
	}
	_ = h.boot() // a failure leaves the host down, which tests observe through Up()
}

// Up reports whether the host accepts connections (false while rebooting or down).
func (h *Host) Up() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.up
}

// Reboots counts completed reboots.
func (h *Host) Reboots() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reboots
}

// BootID identifies the host's current boot, as a kubelet reports it in status.nodeInfo.bootID: it changes
// at every reboot and never when a service restarts.
func (h *Host) BootID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return fmt.Sprintf("wmcon-sim-boot-%d", h.reboots)
}

// Commands returns every exec command line received, in order, for round-trip counting.
func (h *Host) Commands() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.commands...)
}

// HasCommand reports whether a command line containing part has been received.
func (h *Host) HasCommand(part string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.commands {
		if strings.Contains(c, part) {
			return true
		}
	}
	return false
}

// Executed returns the PowerShell lines actually run, with -EncodedCommand payloads decoded.
func (h *Host) Executed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.executed...)
}

// ReadFile returns a file of the simulated C: drive.
func (h *Host) ReadFile(winPath string) ([]byte, error) {
	p, err := cleanWinPath(winPath, h.home)
	if err != nil {
		return nil, err
	}
	b, err := h.fs.readFile(p)
	if err != nil {
		return nil, fmt.Errorf("winsim: read %s: %w", winPath, err)
	}
	return append([]byte(nil), b...), nil
}

// WriteFile writes a file, creating its directories.
func (h *Host) WriteFile(winPath string, data []byte) error {
	p, err := cleanWinPath(winPath, h.home)
	if err != nil {
		return err
	}
	if err := h.fs.writeFile(p, data, true); err != nil {
		return fmt.Errorf("winsim: write %s: %w", winPath, err)
	}
	return nil
}

// RemoveFile deletes a file or directory tree, e.g. to misconfigure a node.
func (h *Host) RemoveFile(winPath string) error {
	p, err := cleanWinPath(winPath, h.home)
	if err != nil {
		return err
	}
	return h.fs.remove(p, true)
}

// Exists reports whether a file or directory exists.
func (h *Host) Exists(winPath string) bool {
	p, err := cleanWinPath(winPath, h.home)
	if err != nil {
		return false
	}
	_, err = h.fs.stat(p)
	return err == nil
}

// List names the entries of a directory, sorted; nil when it does not exist.
func (h *Host) List(winPath string) []string {
	p, err := cleanWinPath(winPath, h.home)
	if err != nil {
		return nil
	}
	nodes, err := h.fs.list(p)
	if err != nil {
		return nil
	}
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = baseOf(n.path)
	}
	return out
}

// HoldOpen makes another process on the host hold a file or directory open, as containerd does while it
// reads a hosts.toml or as an antivirus scan does: until release is called Windows refuses to rename or
// delete it or any directory above it ("Access to the path … is denied.").
func (h *Host) HoldOpen(winPath string) (release func(), err error) {
	p, err := cleanWinPath(winPath, h.home)
	if err != nil {
		return nil, err
	}
	return h.fs.hold(p)
}

// AppendLog appends lines to a log file as a service would.
func (h *Host) AppendLog(winPath string, lines ...string) {
	p, err := cleanWinPath(winPath, h.home)
	if err != nil {
		return
	}
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	_ = h.fs.appendFile(p, []byte(sb.String()))
}

// RotateLog moves a log to <path>.1 and starts it again empty; followers start from its beginning.
func (h *Host) RotateLog(winPath string) {
	if p, err := cleanWinPath(winPath, h.home); err == nil {
		h.fs.rotate(p)
	}
}

// Env returns a machine environment variable.
func (h *Host) Env(name string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.env[strings.ToLower(name)]
	return v.value, ok
}

// SetEnv sets a machine environment variable as an administrator (or a previous tool) left it.
func (h *Host) SetEnv(name, value string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.env[strings.ToLower(name)] = envVar{name: name, value: value}
}

// SetLatency adds d before every reply and every packet the host sends.
func (h *Host) SetLatency(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.latency = d
}

func (h *Host) currentLatency() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.latency
}

// DropConnections abruptly closes every live connection.
func (h *Host) DropConnections() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.conns {
		c.Close()
	}
}

// DropAfterBytes cuts the next session opened (exec or SFTP) after it has sent n bytes: its TCP
// connection is closed abruptly, mid-output or mid-transfer. A negative n disarms it.
func (h *Host) DropAfterBytes(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropAfter = n
}

// takeDropBudget arms the fault for one session.
func (h *Host) takeDropBudget() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.dropAfter
	h.dropAfter = -1
	return n
}

// SetHostKey changes the host key new connections see.
func (h *Host) SetHostKey(s ssh.Signer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hostKey = s
}

// SetRefuseAuth makes every authentication attempt fail.
func (h *Host) SetRefuseAuth(refuse bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refuseAuth = refuse
}

// SetNeverReturn makes the next reboot leave the host down for good.
func (h *Host) SetNeverReturn(never bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.neverReturn = never
}
