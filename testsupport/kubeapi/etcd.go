package kubeapi

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// startEtcd runs a single-member etcd on two free loopback ports. Picking a free port and binding it are
// not atomic, so a port taken in between is retried with new ports.
func (s *Server) startEtcd(ctx context.Context, bin string) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = s.tryStartEtcd(ctx, bin)
		if err == nil || !addressInUse(s.logPath("etcd")) {
			return err
		}
	}
	return err
}

func (s *Server) tryStartEtcd(ctx context.Context, bin string) error {
	clientPort, err := freePort()
	if err != nil {
		return err
	}
	peerPort, err := freePort()
	if err != nil {
		return err
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	dataDir := filepath.Join(s.dir, "etcd-data")
	if err := os.RemoveAll(dataDir); err != nil { // a failed earlier attempt may have initialised it
		return fmt.Errorf("clear etcd data dir: %w", err)
	}
	args := []string{
		"--name=wmcon-test",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=wmcon-test=" + peerURL,
		"--initial-cluster-state=new",
		"--logger=zap",
		"--log-level=warn",
	}
	p, err := startProcess("etcd", s.logPath("etcd"), bin, args)
	if err != nil {
		return err
	}
	s.etcd = p
	s.etcdURL = clientURL
	if err := waitEtcdHealthy(ctx, p, clientURL); err != nil {
		_ = p.stop(5 * time.Second)
		s.etcd = nil
		return err
	}
	return nil
}

func waitEtcdHealthy(ctx context.Context, p *process, url string) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if p.exited() {
			return p.exitError()
		}
		code, body, err := httpGet(ctx, url+"/health")
		if err == nil && code == 200 && strings.Contains(body, `"true"`) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd not healthy at %s before the deadline (last: %d %s %v); last lines of %s:\n%s",
				url, code, body, err, p.logPath, tailFile(p.logPath, 30))
		case <-tick.C:
		}
	}
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func addressInUse(logPath string) bool {
	return strings.Contains(tailFile(logPath, 50), "address already in use")
}
