package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
)

// prepareAPIServer writes the certificates and keys kube-apiserver needs and fixes its command line, which
// stays the same across restarts (same port, same keys) so clients keep working.
func (s *Server) prepareAPIServer() error {
	ca, err := newAuthority()
	if err != nil {
		return err
	}
	s.ca = ca
	serving, err := ca.servingPair()
	if err != nil {
		return err
	}
	files := map[string][]byte{"ca.crt": ca.certPEM, "serving.crt": serving.certPEM, "serving.key": serving.keyPEM}
	for name, data := range files {
		if err := writeSecretFile(filepath.Join(s.dir, name), data); err != nil {
			return err
		}
	}
	saKey, saPub, err := writeServiceAccountKeys(s.dir)
	if err != nil {
		return err
	}
	s.admin, err = s.restConfig(AdminUser, []string{"system:masters"})
	if err != nil {
		return err
	}
	s.apiArgs = []string{
		"--etcd-servers=" + s.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The default reconciler refuses a loopback advertise address, and there is no other master anyway.
		"--endpoint-reconciler-type=none",
		"--tls-cert-file=" + filepath.Join(s.dir, "serving.crt"),
		"--tls-private-key-file=" + filepath.Join(s.dir, "serving.key"),
		"--client-ca-file=" + filepath.Join(s.dir, "ca.crt"),
		"--authorization-mode=Node,RBAC",
		// Bootstrap tokens (kube-system/bootstrap-token-<id> secrets) authenticate as system:bootstrappers,
		// the credential a plain Kubernetes cluster hands a joining kubelet.
		"--enable-bootstrap-token-auth=true",
		"--enable-admission-plugins=NodeRestriction",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		// Service cluster IPs (the kubernetes Service's too) from a loopback range: tests give nothing an
		// address off this machine, and kube-apiserver accepts any range here.
		"--service-cluster-ip-range=127.96.0.0/16",
		"--kubelet-preferred-address-types=InternalIP",
		"--allow-privileged=true",
		"--profiling=false",
	}
	if s.opts.auditLog != "" {
		policy := filepath.Join(s.dir, "audit-policy.yaml")
		if err := writeSecretFile(policy, []byte(auditPolicy)); err != nil {
			return err
		}
		s.apiArgs = append(s.apiArgs, "--audit-policy-file="+policy, "--audit-log-path="+s.opts.auditLog,
			"--audit-log-format=json", "--audit-log-maxsize=0")
	}
	s.apiArgs = append(s.apiArgs, s.opts.extraFlags...)
	return nil
}

// auditPolicy records every request once, when it completes (a watch: when it ends), without bodies.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
`

// startAPIServerFirstTime picks the port the server keeps for its whole life, retrying if another process
// grabbed the free port before kube-apiserver bound it.
func (s *Server) startAPIServerFirstTime(ctx context.Context) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if s.apiPort, err = freePort(); err != nil {
			return err
		}
		s.admin.Host = s.Host()
		err = s.startAPIServer(ctx)
		if err == nil || !addressInUse(s.logPath("kube-apiserver")) {
			return err
		}
	}
	return err
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the same port, and waits until it is
// ready. etcd kept running, so every object is still there.
func (s *Server) StartAPIServer() error {
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	return s.startAPIServer(ctx)
}

// StopAPIServer stops kube-apiserver (etcd keeps running), so clients see the server gone until
// StartAPIServer. Stopping a stopped server does nothing.
func (s *Server) StopAPIServer() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.api == nil {
		return nil
	}
	err := s.api.stop(15 * time.Second)
	s.api = nil
	return err
}

// RestartAPIServer stops and starts kube-apiserver on the same port, failing the test if it does not come
// back.
func (s *Server) RestartAPIServer(t testing.TB) {
	t.Helper()
	if err := s.StopAPIServer(); err != nil {
		t.Fatalf("stop kube-apiserver: %v", err)
	}
	if err := s.StartAPIServer(); err != nil {
		t.Fatalf("restart kube-apiserver: %v", err)
	}
}

func (s *Server) startAPIServer(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.api != nil {
		return errors.New("kube-apiserver is already running; call StopAPIServer first")
	}
	args := append([]string{"--secure-port=" + strconv.Itoa(s.apiPort)}, s.apiArgs...)
	p, err := startProcess("kube-apiserver", s.logPath("kube-apiserver"), s.apiBin, args)
	if err != nil {
		return err
	}
	if err := s.waitReady(ctx, p); err != nil {
		_ = p.stop(5 * time.Second)
		return err
	}
	s.api = p
	return nil
}

// waitReady polls /readyz, which turns OK only after the post-start hooks (RBAC bootstrap roles, CRD
// informers, priority and fairness) have finished, so the server's built-in objects all exist.
func (s *Server) waitReady(ctx context.Context, p *process) error {
	client, err := kubernetes.NewForConfig(s.admin)
	if err != nil {
		return fmt.Errorf("client for readiness check: %w", err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		if p.exited() {
			return p.exitError()
		}
		lastErr = probeReadyz(ctx, client)
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready at %s before the deadline (last: %v); last lines of %s:\n%s",
				s.Host(), lastErr, p.logPath, tailFile(p.logPath, 30))
		case <-tick.C:
		}
	}
}

func probeReadyz(ctx context.Context, client kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return err
	}
	if string(body) != "ok" {
		return fmt.Errorf("/readyz says %q", body)
	}
	return nil
}
