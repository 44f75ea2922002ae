package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/wmcon/wmcon/backend"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/session"
)

// requestLog records every request a client makes, as "VERB path?query".
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		line := r.Method + " " + r.URL.Path
		if r.URL.RawQuery != "" {
			line += "?" + r.URL.RawQuery
		}
		l.mu.Lock()
		l.seen = append(l.seen, line)
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// matching returns the recorded requests that contain every part.
func (l *requestLog) matching(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.seen {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(s, p)
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

func (l *requestLog) all() []string {
	out := l.inOrder()
	sort.Strings(out)
	return out
}

// inOrder returns the recorded requests in the order they were sent.
func (l *requestLog) inOrder() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// A console start (the session, its watcher and metrics feed, until the nodes are listed) asks for nothing
// the first screen does not show: not the cloud-private-key secret and not the bastion Service, although
// the cluster has both. It asks for the Windows nodes' list before anything else of the watcher's. The first action that reaches a host asks for each once.
func TestConsoleStartDefersTheSSHKeyAndBastion(t *testing.T) {
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	ensure := func(err error) {
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
	}
	_, err := admin.CoreV1().Secrets(config.OperatorNamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: config.PrivateKeySecret, Namespace: config.OperatorNamespace},
		Data:       map[string][]byte{config.PrivateKeySecretKey: []byte("not a key: the test never logs in")}}, metav1.CreateOptions{})
	ensure(err)
	// The bastion answers nowhere: a listener opened and closed leaves a loopback port that refuses.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusing := l.Addr().(*net.TCPAddr)
	l.Close()
	const bastion = "wmcon-startup-test-bastion"
	svc, err := admin.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: bastion, Labels: map[string]string{"run": "ssh-bastion"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Name: "ssh", Port: int32(refusing.Port)}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.CoreV1().Services("default").Delete(context.Background(), bastion, metav1.DeleteOptions{})
	})
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "127.0.0.1"}}
	_, err = admin.CoreV1().Services("default").UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	require.NoError(t, err)

	var log requestLog
	flags := genericclioptions.NewConfigFlags(false)
	kubeconfig := srv.AdminKubeconfig()
	flags.KubeConfig = &kubeconfig
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.Wrap(log.wrap)
		return c
	}
	t.Setenv("HOME", t.TempDir()) // the bastion's known_hosts is looked for in ~/.ssh
	s, err := session.New(ctx, session.Options{Backend: backend.NewCluster(flags), SSH: session.SSHOptions{
		KnownHosts: filepath.Join(t.TempDir(), "known_hosts"), Agent: false}})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	_, err = s.MetricsFeed(session.MetricsOptions{})
	require.NoError(t, err)
	_, err = s.Snapshot(ctx)
	require.NoError(t, err)

	secretGet := []string{"GET /api/v1/namespaces/" + config.OperatorNamespace + "/secrets/" + config.PrivateKeySecret}
	serviceList := []string{"GET /api/v1/services", "labelSelector=run%3Dssh-bastion"}
	assert.Empty(t, log.matching(secretGet...), "the start did not read the SSH key; it asked for:\n%s", strings.Join(log.all(), "\n"))
	assert.Empty(t, log.matching(serviceList...), "the start did not look for a bastion")
	assert.NotEmpty(t, log.matching("GET /api/v1/nodes"), "the start listed the nodes (the log records the watcher's requests)")
	// The first screen's list goes first and alone: the Windows nodes' list (streamed from the watch cache)
	// is asked for before the server version, discovery and any other list or watch of the watcher's.
	sent := log.inOrder()
	nodesAt := slices.IndexFunc(sent, func(r string) bool {
		return strings.HasPrefix(r, "GET /api/v1/nodes?") && strings.Contains(r, "labelSelector=kubernetes.io%2Fos%3Dwindows") &&
			strings.Contains(r, "sendInitialEvents=true")
	})
	require.GreaterOrEqual(t, nodesAt, 0, "the Windows nodes' streamed list:\n%s", strings.Join(sent, "\n"))
	for _, r := range sent[:nodesAt] {
		watcher := strings.HasPrefix(r, "GET /apis/") || r == "GET /version" || strings.Contains(r, "watch=true") ||
			strings.Contains(r, "/secrets") || strings.Contains(r, "/configmaps")
		assert.False(t, watcher, "%s was asked for before the Windows nodes' list:\n%s", r, strings.Join(sent, "\n"))
	}

	// An action reaching a host looks both up, once: here the bastion it finds refuses the connection.
	for range 2 {
		c, err := s.Pool.Client(remote.Target{Node: "win-0", Addr: "127.0.0.2"})
		require.NoError(t, err)
		_, err = c.Hostname(ctx)
		require.Error(t, err)
		assert.Contains(t, err.Error(), net.JoinHostPort("127.0.0.1", strconv.Itoa(refusing.Port)), "the node was dialled through the bastion the Service names")
	}
	assert.Len(t, log.matching(secretGet...), 1, fmt.Sprint(log.all()))
	assert.Len(t, log.matching(serviceList...), 1)
}
