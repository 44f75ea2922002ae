// Package prometheus runs a real Prometheus server (Debian's prometheus package, installed by
// hack/deps.sh) on a free loopback port for tests, scraping the targets a test gives it.
package prometheus

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Binary is where Debian installs Prometheus.
const Binary = "/usr/bin/prometheus"

// Start runs Prometheus scraping each target ("127.0.0.N:port" of a windows_exporter, "https://127.0.0.N:port"
// for one serving TLS, as WMCO configures it) every second,
// with the instance label set to the target's node name, as OpenShift's ServiceMonitor for WMCO's
// windows-exporter endpoints does. It returns the server's URL; the server stops when the test ends.
// Without the binary the test is skipped with the command that installs it.
func Start(t testing.TB, targets map[string]string) string {
	t.Helper()
	return start(t, targets, false)
}

// StartTLS is Start with Prometheus serving HTTPS (its --web.config.file) under a fresh self-signed
// certificate for 127.0.0.1, as kube-rbac-proxy serves OpenShift's thanos-querier port. The URL is
// https://127.0.0.1:PORT.
func StartTLS(t testing.TB, targets map[string]string) string {
	t.Helper()
	return start(t, targets, true)
}

// StartFleet runs Prometheus scraping one loopback target that exposes many nodes' series, each with
// its own instance label, which Prometheus keeps (honor_labels): a fleet's worth of series without a
// process per node, for benchmarks. The scrape interval is 2 s.
func StartFleet(t testing.TB, addr string) string {
	t.Helper()
	return start(t, map[string]string{"": addr}, false)
}

func start(t testing.TB, targets map[string]string, withTLS bool) string {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		t.Skipf("promtest: %s is not installed (hack/deps.sh installs Debian's prometheus); skipping the test against a real Prometheus", Binary)
	}
	for _, addr := range targets {
		host, _, err := net.SplitHostPort(strings.TrimPrefix(addr, "https://"))
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Fatalf("promtest: target %q is not a loopback address", addr)
		}
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config(targets)), 0o600); err != nil {
		t.Fatalf("promtest: write config: %v", err)
	}
	srv := server{dir: dir, cfg: cfg, client: http.DefaultClient, scheme: "http"}
	if withTLS {
		if err := srv.useTLS(); err != nil {
			t.Fatalf("promtest: %v", err)
		}
	}
	var lastErr error
	for range 3 { // a free port can be taken between picking it and Prometheus binding it
		url, err := srv.run(t)
		if err == nil {
			return url
		}
		lastErr = err
	}
	t.Fatalf("promtest: %v", lastErr)
	return ""
}

func config(targets map[string]string) string {
	if addr, ok := targets[""]; ok && len(targets) == 1 {
		return fmt.Sprintf("global:\n  scrape_interval: 2s\n  scrape_timeout: 1900ms\nscrape_configs:\n- job_name: fleet\n"+
			"  honor_labels: true\n  static_configs:\n  - targets: [%q]\n", addr)
	}
	nodes := make([]string, 0, len(targets))
	for n := range targets {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n")
	// A target written https://ADDR serves TLS (a WMCO node's windows_exporter); its certificate is not
	// checked (OpenShift's ServiceMonitor checks it against the service CA, which a test does not have).
	for _, scheme := range []string{"http", "https"} {
		var job strings.Builder
		for _, n := range nodes {
			addr, tlsTarget := strings.CutPrefix(targets[n], "https://")
			if tlsTarget == (scheme == "https") {
				fmt.Fprintf(&job, "  - targets: [%q]\n    labels: {node: %q}\n", addr, n)
			}
		}
		if job.Len() == 0 {
			continue
		}
		fmt.Fprintf(&b, "- job_name: windows-exporter-%s\n  scheme: %s\n", scheme, scheme)
		if scheme == "https" {
			b.WriteString("  tls_config:\n    insecure_skip_verify: true\n")
		}
		b.WriteString("  static_configs:\n" + job.String())
		b.WriteString("  relabel_configs:\n  - source_labels: [node]\n    target_label: instance\n")
	}
	return b.String()
}

// server is how one Prometheus is run: its directory and config, and the scheme and client its
// readiness is checked with.
type server struct {
	dir, cfg, webCfg string
	scheme           string
	client           *http.Client
}

func (s server) run(t testing.TB) (string, error) {
	dir, cfg := s.dir, s.cfg
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	l.Close()
	logPath := filepath.Join(dir, "prometheus.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return "", err
	}
	args := []string{"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=warn"}
	if s.webCfg != "" {
		args = append(args, "--web.config.file="+s.webCfg)
	}
	cmd := exec.Command(Binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return "", fmt.Errorf("start prometheus: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(done) }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	url := s.scheme + "://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		select {
		case <-done:
			b, _ := os.ReadFile(logPath)
			return "", fmt.Errorf("prometheus exited early; its log:\n%s", b)
		case <-ctx.Done():
			stop()
			return "", fmt.Errorf("prometheus not ready at %s within 30s", url)
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := s.client.Get(url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Cleanup(stop)
				return url, nil
			}
		}
	}
}
