package configure_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/rollout"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/actiontest"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// WMCO's SSH commands to configure one fresh AWS host, counted by reading its source
// (openshift/windows-machine-config-operator: pkg/nodeconfig/nodeconfig.go NodeConfig.Configure and the
// pkg/windows/windows.go methods it calls). Every vm.Run is one SSH exec session; every EnsureFile and
// EnsureFileContent on a file that is absent is Test-Path, then a new SFTP client (its own session) for the
// transfer, then for payload files a `tar -xzf` to unpack it. Services other than WICD are created by WICD
// on the host, not over SSH, so these counts are fewer than that pattern would need for wmcon's work.
var wmcoConfigureCommands = []struct {
	what     string
	commands int
	sftp     int // SFTP sessions opened
}{
	{"windows.New: Get-Help (is the shell PowerShell?)", 1, 0},
	{"createBootstrapFiles: 5 files (ECR credential provider config, kubelet CA, bootstrap CA, bootstrap kubeconfig, kubelet.conf), Test-Path each", 5, 5},
	{"createTLSCerts: ReplaceDir (remove, mkdir)", 2, 1},
	{"createRegistryConfigFiles: ReplaceDir (remove, mkdir)", 2, 1},
	{"SyncTrustedCABundle: Test-Path", 1, 1},
	{"Bootstrap/RunWICDCleanup: sc.exe qc wicd, mkdir C:\\k, WICD binary (Test-Path, tar), its kubeconfig (Test-Path), wicd cleanup", 6, 2},
	{"Bootstrap: remove C:\\var\\lib\\cni", 1, 0},
	{"Bootstrap: Get-WindowsOptionalFeature Containers", 1, 0},
	{"Bootstrap/createDirectories: one `if not exist … mkdir` per RequiredDirectories entry (17)", 17, 0},
	{"Bootstrap/transferFiles: 18 payload files on AWS (Test-Path, tar -xzf each)", 36, 18},
	{"Bootstrap: wicd bootstrap", 1, 0},
	{"ConfigureWICD: mkdir, WICD binary and kubeconfig (Test-Path + Get-FileHash each)", 5, 0},
	{"ConfigureWICD/ensureServiceIsRunning: sc.exe qc, create, description, failure, query, start", 6, 0},
}

func wmcoCounts() (commands, sftp int) {
	for _, c := range wmcoConfigureCommands {
		commands += c.commands
		sftp += c.sftp
	}
	return commands, sftp
}

// configureBench is a real API server with the controller manager (CSR signer, node lifecycle), and bare
// simulated hosts answering 50 ms late whose kubelet.exe is the honest kubelet.
type configureBench struct {
	b      *testing.B
	srv    *kubeapi.Server
	ops    *cluster.Ops
	facts  cluster.NodeFacts
	signer ssh.Signer
	pool   *remote.Pool
	files  []nodeconfig.PayloadFile
	n      int
}

func newConfigureBench(b *testing.B) *configureBench {
	s := kubeapi.Start(b, kubeapi.WithControllerManager())
	clients, err := cluster.NewClients(s.AdminConfig())
	if err != nil {
		b.Fatal(err)
	}
	ops := cluster.NewOps(clients)
	nf, err := ops.ReadNodeFacts(context.Background(), cluster.NodeFactsOptions{Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	signer, pool := actiontest.NewTestPool(b)
	return &configureBench{b: b, srv: s, ops: ops, facts: nf, signer: signer, pool: pool, files: testPayload(b)}
}

// host starts a bare host with 50 ms of latency and returns the request that configures it.
func (cb *configureBench) host(i int) (*remote.Client, configure.ConfigureRequest) {
	cb.n++
	name := fmt.Sprintf("bench-cfg-%d-%d", i, cb.n)
	ip := fmt.Sprintf("127.0.94.%d", 10+i)
	sim, err := windows.Start(windows.Options{Addr: ip + ":0", Hostname: name, AuthorizedKeys: []ssh.PublicKey{cb.signer.PublicKey()},
		LogInterval: time.Hour, ServicePending: 20 * time.Millisecond,
		Programs: map[string]windows.Program{"kubelet.exe": kubelet.Kubelet(kubelet.KubeletOptions{})}})
	if err != nil {
		cb.b.Fatal(err)
	}
	cb.b.Cleanup(func() { sim.Close() })
	sim.SetLatency(actiontest.BenchLatency)
	c, err := cb.pool.Client(remote.Target{Node: name, Addr: sim.Addr()})
	if err != nil {
		cb.b.Fatal(err)
	}
	return c, configure.ConfigureRequest{Facts: cb.facts.Facts, BootstrapIdentity: cb.facts.BootstrapIdentity,
		Host: nodeconfig.Host{NodeName: name, IP: ip, BYOH: true}, HostNames: []string{name}, Payload: cb.files,
		CSRTimeout: time.Minute, ReadyTimeout: 2 * time.Minute}
}

func (cb *configureBench) configure(ctx context.Context, c *remote.Client, req configure.ConfigureRequest) {
	rec := &actiontest.Recorder{}
	if _, err := configure.Configure(ctx, cb.ops, c, req, rec); err != nil {
		cb.b.Fatalf("%v\n%s", err, rec.Dump())
	}
}

// BenchmarkConfigureOneHost configures one bare host into a Ready node (real API server and controller
// manager, honest kubelet) with 50 ms added to every reply the host sends, and counts wmcon's SSH round
// trips (one exec session each) next to those WMCO needs for the same host, counted from its source.
func BenchmarkConfigureOneHost(b *testing.B) {
	cb := newConfigureBench(b)
	ctx := context.Background()
	var trips int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c, req := cb.host(0)
		b.StartTimer()
		cb.configure(ctx, c, req)
		trips += c.Stats().RoundTrips
	}
	wmco, wmcoSFTP := wmcoCounts()
	perRun := float64(trips) / float64(b.N)
	b.ReportMetric(perRun, "roundtrips")
	b.ReportMetric(1, "sftp-sessions") // one per connection (remote.Client opens it once)
	b.ReportMetric(float64(wmco), "wmco-roundtrips")
	b.ReportMetric(float64(wmcoSFTP), "wmco-sftp-sessions")
	b.ReportMetric(perRun/float64(wmco), "ratio-to-wmco")
}

// BenchmarkConfigure20Hosts configures 20 bare hosts at once, at most rollout.DefaultConcurrency at
// a time (the fleet policy of actions/rollout), with 50 ms per reply, and one host alone in the same run
// for the ratio (target: 20 hosts in under 3× the time of one).
func BenchmarkConfigure20Hosts(b *testing.B) {
	const hosts = 20
	cb := newConfigureBench(b)
	ctx := context.Background()
	var one, many time.Duration
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
		sum := rollout.Rollout{MaxUnavailable: rollout.DefaultConcurrency, ContinueOnFailure: true}.Run(ctx, names,
			func(ctx context.Context, name string) error {
				_, err := configure.Configure(ctx, cb.ops, clients[name], reqs[name], &event.TextSink{W: io.Discard})
				return err
			})
		many += time.Since(start)
		if err := sum.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(one.Seconds()/float64(b.N), "s/one-host")
	b.ReportMetric(many.Seconds()/float64(b.N), "s/20-hosts")
	b.ReportMetric(many.Seconds()/one.Seconds(), "x-one-host")
}
