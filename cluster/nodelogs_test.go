package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// memLogs is a host's C:\var\log in memory.
type memLogs struct {
	mu      sync.Mutex
	files   map[string][]byte
	failing bool // every read fails, as a kubelet that does not answer
}

func (m *memLogs) setFailing(f bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failing = f
}

func (m *memLogs) ReadFile(p string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[p]
	if m.failing {
		ok = false
	}
	if !ok {
		return nil, fmt.Errorf("%s: not found", p)
	}
	return append([]byte(nil), b...), nil
}

func (m *memLogs) appendLines(p string, from, to int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := from; i <= to; i++ {
		m.files[p] = append(m.files[p], fmt.Sprintf("line %05d\n", i)...)
	}
}

func (m *memLogs) set(p, content string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[p] = []byte(content)
}

const kubeletLog = `C:\var\log\kubelet\kubelet.log`

// nodeLogFixture is a real API server proxying to a simulated kubelet log endpoint of node win-a.
func nodeLogFixture(t *testing.T) (*kubeapi.Server, *memLogs) {
	t.Helper()
	np, err := kubeapi.NewNodeProxy()
	require.NoError(t, err)
	t.Cleanup(func() { np.Close() })
	s := kubeapi.Start(t, kubeapi.WithCRDs(), kubeapi.WithNamespaces(), kubeapi.WithNodeProxy(np))
	logs := &memLogs{files: map[string][]byte{}}
	ls, err := kubelet.StartLogServer("127.0.0.2:0", logs)
	require.NoError(t, err)
	t.Cleanup(func() { ls.Close() })
	fake, err := kubeapi.FakeNodeIP("127.0.0.2")
	require.NoError(t, err)
	require.NoError(t, np.Route(fmt.Sprintf("%s:%d", fake, ls.Port()), ls.Addr()))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(s.AdminConfig())
	_, err = kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-a"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, kubelet.PublishEndpoint(ctx, kube, "win-a", ls.Port(),
		corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: fake}))
	return s, logs
}

// collector gathers delivered chunks for the test goroutine.
type collector struct {
	mu      sync.Mutex
	lines   []string
	rotated int
	errs    int
	changed chan struct{}
}

func newCollector() *collector { return &collector{changed: make(chan struct{}, 1)} }

func (c *collector) deliver(ch cluster.NodeLogChunk) {
	c.mu.Lock()
	c.lines = append(c.lines, ch.Lines...)
	if ch.Rotated {
		c.rotated++
	}
	if ch.Err != nil {
		c.errs++
	}
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// waitFor waits (bounded) until the last line collected is want.
func (c *collector) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		c.mu.Lock()
		n := len(c.lines)
		done := n > 0 && c.lines[n-1] == want
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %q; have %d lines", want, n)
		}
	}
}

func (c *collector) errorCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errs
}

func numbered(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("line %05d", i))
	}
	return out
}

func TestNodeLogsThroughNodeProxy(t *testing.T) {
	s, logs := nodeLogFixture(t)
	admin := kubernetes.NewForConfigOrDie(s.AdminConfig())
	logs.appendLines(kubeletLog, 1, 3000)

	t.Run("tail", func(t *testing.T) {
		r, err := cluster.NewNodeLogReader(admin, "win-a", "kubelet", "kubelet.log")
		require.NoError(t, err)
		c := newCollector()
		require.NoError(t, cluster.FollowNodeLog(context.Background(), r, cluster.NodeLogOptions{Tail: 25}, c.deliver))
		require.Equal(t, numbered(2976, 3000), c.lines)
	})

	t.Run("whole file", func(t *testing.T) {
		r, err := cluster.NewNodeLogReader(admin, "win-a", "kubelet", "kubelet.log")
		require.NoError(t, err)
		c := newCollector()
		require.NoError(t, cluster.FollowNodeLog(context.Background(), r, cluster.NodeLogOptions{Tail: -1}, c.deliver))
		require.Equal(t, numbered(1, 3000), c.lines)
	})

	t.Run("follow across rotations without gaps or duplicates", func(t *testing.T) {
		r, err := cluster.NewNodeLogReader(admin, "win-a", "kubelet", "kubelet.log")
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := newCollector()
		done := make(chan error, 1)
		go func() {
			done <- cluster.FollowNodeLog(ctx, r, cluster.NodeLogOptions{Tail: 1, Follow: true, Interval: 10 * time.Millisecond}, c.deliver)
		}()
		c.waitFor(t, "line 03000")
		logs.appendLines(kubeletLog, 3001, 3100)
		c.waitFor(t, "line 03100")
		// Rotated to a shorter file.
		logs.set(kubeletLog, "")
		logs.appendLines(kubeletLog, 3101, 3110)
		c.waitFor(t, "line 03110")
		// Rotated to a file already longer than where reading was: the re-read bytes differ.
		logs.set(kubeletLog, "")
		logs.appendLines(kubeletLog, 3111, 3150)
		c.waitFor(t, "line 03150")
		// Failed reads while following are reported and retried; reading resumes where it stopped.
		logs.setFailing(true)
		logs.appendLines(kubeletLog, 3151, 3160)
		deadline := time.After(15 * time.Second)
		for c.errorCount() == 0 {
			select {
			case <-c.changed:
			case <-deadline:
				t.Fatal("no failed read reported")
			}
		}
		logs.setFailing(false)
		c.waitFor(t, "line 03160")
		cancel()
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(10 * time.Second):
			t.Fatal("FollowNodeLog did not stop when cancelled")
		}
		require.Equal(t, numbered(3000, 3160), c.lines)
		require.Equal(t, 2, c.rotated)
	})

	t.Run("partial last line waits for its newline", func(t *testing.T) {
		logs.set(`C:\var\log\kube-proxy\kube-proxy.log`, "one\ntw")
		r, err := cluster.NewNodeLogReader(admin, "win-a", "kube-proxy", "kube-proxy.log")
		require.NoError(t, err)
		c := newCollector()
		require.NoError(t, cluster.FollowNodeLog(context.Background(), r, cluster.NodeLogOptions{Tail: -1}, c.deliver))
		require.Equal(t, []string{"one"}, c.lines)
	})

	t.Run("missing file", func(t *testing.T) {
		r, err := cluster.NewNodeLogReader(admin, "win-a", "csi-proxy", "csi-proxy.log")
		require.NoError(t, err)
		err = cluster.FollowNodeLog(context.Background(), r, cluster.NodeLogOptions{Tail: 10}, func(cluster.NodeLogChunk) {})
		require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
	})

	t.Run("access review and forbidden user", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ok, err := cluster.CanProxyNodeLogs(ctx, admin, "win-a")
		require.NoError(t, err)
		require.True(t, ok)
		user := kubernetes.NewForConfigOrDie(s.UserConfig("no-proxy"))
		ok, err = cluster.CanProxyNodeLogs(ctx, user, "win-a")
		require.NoError(t, err)
		require.False(t, ok)
		r, err := cluster.NewNodeLogReader(user, "win-a", "kubelet", "kubelet.log")
		require.NoError(t, err)
		err = cluster.FollowNodeLog(ctx, r, cluster.NodeLogOptions{Tail: 10}, func(cluster.NodeLogChunk) {})
		require.True(t, apierrors.IsForbidden(err), "want Forbidden, got %v", err)
	})
}

func TestNodeLogReaderRefusesFakeClients(t *testing.T) {
	_, err := cluster.NewNodeLogReader(nil, "win-a", "kubelet", "kubelet.log")
	require.Error(t, err)
	_, err = cluster.NewNodeLogReader(fake.NewClientset(), "win-a", "kubelet", "kubelet.log")
	require.ErrorContains(t, err, "use SSH")
}
