package kubeapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ControllerManagerControllers are the controllers the test tier's kube-controller-manager runs. The CSR
// approver (certificatesigningrequest-approving-controller) is left out on purpose: a node's certificates
// are signed only after something else (wmcon, or a test) approved its CSRs, as on OpenShift where the
// machine approver or WMCO decides. The service-account token controller fills the long-lived token
// secrets (kubernetes.io/service-account-token) wmcon creates, as on any cluster.
var ControllerManagerControllers = []string{"certificatesigningrequest-signing-controller", "node-lifecycle-controller", "serviceaccount-token-controller"}

// Node lifecycle timings of the test tier, shorter than a real cluster's (40s grace) so tests of a silent
// node finish quickly. A kubelet must renew its Lease well within NodeMonitorGracePeriod.
const (
	NodeMonitorGracePeriod = 8 * time.Second
	nodeMonitorPeriod      = time.Second
)

// startControllerManager runs kube-controller-manager against the API server as a system:masters user,
// signing with the test CA, and waits for its /healthz.
func (s *Server) startControllerManager(ctx context.Context, bin string) error {
	caKey, err := s.ca.keyPEM()
	if err != nil {
		return err
	}
	if err := writeSecretFile(filepath.Join(s.dir, "ca.key"), caKey); err != nil {
		return err
	}
	kubeconfig := s.writeKubeconfig("system:kube-controller-manager",
		s.UserConfig("system:kube-controller-manager", "system:masters"))
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		args := []string{
			"--kubeconfig=" + kubeconfig,
			"--controllers=" + strings.Join(ControllerManagerControllers, ","),
			"--cluster-signing-cert-file=" + filepath.Join(s.dir, "ca.crt"),
			"--cluster-signing-key-file=" + filepath.Join(s.dir, "ca.key"),
			"--cluster-signing-duration=24h",
			"--service-account-private-key-file=" + filepath.Join(s.dir, "sa.key"),
			"--root-ca-file=" + filepath.Join(s.dir, "ca.crt"),
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--tls-cert-file=" + filepath.Join(s.dir, "serving.crt"),
			"--tls-private-key-file=" + filepath.Join(s.dir, "serving.key"),
			"--node-monitor-period=" + nodeMonitorPeriod.String(),
			"--node-monitor-grace-period=" + NodeMonitorGracePeriod.String(),
			"--node-startup-grace-period=" + NodeMonitorGracePeriod.String(),
			"--kube-api-qps=200",
			"--kube-api-burst=400",
			"--profiling=false",
		}
		p, err := startProcess("kube-controller-manager", s.logPath("kube-controller-manager"), bin, args)
		if err != nil {
			return err
		}
		lastErr = s.waitHealthy(ctx, p, port)
		if lastErr == nil {
			s.kcm = p
			return nil
		}
		_ = p.stop(5 * time.Second)
		if !addressInUse(s.logPath("kube-controller-manager")) {
			return lastErr
		}
	}
	return lastErr
}

// waitHealthy polls the controller manager's /healthz (an always-allowed path) over TLS verified with the
// test CA, which signed its serving certificate.
func (s *Server) waitHealthy(ctx context.Context, p *process, port int) error {
	pool := x509.NewCertPool()
	pool.AddCert(s.ca.cert)
	client := &http.Client{Timeout: 2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer client.CloseIdleConnections()
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		if p.exited() {
			return p.exitError()
		}
		lastErr = probeHealthz(ctx, client, url)
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-controller-manager not healthy at %s before the deadline (last: %v); last lines of %s:\n%s",
				url, lastErr, p.logPath, tailFile(p.logPath, 30))
		case <-tick.C:
		}
	}
}

func probeHealthz(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/healthz: %s", resp.Status)
	}
	return nil
}

// findControllerManager locates the kube-controller-manager binary, saying which script builds it.
func findControllerManager() (string, error) {
	return cachedBinary("WMCON_KUBE_CONTROLLER_MANAGER", "kube-controller-manager-"+KubernetesVersion, "kube-controller-manager")
}

// ControllerManagerRunning reports whether the server was started WithControllerManager.
func (s *Server) ControllerManagerRunning() bool { return s.kcm != nil && !s.kcm.exited() }
