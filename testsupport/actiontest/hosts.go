package actiontest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/session"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/ovn"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// BareHost starts a fresh Windows Server (OpenSSH only) on ip, named name, reachable with the pool's key.
// The first one also starts OVN-Kubernetes' stand-in, which gives Windows Nodes their hybrid overlay
// subnets (WMCO's network step waits for one). Only then: like any controller it updates Nodes, and the
// tests without a host to configure edit their Nodes without expecting another writer.
func (h *Hosts) BareHost(name, ip string) *windows.Host {
	h.T.Helper()
	h.ovnOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		h.T.Cleanup(func() { cancel(); <-done })
		go func() {
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); (&ovn.SubnetAllocator{Kube: h.Kube}).Run(ctx, 200*time.Millisecond) }()
			signClientCSRs(ctx, h.Kube, 200*time.Millisecond)
			wg.Wait()
			close(done)
		}()
	})
	sim, err := windows.Start(windows.Options{Addr: ip + ":0", Hostname: name, AuthorizedKeys: []ssh.PublicKey{h.Signer.PublicKey()},
		LogInterval: time.Hour, ServicePending: 20 * time.Millisecond,
		Programs: map[string]windows.Program{"hybrid-overlay-node.exe": ovn.HybridOverlayNode(ovn.NodeOptions{})}})
	require.NoError(h.T, err)
	h.T.Cleanup(func() { sim.Close() })
	h.Sims[name] = sim
	return sim
}

// LogHosts are simulated Windows hosts reached over a real SSH pool, each with a simulated kubelet log
// endpoint, and optionally registered as Nodes behind the test egress proxy.
type LogHosts struct {
	T        testing.TB
	Signer   ssh.Signer
	Pool     *remote.Pool
	Resolver *session.PoolResolver
	Sims     map[string]*windows.Host
	Nodes    map[string]model.NodeInfo
}

func NewLogHosts(t testing.TB) *LogHosts {
	t.Helper()
	signer, pool := NewTestPool(t)
	return &LogHosts{T: t, Signer: signer, Pool: pool, Sims: map[string]*windows.Host{}, Nodes: map[string]model.NodeInfo{},
		Resolver: &session.PoolResolver{Pool: pool, Addrs: map[string]string{}}}
}

// Add starts an unconfigured host on ip (its services write nothing; tests write the logs).
func (h *LogHosts) Add(node, ip string) *windows.Host {
	h.T.Helper()
	sim, err := windows.Start(windows.Options{Addr: ip + ":0", AuthorizedKeys: []ssh.PublicKey{h.Signer.PublicKey()},
		LogInterval: time.Hour, RebootDowntime: 200 * time.Millisecond})
	require.NoError(h.T, err)
	h.T.Cleanup(func() { sim.Close() })
	h.Sims[node] = sim
	// SSH goes to the simulated host's own loopback address, never to the Node's (fake) InternalIP.
	h.Resolver.Addrs[node] = sim.Addr()
	h.Nodes[node] = model.NodeInfo{Name: node, Windows: true, InternalIP: ip}
	return sim
}

// Register makes node a Node of s whose kubelet log endpoint (serving the host's files) the API server
// reaches through np.
func (h *LogHosts) Register(s *kubeapi.Server, np *kubeapi.NodeProxy, node, ip string) {
	h.T.Helper()
	ls, err := kubelet.StartLogServer(ip+":0", h.Sims[node])
	require.NoError(h.T, err)
	h.T.Cleanup(func() { ls.Close() })
	fake, err := kubeapi.FakeNodeIP(ip)
	require.NoError(h.T, err)
	require.NoError(h.T, np.Route(fmt.Sprintf("%s:%d", fake, ls.Port()), ls.Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(s.AdminConfig())
	_, err = kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels: map[string]string{corev1.LabelOSStable: "windows"}}}, metav1.CreateOptions{})
	require.NoError(h.T, err)
	require.NoError(h.T, kubelet.PublishEndpoint(ctx, kube, node, ls.Port(),
		corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: fake}))
	n := h.Nodes[node]
	n.InternalIP = fake
	h.Nodes[node] = n
}

func (h *LogHosts) Infos(names ...string) []model.NodeInfo {
	var out []model.NodeInfo
	for _, n := range names {
		out = append(out, h.Nodes[n])
	}
	return out
}

// Hosts is a fleet of simulated Windows hosts behind a real SSH pool, and their simulated kubelets.
type Hosts struct {
	T        *testing.T
	Signer   ssh.Signer
	Pool     *remote.Pool
	Resolver *session.PoolResolver
	Kubelets *kubelet.Kubelets
	Sims     map[string]*windows.Host
	// Kube is the test's cluster: BareHost's hybrid-overlay-node reads its Node's subnet there (sim/ovn).
	Kube    kubernetes.Interface
	ovnOnce sync.Once
}

// Add starts a configured Windows host for node on ip (a fresh port) and its simulated kubelet.
func (h *Hosts) Add(node, ip string, opts windows.Options) *windows.Host {
	h.T.Helper()
	opts.Addr = ip + ":0"
	opts.Configured = true
	opts.AuthorizedKeys = append(opts.AuthorizedKeys, h.Signer.PublicKey())
	if opts.RebootDowntime == 0 {
		opts.RebootDowntime = time.Second
	}
	if opts.LogInterval == 0 {
		opts.LogInterval = time.Hour
	}
	if opts.ServicePending == 0 {
		opts.ServicePending = 20 * time.Millisecond
	}
	sim, err := windows.Start(opts)
	require.NoError(h.T, err)
	h.T.Cleanup(func() { sim.Close() })
	h.Sims[node] = sim
	h.Resolver.Addrs[node] = sim.Addr()
	h.Kubelets.Add(node, sim)
	return sim
}

// NewTestPool is an SSH pool logging in with a fresh key (which the simulated hosts authorise) and pinning
// host keys in the test's temp dir; it is closed when the test ends.
func NewTestPool(t testing.TB) (ssh.Signer, *remote.Pool) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "wmcon-test")
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	dir := t.TempDir()
	pool, err := remote.NewPool(remote.Config{
		Auth:              remote.Auth{KeyPEM: pem.EncodeToMemory(block), KeyPEMName: "cloud-private-key"},
		HostKeys:          remote.NewKnownHostsStore(filepath.Join(dir, "known_hosts")),
		BastionHostKeys:   remote.NewKnownHostsStore(filepath.Join(dir, "bastion_known_hosts")),
		DialTimeout:       2 * time.Second,
		KeepaliveInterval: -1,
		CommandTimeout:    20 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(func() { pool.Close() })
	return signer, pool
}

// BenchLatency is what each simulated host of a benchmark adds to every reply and packet it sends.
const BenchLatency = 50 * time.Millisecond

// signClientCSRs signs approved kubernetes.io/kube-apiserver-client requests (hybrid-overlay-node's own
// certificate) with the test server's CA until ctx ends, as kube-controller-manager's signer would: this tier
// runs no controller manager.
func signClientCSRs(ctx context.Context, kube kubernetes.Interface, every time.Duration) {
	csrs := kube.CertificatesV1().CertificateSigningRequests()
	for {
		list, err := csrs.List(ctx, metav1.ListOptions{})
		for i := 0; err == nil && i < len(list.Items); i++ {
			c := &list.Items[i]
			if c.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName || len(c.Status.Certificate) > 0 || !isApproved(c) {
				continue
			}
			life := 24 * time.Hour
			if c.Spec.ExpirationSeconds != nil {
				life = time.Duration(*c.Spec.ExpirationSeconds) * time.Second
			}
			if c.Status.Certificate, err = Server.SignClientCSR(c.Spec.Request, life); err == nil {
				_, _ = csrs.UpdateStatus(ctx, c, metav1.UpdateOptions{})
			}
			err = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

func isApproved(c *certificatesv1.CertificateSigningRequest) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}
