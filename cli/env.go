package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/demo"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

// sshOptions are the flags that say how to reach Windows hosts.
type sshOptions struct {
	keys          []string
	user          string
	bastion       string
	sshConfig     string
	knownHosts    string
	agent         bool
	passphraseEnv string
	passphrase    remote.PassphraseFunc // the console's prompt; nil reads passphraseEnv
}

func (o *sshOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.keys, "ssh-key", nil, "private key file for Windows hosts (default: the cluster's cloud-private-key secret)")
	fs.StringVar(&o.user, "ssh-user", "", "user on Windows hosts (default Administrator, capi on Azure, windows-instances for BYOH)")
	fs.StringVar(&o.bastion, "ssh-bastion", "", "jump host(s) in ProxyJump form, e.g. core@bastion.example.com (default: a run=ssh-bastion Service, if any)")
	fs.StringVar(&o.sshConfig, "ssh-config", "~/.ssh/config", "ssh_config file for node addresses and jump hosts (\"\" for none)")
	fs.StringVar(&o.knownHosts, "known-hosts", "", "local pins used when the cluster cannot store host keys (default ~/.config/wmcon/known_hosts)")
	fs.BoolVar(&o.agent, "ssh-agent", true, "also offer the keys of the ssh-agent at $SSH_AUTH_SOCK")
	fs.StringVar(&o.passphraseEnv, "ssh-passphrase-env", remote.PassphraseEnv, "environment variable holding the passphrase of an encrypted key")
}

// session is what a headless command (and the console) needs: cluster clients, a live watcher and a way to
// reach each Windows node's host. It works the same on the demo cluster.
type session struct {
	Clients  cluster.Clients
	Target   cluster.Target
	Resolver actions.HostResolver
	HostKeys *cluster.HostKeyStore
	Pool     *remote.Pool
	Watcher  *cluster.Watcher
	Runner   actions.Runner // runs every action request, for the console and the headless commands
	Demo     *demo.Cluster  // nil on a real cluster
	cancel   context.CancelFunc
	scratch  string // a file of the demo's to remove on Close
}

// session connects (or starts the demo cluster), starts the watcher and prepares the SSH pool. It does not
// wait for the first snapshot: Snapshot does.
func (g *globalOptions) session(ctx context.Context) (*session, error) {
	ctx, cancel := context.WithCancel(ctx)
	s := &session{cancel: cancel}
	if err := s.connect(ctx, g); err != nil {
		cancel()
		return nil, err
	}
	s.Watcher = cluster.NewWatcher(s.Clients, s.Target, cluster.WatcherOptions{})
	go s.Watcher.Run(ctx)
	if err := s.openPool(ctx, g); err != nil {
		s.Close()
		return nil, err
	}
	ops := cluster.NewOps(s.Clients)
	s.Runner = actions.Runner{Backends: actions.Backends{Cluster: ops, Hosts: s.Resolver, Node: s.Node,
		User: func(ctx context.Context) string { return g.whoAmI(ctx, ops) }}}
	return s, nil
}

func (s *session) connect(ctx context.Context, g *globalOptions) error {
	if !g.demo {
		var err error
		s.Clients, s.Target, err = cluster.Connect(ctx, g.kube)
		return err
	}
	d, err := demo.New(demo.Options{})
	if err != nil {
		return err
	}
	go d.Run(ctx)
	s.Demo, s.Clients, s.Target = d, d.Clients, d.Target
	return nil
}

// openPool builds the SSH pool: keys from flags or the cluster's secret, pins on the cluster (known_hosts
// when RBAC forbids), and the bastion from the flag or the cluster's run=ssh-bastion Service.
func (s *session) openPool(ctx context.Context, g *globalOptions) error {
	o := g.ssh
	if o.passphrase == nil {
		o.passphrase = remote.PassphraseFromEnv(o.passphraseEnv)
	}
	pins := knownHostsPath(o.knownHosts, s.Demo != nil)
	if s.Demo != nil && o.knownHosts == "" {
		s.scratch = pins
	}
	local := remote.NewKnownHostsStore(pins)
	s.HostKeys = &cluster.HostKeyStore{Kube: s.Clients.Kube, Local: local, NodeFor: s.nodeFor}
	cfg := remote.Config{
		Auth:     remote.Auth{KeyFiles: o.keys, Agent: o.agent && s.Demo == nil, Passphrase: o.passphrase},
		User:     o.user,
		HostKeys: s.HostKeys,
	}
	if len(o.keys) == 0 {
		cfg.Auth.KeyPEM, cfg.Auth.KeyPEMName = s.clusterKey(ctx)
	}
	jumps, err := s.bastion(ctx, o.bastion)
	if err != nil {
		return err
	}
	cfg.Jumps = jumps
	if s.Demo == nil {
		cfg.SSHConfigPath = o.sshConfig
	}
	s.Pool, err = remote.NewPool(cfg)
	if err != nil {
		return err
	}
	s.Resolver = &liveResolver{s: s}
	return nil
}

// clusterKey reads cloud-private-key, the key WMCO itself uses; without it wmcon falls back to the agent.
func (s *session) clusterKey(ctx context.Context) ([]byte, string) {
	if s.Demo != nil {
		return s.Demo.KeyPEM, config.PrivateKeySecret
	}
	sec, err := s.Clients.Kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, config.PrivateKeySecret, metav1.GetOptions{})
	if err != nil {
		return nil, ""
	}
	return sec.Data[config.PrivateKeySecretKey], config.PrivateKeySecret
}

// bastion parses --ssh-bastion, or finds the cluster's ssh-bastion Service (user core) when none is given.
func (s *session) bastion(ctx context.Context, flag string) ([]remote.Hop, error) {
	if flag != "" {
		hops, err := remote.ParseJumpSpec(flag)
		if err != nil {
			return nil, fmt.Errorf("--ssh-bastion %q: %w (expected [user@]host[:port][,...])", flag, err)
		}
		return hops, nil
	}
	if s.Demo != nil {
		return nil, nil
	}
	addr, ok, err := cluster.FindBastion(ctx, s.Clients.Kube)
	if err != nil || !ok {
		return nil, nil // no bastion: nodes are dialled directly
	}
	return remote.ParseJumpSpec(config.BastionUser + "@" + addr)
}

func (s *session) nodeFor(addr string) (string, bool) {
	if snap := s.Watcher.Current(); snap != nil {
		return snap.NodeByAddress(addr)
	}
	return "", false
}

// Snapshot waits (bounded by ctx) until nodes are listed, then returns the current snapshot.
func (s *session) Snapshot(ctx context.Context) (*model.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if snap := s.Watcher.Current(); snap != nil {
			switch st := snap.Resources[model.ResNodes]; st.Availability {
			case model.Available:
				return snap, nil
			case model.Forbidden:
				return nil, errors.New(st.Message)
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the cluster's nodes could not be listed within 30s (%s): check the connection and your access", lastProblem(s.Watcher.Current()))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func lastProblem(snap *model.Snapshot) string {
	if snap == nil {
		return "no answer yet"
	}
	if !snap.Connection.Connected {
		return snap.Connection.LastError
	}
	return snap.Resources[model.ResNodes].Message
}

// Node returns a node of the snapshot by name, or an error that lists the Windows nodes there are.
func (s *session) Node(ctx context.Context, name string) (model.NodeInfo, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return model.NodeInfo{}, err
	}
	if n, ok := snap.Node(name); ok {
		return n, nil
	}
	var names []string
	for _, n := range snap.WindowsNodes() {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	hint := "there are no Windows nodes"
	if len(names) > 0 {
		hint = "Windows nodes: " + strings.Join(names, ", ")
	}
	return model.NodeInfo{}, fmt.Errorf("node %q not found (%s)", name, hint)
}

// Close stops the watcher, the demo and every SSH connection.
func (s *session) Close() {
	s.cancel()
	if s.Pool != nil {
		_ = s.Pool.Close()
	}
	if s.Demo != nil {
		s.Demo.Close()
	}
	if s.scratch != "" {
		_ = os.Remove(s.scratch)
	}
}

// liveResolver resolves nodes with what the current snapshot says (platform, BYOH users), so the console can
// act before and after the cluster changes without rebuilding anything.
type liveResolver struct{ s *session }

func (r *liveResolver) Host(ctx context.Context, n model.NodeInfo) (remote.Host, error) {
	pr := &actions.PoolResolver{Pool: r.s.Pool}
	if snap := r.s.Watcher.Current(); snap != nil {
		pr.Platform = snap.Cluster.Platform
		pr.Users = snap.BYOHUser
	}
	if r.s.Demo != nil {
		pr.Addrs = r.s.Demo.HostAddrs()
	}
	return pr.Host(ctx, n)
}

// knownHostsPath is the local pin file: the flag, else ~/.config/wmcon/known_hosts. The demo keeps its pins
// in a throwaway file so it never touches the user's.
func knownHostsPath(flag string, isDemo bool) string {
	if flag != "" {
		return flag
	}
	if isDemo {
		return filepath.Join(os.TempDir(), fmt.Sprintf("wmcon-demo-known_hosts-%d", os.Getpid()))
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = filepath.Join(os.Getenv("HOME"), ".config")
	}
	return filepath.Join(dir, "wmcon", "known_hosts")
}
