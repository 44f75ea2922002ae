package windows

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"sigs.k8s.io/yaml"
)

// RealExporterPort is the port windows_exporter listens on on a real node.
const RealExporterPort = 9182

// Load is the simulated work a host does; windows_exporter's series follow it. Counters (CPU time,
// network bytes) grow at the rates in force since the last change, so a scraper sees realistic rates.
type Load struct {
	CPUBusy    float64 // fraction of all cores' time not idle, 0..1, besides the containers' (ContainerLoad)
	MemoryUsed float64 // fraction of physical memory in use, 0..1, besides the containers' working sets
	RxBytesPS  float64 // bytes received per second on the host's NIC, besides the containers'
	TxBytesPS  float64 // bytes sent per second, besides the containers'
}

// Volume is one logical disk as windows_exporter's logical_disk collector sees it.
type Volume struct {
	Name      string // "C:", or "HarddiskVolume1" for a partition without a drive letter
	SizeBytes float64
	FreeBytes float64
}

// Hardware a simulated host has.
const (
	simCores        = 4
	simMemoryBytes  = 16 << 30
	simNIC          = "Amazon Elastic Network Adapter"
	simCDriveBytes  = 128 << 30
	simRecoveryPart = 529 << 20
)

// metricsState is the host's load and the counters that integrate it. It has its own lock: the
// exporter reads it from its own goroutine while the host's lock may be held by the SCM.
type metricsState struct {
	mu      sync.Mutex
	load    Load
	volumes []Volume
	last    time.Time
	idle    float64 // seconds per core
	user    float64
	priv    float64
	rx, tx  float64

	containers map[string]*simContainer // by ID (exporter_containers.go)
}

func newMetricsState(now time.Time) *metricsState {
	return &metricsState{
		load: Load{CPUBusy: 0.12, MemoryUsed: 0.45, RxBytesPS: 180e3, TxBytesPS: 60e3},
		volumes: []Volume{
			{Name: "C:", SizeBytes: simCDriveBytes, FreeBytes: simCDriveBytes * 0.6},
			// The recovery partition is nearly full on every real host; a reader must not mistake it
			// for the system drive.
			{Name: "HarddiskVolume1", SizeBytes: simRecoveryPart, FreeBytes: 90 << 20},
		},
		last: now,
	}
}

// advanceLocked adds the counters' growth since the last call at the current rates.
func (m *metricsState) advanceLocked(now time.Time) {
	dt := now.Sub(m.last).Seconds()
	if dt <= 0 {
		return
	}
	m.last = now
	cores, _ := m.containerUseLocked()
	busy := min(max(m.load.CPUBusy+cores/simCores, 0), 1)
	rx, tx := m.containerTrafficLocked()
	m.advanceContainersLocked(dt)
	m.idle += dt * (1 - busy)
	m.user += dt * busy * 0.7
	m.priv += dt * busy * 0.3
	m.rx += dt * (m.load.RxBytesPS + rx)
	m.tx += dt * (m.load.TxBytesPS + tx)
}

// SetLoad changes the host's simulated load from now on.
func (h *Host) SetLoad(l Load) {
	m := h.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advanceLocked(h.now())
	m.load = l
}

// Load returns the host's simulated load.
func (h *Host) Load() Load {
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	return h.metrics.load
}

// SetVolumeFree sets how many bytes of a volume are free (filling or cleaning a disk). An unknown
// volume is an error.
func (h *Host) SetVolumeFree(name string, freeBytes float64) error {
	m := h.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.volumes {
		if strings.EqualFold(m.volumes[i].Name, name) {
			m.volumes[i].FreeBytes = min(max(freeBytes, 0), m.volumes[i].SizeBytes)
			return nil
		}
	}
	return fmt.Errorf("winsim: no volume %q on %s", name, h.Hostname())
}

// Volumes returns the host's logical disks.
func (h *Host) Volumes() []Volume {
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	return slices.Clone(h.metrics.volumes)
}

// ExporterAddr is where the host's windows_exporter listens while its service runs ("" before it
// first started). The port stays the same across service restarts and reboots.
func (h *Host) ExporterAddr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exporterAddr
}

// runExporter is the program behind windows_exporter.exe: it serves /metrics on the host's address until the
// service stops, over TLS when --web.config.file names a web configuration with a certificate (as WMCO runs
// it), plain HTTP otherwise. A certificate it cannot load, or a port it cannot bind, ends the process, so the
// service terminates as the real one does.
func runExporter(ctx context.Context, p *Process) error {
	h := p.host
	tlsConf, err := exporterTLS(p)
	if err != nil {
		p.Log('E', "main.go:275", fmt.Sprintf(`"failed to start windows_exporter" err=%q`, err.Error()))
		return nil
	}
	l, err := h.listenExporter(p.IP())
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.exporterTLS = tlsConf != nil
	h.mu.Unlock()
	if tlsConf != nil {
		l = tls.NewListener(l, tlsConf)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		promhttp.HandlerFor(h.exporterRegistry(), promhttp.HandlerOpts{}).ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		<-done
		return nil
	case err := <-done:
		return fmt.Errorf("serve metrics: %w", err)
	}
}

// exporterWebConfig is the part of windows_exporter's web configuration (exporter-toolkit's) the simulator
// honours: the TLS server certificate.
type exporterWebConfig struct {
	TLSServerConfig *struct {
		CertFile string `json:"cert_file"`
		KeyFile  string `json:"key_file"`
	} `json:"tls_server_config"`
}

// exporterTLS reads --web.config.file: nil without one (plain HTTP), an error when its certificate cannot be
// loaded, as exporter-toolkit refuses to start then.
func exporterTLS(p *Process) (*tls.Config, error) {
	path, ok := p.Flag("web.config.file")
	if !ok || path == "" {
		return nil, nil
	}
	data, err := p.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: The system cannot find the file specified.", path)
	}
	var wc exporterWebConfig
	if err := yaml.UnmarshalStrict(data, &wc); err != nil {
		return nil, fmt.Errorf("parse web config %s: %v", path, err)
	}
	if wc.TLSServerConfig == nil {
		return nil, nil
	}
	// The payload writes Windows paths with doubled backslashes; Windows reads them as single ones.
	certFile := strings.ReplaceAll(wc.TLSServerConfig.CertFile, `\\`, `\`)
	keyFile := strings.ReplaceAll(wc.TLSServerConfig.KeyFile, `\\`, `\`)
	cert, err := p.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("failed to load X509KeyPair: open %s: The system cannot find the file specified.", certFile)
	}
	key, err := p.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("failed to load X509KeyPair: open %s: The system cannot find the file specified.", keyFile)
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("failed to load X509KeyPair: %v", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// listenExporter binds the exporter's port: Options.ExporterPort the first time (0 picks a free one),
// the same port afterwards.
func (h *Host) listenExporter(ip string) (net.Listener, error) {
	h.mu.Lock()
	addr := h.exporterAddr
	h.mu.Unlock()
	if addr == "" {
		addr = net.JoinHostPort(ip, strconv.Itoa(h.opts.ExporterPort))
	}
	l, err := listenRetry(addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	h.mu.Lock()
	h.exporterAddr = l.Addr().String()
	h.mu.Unlock()
	return l, nil
}

// exporterCollector renders the host's state with windows_exporter's metric names and labels (cpu,
// cs, memory, logical_disk and net collectors).
type exporterCollector struct {
	h  *Host
	at time.Time // the scrape's moment
}

var (
	descCPUTime   = prometheus.NewDesc("windows_cpu_time_total", "Time that processor spent in different modes (dpc, idle, interrupt, privileged, user)", []string{"core", "mode"}, nil)
	descCSMemory  = prometheus.NewDesc("windows_cs_physical_memory_bytes", "ComputerSystem.TotalPhysicalMemory", nil, nil)
	descCSCPUs    = prometheus.NewDesc("windows_cs_logical_processors", "ComputerSystem.NumberOfLogicalProcessors", nil, nil)
	descMemTotal  = prometheus.NewDesc("windows_memory_physical_total_bytes", "Total amount of physical memory in bytes.", nil, nil)
	descMemAvail  = prometheus.NewDesc("windows_memory_available_bytes", "The amount of physical memory immediately available for allocation to a process or for system use.", nil, nil)
	descMemFree   = prometheus.NewDesc("windows_memory_physical_free_bytes", "Amount of free physical memory in bytes.", nil, nil)
	descDiskFree  = prometheus.NewDesc("windows_logical_disk_free_bytes", "Free space in bytes, updates every 10-15 min (LogicalDisk.PercentFreeSpace)", []string{"volume"}, nil)
	descDiskSize  = prometheus.NewDesc("windows_logical_disk_size_bytes", "Total space in bytes, updates every 10-15 min (LogicalDisk.PercentFreeSpace_Base)", []string{"volume"}, nil)
	descNetRecv   = prometheus.NewDesc("windows_net_bytes_received_total", "(Network.BytesReceivedPerSec)", []string{"nic"}, nil)
	descNetSent   = prometheus.NewDesc("windows_net_bytes_sent_total", "(Network.BytesSentPerSec)", []string{"nic"}, nil)
	descNetTotal  = prometheus.NewDesc("windows_net_bytes_total", "(Network.BytesTotalPerSec)", []string{"nic"}, nil)
	exporterDescs = []*prometheus.Desc{descCPUTime, descCSMemory, descCSCPUs, descMemTotal, descMemAvail, descMemFree, descDiskFree, descDiskSize, descNetRecv, descNetSent, descNetTotal}
)

func (c exporterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range exporterDescs {
		ch <- d
	}
}

func (c exporterCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.h.metrics
	m.mu.Lock()
	m.advanceLocked(c.at)
	idle, user, priv, rx, tx := m.idle, m.user, m.priv, m.rx, m.tx
	_, containerMem := m.containerUseLocked()
	used := min(max(m.load.MemoryUsed+containerMem/simMemoryBytes, 0), 1)
	volumes := slices.Clone(m.volumes)
	m.mu.Unlock()

	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for core := range simCores {
		label := "0," + strconv.Itoa(core) // processor group, number: the exporter's current core label
		counter(descCPUTime, idle, label, "idle")
		counter(descCPUTime, user, label, "user")
		counter(descCPUTime, priv, label, "privileged")
		counter(descCPUTime, 0, label, "interrupt")
		counter(descCPUTime, 0, label, "dpc")
	}
	gauge(descCSMemory, simMemoryBytes)
	gauge(descCSCPUs, simCores)
	gauge(descMemTotal, simMemoryBytes)
	gauge(descMemAvail, simMemoryBytes*(1-used))
	gauge(descMemFree, simMemoryBytes*(1-used)*0.8)
	for _, v := range volumes {
		gauge(descDiskFree, v.FreeBytes, v.Name)
		gauge(descDiskSize, v.SizeBytes, v.Name)
	}
	counter(descNetRecv, rx, simNIC)
	counter(descNetSent, tx, simNIC)
	counter(descNetTotal, rx+tx, simNIC)
}

// exporterRegistry is one scrape's collectors, reading every counter at the same moment as the real
// exporter's do (its collectors run side by side, microseconds apart): rates computed against the CPU
// counters' own clock are then exact however late the scrape's answer arrives.
func (h *Host) exporterRegistry() *prometheus.Registry {
	at := h.now()
	reg := prometheus.NewRegistry()
	reg.MustRegister(exporterCollector{h, at}, containerCollector{h, at})
	return reg
}

// errNoExporter is what a scrape of a host whose exporter never ran gets.
var errNoExporter = errors.New("winsim: windows_exporter has not run on this host")

// ExporterURL is the URL of the host's /metrics while windows_exporter runs: https:// when it serves TLS.
func (h *Host) ExporterURL() (string, error) {
	addr := h.ExporterAddr()
	if addr == "" || !h.ServiceRunning("windows_exporter") {
		return "", errNoExporter
	}
	if h.ExporterTLS() {
		return "https://" + addr + "/metrics", nil
	}
	return "http://" + addr + "/metrics", nil
}

// ExporterTLS reports whether windows_exporter serves TLS (it was started with a web configuration).
func (h *Host) ExporterTLS() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exporterTLS
}

// ScrapeExporter is what GET /metrics on the host's exporter returns, produced in-process (the demo
// reads it without a network round trip). It fails, as a connection would be refused, while the
// windows_exporter service is not running.
func (h *Host) ScrapeExporter() ([]byte, error) {
	if !h.Up() {
		return nil, fmt.Errorf("winsim: %s is down", h.Hostname())
	}
	if !h.ServiceRunning("windows_exporter") {
		return nil, fmt.Errorf("winsim: windows_exporter is not running on %s", h.Hostname())
	}
	fams, err := h.exporterRegistry().Gather()
	if err != nil {
		return nil, fmt.Errorf("winsim: gather metrics: %w", err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			return nil, fmt.Errorf("winsim: encode metrics: %w", err)
		}
	}
	return b.Bytes(), nil
}

// ExporterClient is an HTTP client for the host's exporter: it trusts the certificate of a configured host's
// web configuration (WMCO's secret's, or the host's own), as Prometheus trusts the service CA that signed it.
func (h *Host) ExporterClient() *http.Client {
	pool := x509.NewCertPool()
	if cert, err := h.ReadFile(exporterCertPath); err == nil {
		pool.AppendCertsFromPEM(cert)
	}
	return &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}
