package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// configureFlags are the flags of wmcon configure.
type configureFlags struct {
	address, user       string
	payloadDir, image   string
	dryRun              bool
	csrTimeout, waitRdy time.Duration
}

func newConfigureCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	var f configureFlags
	cmd := &cobra.Command{
		Use:   "configure (NODE | --address ADDR [--user NAME])",
		Short: "Make a Windows host a Ready worker node over SSH, as WMCO does (or show the plan with --dry-run)",
		Long: "configure reads the cluster's facts and the payload, reads what the host already has, and applies only\n" +
			"the difference: directories, the payload's binaries (SHA-256 checked, unchanged files skipped), kubelet.conf,\n" +
			"the bootstrap kubeconfig and CAs, containerd's configuration, the services in dependency order. It then\n" +
			"approves this host's kubelet CSRs (and no others), labels and annotates the Node and waits until it is Ready.\n" +
			"A re-run changes nothing on a configured host; after a failure it resumes where the host stands.\n" +
			"--dry-run prints every directory, file and service command line it would apply and changes nothing.\n" +
			"The payload is --payload DIR (laid out like WMCO's /payload, with sha256sum), --payload-image REF, or by\n" +
			"default the installed WMCO operator's image, pulled with the cluster pull secret and cached by digest.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			node := ""
			if len(args) == 1 {
				node = args[0]
			}
			if (node == "") == (f.address == "") {
				return errors.New("name a NODE or give --address ADDR (not both)")
			}
			if f.payloadDir != "" && f.image != "" {
				return errors.New("give --payload DIR or --payload-image REF, not both")
			}
			if !f.dryRun {
				if err := g.refuseReadOnly("configure a host"); err != nil {
					return err
				}
			}
			sink, err := out.sink(cmd.OutOrStdout(), nil)
			if err != nil {
				return err
			}
			s, err := g.session(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			return g.configure(cmd, s, sink, node, f, out.format == "json")
		},
	}
	fs := cmd.Flags()
	out.add(fs)
	fs.StringVar(&f.address, "address", "", "the host's address (IPv4 or DNS name, optionally :port) when it has no Node yet")
	fs.StringVar(&f.user, "user", "", "SSH user for --address (default Administrator, capi on Azure)")
	fs.StringVar(&f.payloadDir, "payload", "", "payload directory laid out like WMCO's /payload (binaries and sha256sum)")
	fs.StringVar(&f.image, "payload-image", "", "OCI image whose /payload to install (default: the installed WMCO operator's image)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan (every directory, file and service command line) and change nothing")
	fs.DurationVar(&f.csrTimeout, "csr-timeout", 5*time.Minute, "how long to wait for each of the kubelet's certificate requests")
	fs.DurationVar(&f.waitRdy, "ready-timeout", 10*time.Minute, "how long to wait for the Node to register and to be Ready")
	return cmd
}

func (g *globalOptions) configure(cmd *cobra.Command, s *session, sink event.Sink, node string, f configureFlags, jsonOut bool) error {
	ctx := cmd.Context()
	ops := cluster.NewOps(s.Clients)
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return err
	}
	req := actions.ConfigureRequest{DryRun: f.dryRun, CSRTimeout: f.csrTimeout, ReadyTimeout: f.waitRdy}
	host, err := g.configureTarget(ctx, s, node, f, &req)
	if err != nil {
		return err
	}
	if owner, err := ops.WMCOOwner(ctx, req.Host.IP, node); err != nil {
		return err
	} else if owner != "" {
		return fmt.Errorf("the Windows Machine Config Operator owns this host (%s) and configures it itself: wmcon does not fight it", owner)
	}
	version := snap.Cluster.WMCOVersion
	if version == "" {
		version = "wmcon-" + Version
	}
	nf, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{DryRun: f.dryRun, Version: version})
	if err != nil {
		return err
	}
	req.Facts, req.BootstrapIdentity, req.Notes = nf.Facts, nf.BootstrapIdentity, nf.Notes
	p, err := g.loadPayload(ctx, s, ops, f)
	if err != nil {
		return err
	}
	req.Payload = p.NodeFiles()
	req.Notes = append(req.Notes, fmt.Sprintf("payload %s: %d files, %s, verified against its sha256sum", p.Source, len(p.Files), nodeconfig.HumanBytes(p.Bytes())))
	req.PubKeyHash = s.pubKeyHash(ctx, g)
	if !f.dryRun {
		audit, err := actions.DefaultAuditLog()
		if err != nil {
			return err
		}
		sink = &actions.Auditor{Sink: sink, Log: audit, User: g.whoAmI(ctx, ops), Options: configureOptions(f)}
	}
	res, err := actions.Configure(ctx, ops, host, req, sink)
	if err != nil {
		return exitFor(err)
	}
	if f.dryRun {
		if jsonOut {
			return json.NewEncoder(cmd.OutOrStdout()).Encode(res.Plan)
		}
		return res.Plan.Write(cmd.OutOrStdout())
	}
	return nil
}

func configureOptions(f configureFlags) string {
	var parts []string
	if f.address != "" {
		parts = append(parts, "--address "+f.address)
	}
	if f.payloadDir != "" {
		parts = append(parts, "--payload "+f.payloadDir)
	}
	if f.image != "" {
		parts = append(parts, "--payload-image "+f.image)
	}
	return strings.Join(parts, " ")
}

// configureTarget finds the host: a Node's address, or --address (whose Windows host name, lower case,
// becomes the node name, as the kubelet would register it).
func (g *globalOptions) configureTarget(ctx context.Context, s *session, node string, f configureFlags, req *actions.ConfigureRequest) (remote.Host, error) {
	if node != "" {
		n, err := s.Node(ctx, node)
		if err != nil {
			return nil, err
		}
		if !n.Windows {
			return nil, fmt.Errorf("%s is not a Windows node", node)
		}
		h, err := s.Resolver.Host(ctx, n)
		if err != nil {
			return nil, err
		}
		req.Host = nodeconfig.Host{NodeName: n.Name, IP: n.InternalIP, BYOH: n.BYOH}
		if hn, err := h.Hostname(ctx); err == nil {
			req.HostNames = []string{strings.TrimSpace(hn)}
		}
		return h, nil
	}
	hostPart, _, err := net.SplitHostPort(f.address)
	if err != nil {
		hostPart = f.address
	}
	ip, err := ipv4Of(ctx, hostPart)
	if err != nil {
		return nil, err
	}
	platform := ""
	if snap := s.Watcher.Current(); snap != nil {
		platform = snap.Cluster.Platform
	}
	h, err := s.Pool.Host(remote.Target{Addr: f.address, User: f.user, Platform: platform})
	if err != nil {
		return nil, err
	}
	hn, err := h.Hostname(ctx)
	if err != nil {
		return nil, fmt.Errorf("reach %s: %w", f.address, err)
	}
	name := strings.ToLower(strings.TrimSpace(hn))
	req.Host = nodeconfig.Host{NodeName: name, IP: ip, BYOH: true}
	req.HostNames = []string{name}
	return h, nil
}

func ipv4Of(ctx context.Context, host string) (string, error) {
	if ip := net.ParseIP(host); ip != nil {
		if ip.To4() == nil {
			return "", fmt.Errorf("--address %s: IPv6 is not supported by WMCO; use the host's IPv4 address", host)
		}
		return ip.String(), nil
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip4", host)
	if err != nil || len(ips) == 0 {
		return "", fmt.Errorf("--address %s does not resolve to an IPv4 address: %v", host, err)
	}
	return ips[0].String(), nil
}

// loadPayload verifies the payload from --payload, --payload-image, the demo's synthetic one, or the
// installed operator's image.
func (g *globalOptions) loadPayload(ctx context.Context, s *session, ops *cluster.Ops, f configureFlags) (*payload.Payload, error) {
	cache, err := payload.DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	if f.payloadDir != "" {
		return payload.LoadDir(f.payloadDir, cache)
	}
	image := f.image
	if image == "" && s.Demo != nil {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("wmcon-demo-payload-%d", os.Getpid()))
		defer os.RemoveAll(dir)
		if err := payload.WriteSynthetic(dir, allPayloadNames()); err != nil {
			return nil, err
		}
		return payload.LoadDir(dir, filepath.Join(cache, "demo"))
	}
	if image == "" {
		if image, err = ops.OperatorImage(ctx); err != nil {
			return nil, err
		}
		if image == "" {
			return nil, errors.New("no payload: WMCO is not installed, so there is no operator image to take it from; give --payload DIR or --payload-image REF")
		}
	}
	return payload.Pull(ctx, image, payload.PullOptions{CacheDir: cache, PullSecret: ops.PullSecret(ctx)})
}

func allPayloadNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range []string{"None", "AWS", "Azure"} {
		for _, n := range nodeconfig.RequiredPayload(p) {
			if !seen[n] {
				seen[n], out = true, append(out, n)
			}
		}
	}
	return out
}

// pubKeyHash is WMCO's pub-key-hash of the key wmcon logs in with (the cluster's cloud-private-key, or
// the first --ssh-key), "" when it cannot be read without a passphrase.
func (s *session) pubKeyHash(ctx context.Context, g *globalOptions) string {
	pem, _ := s.clusterKey(ctx)
	if len(g.ssh.keys) > 0 {
		b, err := os.ReadFile(g.ssh.keys[0])
		if err != nil {
			return ""
		}
		pem = b
	}
	if len(pem) == 0 {
		return ""
	}
	signer, err := sshkey.Parse(pem, nil)
	if err != nil {
		return ""
	}
	return sshkey.PubKeyHash(signer.PublicKey())
}

func newDeconfigureCommand(g *globalOptions) *cobra.Command {
	var out outputFlags
	var df drainFlags
	cmd := &cobra.Command{
		Use:   "deconfigure NODE",
		Short: "Reverse configure: cordon, drain, remove the node services and files, delete the Node",
		Long: "deconfigure does what WMCO does when a BYOH host is removed: it cordons and drains the node, stops and\n" +
			"deletes the node services (dependents first), removes C:\\k, the kubelet's certificates, CNI state and the\n" +
			"services' log directories, and deletes the Node. The host stays reachable over SSH. Running it again\n" +
			"skips what is already gone.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			drain, answers, err := df.options()
			if err != nil {
				return err
			}
			return g.changing(cmd, "deconfigure a host", &out, answers, func(s *session, sink event.Sink) error {
				ctx := cmd.Context()
				n, err := s.Node(ctx, args[0])
				if err != nil {
					return err
				}
				h, err := s.Resolver.Host(ctx, n)
				if err != nil {
					return err
				}
				ops := cluster.NewOps(s.Clients)
				audit, err := actions.DefaultAuditLog()
				if err != nil {
					return err
				}
				sink = &actions.Auditor{Sink: sink, Log: audit, User: g.whoAmI(ctx, ops), Options: drain.String()}
				return exitFor(actions.Deconfigure(ctx, ops, h, n.Name, cluster.DrainOptions{DrainOptions: drain}, sink))
			})
		},
	}
	out.add(cmd.Flags())
	df.add(cmd.Flags())
	return cmd
}
