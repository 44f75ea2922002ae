package triage_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/triage"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/session"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// BenchmarkTriage measures one triage of a healthy node: the API reads against the real server and the
// host visit over SSH to a simulated host (connection kept open by the pool, as in the console).
func BenchmarkTriage(b *testing.B) {
	ctx := context.Background()
	clients, err := cluster.NewClients(actiontest.Server.AdminConfig())
	if err != nil {
		b.Fatal(err)
	}
	const name = "win-tr-bench"
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{config.OSLabel: "windows", config.WindowsBuildLabel: "10.0.20348"}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.60"}}}}
	if _, err := clients.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = clients.Kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, _ := ssh.MarshalPrivateKey(priv, "bench")
	signer, _ := ssh.NewSignerFromKey(priv)
	sim, err := windows.Start(windows.Options{Addr: "127.0.0.60:0", Configured: true, AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}, LogInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sim.Close() })
	pool, err := remote.NewPool(remote.Config{Auth: remote.Auth{KeyPEM: pem.EncodeToMemory(block)},
		HostKeys: remote.NewKnownHostsStore(filepath.Join(b.TempDir(), "known_hosts")), KeepaliveInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pool.Close() })
	deps := triage.TriageDeps{
		Snapshot: func(ctx context.Context) (*model.Snapshot, error) {
			n, err := clients.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return &model.Snapshot{Cluster: model.ClusterInfo{WMCOVersion: "11.0.1"}, Nodes: []model.NodeInfo{cluster.NodeInfoFrom(n, "11.0.1")}}, nil
		},
		Cluster: triage.ClusterReads{Clients: clients},
		Hosts:   &session.PoolResolver{Pool: pool, Addrs: map[string]string{name: sim.Addr()}},
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := triage.Triage(ctx, name, deps)
		if err != nil || r.Index("service:kubelet") < 0 {
			b.Fatalf("triage: %v %+v", err, r)
		}
	}
}
