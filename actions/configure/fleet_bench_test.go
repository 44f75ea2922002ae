package configure_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/testsupport/sshd"
)

// fleetAtOnce bounds the hosts configured at once. A host's configuration is mostly waiting (the host's
// replies, its kubelet, the CSR signer, the node turning Ready), so a bound below the fleet's size costs whole
// waves: 32 at a time took 5.2× one host where all 100 took 1.65×. New hosts serve nothing yet, so the bound
// is what this machine and the one bastion connection carry, not the fleet's availability (as it is for
// reboots and drains).
const fleetAtOnce = 100

// bastionPool is actiontest.NewTestPool reaching every host through bastion, a real OpenSSH sshd (as the cluster's
// ssh-bastion Service is), which accepts the same key.
func bastionPool(b *testing.B, bastion *sshd.Server) (ssh.Signer, *remote.Pool) {
	b.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "wmcon-test")
	if err != nil {
		b.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		b.Fatal(err)
	}
	bastion.AuthorizeKey(b, signer.PublicKey())
	pool, err := remote.NewPool(remote.Config{
		Auth:              remote.Auth{KeyPEM: pem.EncodeToMemory(block), KeyPEMName: "cloud-private-key"},
		Jumps:             []remote.Hop{{User: bastion.User, Host: "127.0.0.1", Port: bastion.Port}},
		HostKeys:          remote.NewKnownHostsStore(filepath.Join(b.TempDir(), "known_hosts")),
		BastionHostKeys:   remote.NewKnownHostsStore(bastion.KnownHosts),
		DialTimeout:       30 * time.Second,
		KeepaliveInterval: -1,
		CommandTimeout:    time.Minute,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pool.Close() })
	return signer, pool
}

// BenchmarkConfigure100HostsViaBastion configures 100 bare hosts at once through one bastion (real
// OpenSSH), at most fleetAtOnce at a time, with 50 ms added to every reply the hosts send, and one host
// alone through the same bastion in the same run for the ratio (target: at most 3× one host). It reports
// the SSH connections: logins to the bastion (one, shared by every host) and the most any host's client
// dialled (one).
func BenchmarkConfigure100HostsViaBastion(b *testing.B) {
	const hosts = 100
	cb := newConfigureBench(b)
	bastion := sshd.Start(b)
	cb.signer, cb.pool = bastionPool(b, bastion)
	ctx := context.Background()
	var one, many time.Duration
	var dials int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c, req := cb.host(0)
		clients := map[string]*remote.Client{}
		reqs := map[string]configure.ConfigureRequest{}
		var names []string
		for j := 1; j <= hosts; j++ {
			c, req := cb.host(j)
			clients[req.Host.NodeName], reqs[req.Host.NodeName] = c, req
			names = append(names, req.Host.NodeName)
		}
		b.StartTimer()
		start := time.Now()
		cb.configure(ctx, c, req)
		one += time.Since(start)
		start = time.Now()
		sum := rollout.Rollout{MaxUnavailable: fleetAtOnce, ContinueOnFailure: true}.Run(ctx, names,
			func(ctx context.Context, name string) error {
				_, err := configure.Configure(ctx, cb.ops, clients[name], reqs[name], &event.TextSink{W: io.Discard})
				return err
			})
		many += time.Since(start)
		if err := sum.Err(); err != nil {
			b.Fatal(err)
		}
		for _, c := range clients {
			dials = max(dials, c.Stats().Dials)
		}
	}
	b.ReportMetric(one.Seconds()/float64(b.N), "s/one-host")
	b.ReportMetric(many.Seconds()/float64(b.N), "s/100-hosts")
	b.ReportMetric(many.Seconds()/one.Seconds(), "x-one-host")
	b.ReportMetric(float64(strings.Count(bastion.Log(), "Accepted publickey")), "bastion-logins")
	b.ReportMetric(float64(dials), "max-dials-per-host")
}
