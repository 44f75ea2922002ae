// Package kubeapi runs a real kube-apiserver and etcd on loopback, with the OpenShift and OLM CRDs wmcon
// uses, for the cluster layer's integration tests.
//
// Starting one costs a few seconds, so a package's tests normally share one server through TestMain:
//
//	var srv *kubeapi.Server
//
//	func TestMain(m *testing.M) { kubeapi.Main(m, &srv) }
//
// A test that needs a server of its own (for example one without some CRDs) calls Start, which stops the
// server when the test ends. The binaries come from hack/kube-build.sh etcd, hack/kube-build.sh kube-apiserver
// and, for servers started WithControllerManager, hack/kube-build.sh kube-controller-manager.
package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// AdminUser is the user of AdminConfig; it is in system:masters, so RBAC allows it everything.
const AdminUser = "wmcon-test-admin"

// StartTimeout bounds how long starting a server (etcd, kube-apiserver, CRDs, namespaces) may take.
const StartTimeout = 3 * time.Minute

// Server is a running etcd and kube-apiserver pair. Its methods are safe for concurrent use.
type Server struct {
	dir      string // temp dir holding certificates, kubeconfigs, logs and etcd's data
	opts     options
	ca       *authority
	etcd     *process
	etcdURL  string
	apiPort  int
	apiArgs  []string
	apiBin   string
	admin    *rest.Config
	stopOnce sync.Once

	bootstrapToken string   // the node-bootstrapper service account's token (seedNodeBootstrapper)
	kcm            *process // kube-controller-manager, when started WithControllerManager

	mu  sync.Mutex // guards api
	api *process   // nil while the API server is stopped
}

// Start runs a server for one test and stops it when the test ends. It fails the test if the server does
// not come up, printing the end of the server's log.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	s, err := StartMain(ctx, opts...)
	if err != nil {
		t.Fatalf("start test kube-apiserver: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("test kube-apiserver log (last lines):\n%s", tailFile(s.logPath("kube-apiserver"), 20))
			if s.kcm != nil {
				t.Logf("test kube-controller-manager log (last lines):\n%s", tailFile(s.logPath("kube-controller-manager"), 20))
			}
		}
		s.Stop()
	})
	return s
}

// Main is TestMain for a package whose tests share one server: it starts the server, stores it in *srv,
// runs the tests, stops the server and exits. If the test binary dies instead (a panic, a -timeout abort),
// the kernel kills the servers because they are tied to it (Linux).
func Main(m *testing.M, srv **Server, opts ...Option) {
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	s, err := StartMain(ctx, opts...)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start test kube-apiserver: %v\n", err)
		os.Exit(1)
	}
	*srv = s
	code := m.Run()
	s.Stop()
	os.Exit(code)
}

// StartMain starts etcd and kube-apiserver, loads the CRDs, creates the namespaces, seeds the node
// bootstrap credentials and, if asked, starts kube-controller-manager, within ctx. The caller must call
// Stop. On error nothing is left running.
func StartMain(ctx context.Context, opts ...Option) (_ *Server, err error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	etcdBin, apiBin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	var kcmBin string
	if o.controllerManager {
		if kcmBin, err = findControllerManager(); err != nil {
			return nil, err
		}
	}
	removeAbandonedDirs()
	dir, err := os.MkdirTemp("", tempDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("create temp dir: %w", err)
	}
	s := &Server{dir: dir, opts: o, apiBin: apiBin}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", ownerFile, err)
	}
	if err := s.startEtcd(ctx, etcdBin); err != nil {
		return nil, err
	}
	if err := s.prepareAPIServer(); err != nil {
		return nil, err
	}
	if err := s.startAPIServerFirstTime(ctx); err != nil {
		return nil, err
	}
	if err := s.installCRDs(ctx, o.crds); err != nil {
		return nil, err
	}
	if err := s.createNamespaces(ctx, o.namespaces); err != nil {
		return nil, err
	}
	if err := s.seedNodeBootstrapper(ctx); err != nil {
		return nil, err
	}
	if o.controllerManager {
		if err := s.startControllerManager(ctx, kcmBin); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Stop kills kube-controller-manager, kube-apiserver and etcd and removes the temp dir. It may be called more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		if s.kcm != nil {
			_ = s.kcm.stop(10 * time.Second)
		}
		s.mu.Lock()
		if s.api != nil {
			_ = s.api.stop(10 * time.Second)
			s.api = nil
		}
		s.mu.Unlock()
		if s.etcd != nil {
			_ = s.etcd.stop(10 * time.Second)
		}
		_ = os.RemoveAll(s.dir)
	})
}

// Host is the API server's URL, https://127.0.0.1:<port>. It stays the same across restarts.
func (s *Server) Host() string { return fmt.Sprintf("https://127.0.0.1:%d", s.apiPort) }

// Dir is the server's temp dir (logs are kube-apiserver.log, kube-controller-manager.log and etcd.log). It is removed by Stop.
func (s *Server) Dir() string { return s.dir }

// EtcdURL is etcd's client URL, for tests that inspect storage directly.
func (s *Server) EtcdURL() string { return s.etcdURL }

func (s *Server) logPath(name string) string { return filepath.Join(s.dir, name+".log") }

const (
	tempDirPrefix = "wmcon-testserver-"
	ownerFile     = "owner.pid" // the test binary that made the dir
)

// removeAbandonedDirs deletes the temp dirs of test binaries that died without running Stop (a panic or a
// -timeout abort; the kernel killed their servers, but the dirs and etcd's data stay behind).
func removeAbandonedDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempDirPrefix+"*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or still being set up
		}
		pid, err := strconv.Atoi(string(data))
		if err != nil || pid <= 0 {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			_ = os.RemoveAll(dir)
		}
	}
}

// findBinaries locates etcd and kube-apiserver, saying which script builds a missing one.
func findBinaries() (etcd, apiserver string, err error) {
	if etcd, err = cachedBinary("WMCON_ETCD", "etcd-"+EtcdVersion, "etcd"); err != nil {
		return "", "", err
	}
	if apiserver, err = cachedBinary("WMCON_KUBE_APISERVER", "kube-apiserver-"+KubernetesVersion, "kube-apiserver"); err != nil {
		return "", "", err
	}
	return etcd, apiserver, nil
}

// cachedBinary is the binary hack/kube-build.sh builds into .cache/bin (name), or the one $env names.
func cachedBinary(env, name, component string) (string, error) {
	bin := os.Getenv(env)
	if bin == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		bin = filepath.Join(root, ".cache", "bin", name)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s not found at %s: run hack/kube-build.sh %s (or set %s)", component, bin, component, env)
	}
	return bin, nil
}

// EtcdVersion is the etcd hack/kube-build.sh etcd builds: the 3.5 line OpenShift 4.20 and 4.21 run, new
// enough for the API server to serve consistent lists from its watch cache and to stream lists.
const EtcdVersion = "v3.5.35"

// KubernetesVersion is the kube-apiserver version hack/kube-build.sh kube-apiserver builds.
const KubernetesVersion = "v1.37.1"

// repoRoot finds wmcon's module root above the working directory (go test runs in the package dir).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && moduleLine(data) == "github.com/wmcon/wmcon" {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find wmcon's go.mod above the working directory; run the tests from inside the repository")
		}
		dir = parent
	}
}

// moduleLine returns the module path declared in a go.mod file.
func moduleLine(goMod []byte) string {
	for _, line := range strings.Split(string(goMod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// httpGet fetches url with a per-request timeout, for etcd's plain-HTTP health endpoint.
func httpGet(ctx context.Context, url string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	return resp.StatusCode, string(buf[:n]), nil
}
