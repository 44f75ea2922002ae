package kubelet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/wmcon/wmcon/sim/windows"
)

// KubeletOptions tune the honest kubelet; zero values take the defaults.
type KubeletOptions struct {
	// Hosts resolves host names of API server URLs to loopback addresses, like a hosts file (for example
	// "api-int.test.example" → "127.0.0.1"). The simulated network has no DNS and no route out: any other
	// name does not resolve and any non-loopback address is unreachable, so the kubelet never dials out.
	Hosts map[string]string
	// HeartbeatInterval is how often the node's Lease is renewed (default 2s; a real kubelet renews every
	// 10s of a 40s lease). It must stay well below the node lifecycle controller's grace period.
	HeartbeatInterval time.Duration
	// StatusInterval is how often the Node's status (Ready heartbeat) is posted (default 5×HeartbeatInterval).
	StatusInterval time.Duration
	// Connect makes the API client from the credentials the kubelet loaded from its host. The default is a
	// real client-go clientset dialling through Hosts; the in-process demo passes its stand-in.
	Connect func(cfg *rest.Config) (kubernetes.Interface, error)
}

func (o *KubeletOptions) applyDefaults() {
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = 2 * time.Second
	}
	if o.StatusInterval <= 0 {
		o.StatusInterval = 5 * o.HeartbeatInterval
	}
	if o.Connect == nil {
		hosts := o.Hosts
		o.Connect = func(cfg *rest.Config) (kubernetes.Interface, error) {
			cfg = rest.CopyConfig(cfg)
			cfg.Dial = loopbackDialer(hosts)
			cfg.Timeout = 10 * time.Second
			return kubernetes.NewForConfig(cfg)
		}
	}
}

// Kubelet is an honest kubelet for simulated Windows hosts: give it to winsim as the program behind
// kubelet.exe,
//
//	windows.Options{Programs: map[string]windows.Program{"kubelet.exe": kubelet.Kubelet(kubelet.KubeletOptions{})}}
//
// and when the host's kubelet service starts it does what a real kubelet does, with exactly the files
// found on the host: it loads --config (a KubeletConfiguration) and its client CA file, then with
// --kubeconfig, or failing that --bootstrap-kubeconfig, it performs the TLS bootstrap through the API
// server (client CSR with the bootstrap credentials, wait for approval and signing, write the certificate
// under --cert-dir and the kubeconfig), registers its Node, renews its Lease, posts Ready status, and
// requests its serving certificate. What stops a real kubelet stops this one, with the real kubelet's
// error in its log: a missing or invalid file, a wrong URL, token or CA, a denied CSR, a stopped
// containerd.
func Kubelet(opts KubeletOptions) windows.Program {
	opts.applyDefaults()
	return func(ctx context.Context, p *windows.Process) error {
		k := &kubelet{opts: opts, p: p}
		return k.run(ctx)
	}
}

// kubelet is one run of the kubelet process.
type kubelet struct {
	opts KubeletOptions
	p    *windows.Process
	conf *kubeletConfig

	nodeName string
	nodeIP   string
	labels   map[string]string
}

func (k *kubelet) run(ctx context.Context) error {
	if err := k.loadFlagsAndConfig(); err != nil {
		return err
	}
	client, err := k.credentials(ctx)
	if err != nil || ctx.Err() != nil {
		return err
	}
	if err := k.checkRuntime(); err != nil {
		return err
	}
	return k.runNode(ctx, client)
}

// loadFlagsAndConfig reads what the kubelet reads before it talks to anyone.
func (k *kubelet) loadFlagsAndConfig() error {
	path, ok := k.p.Flag("config")
	if !ok || path == "" {
		return errors.New("failed to run Kubelet: --config is required by this kubelet (WMCO always passes it)")
	}
	conf, err := loadKubeletConfig(k.p, path)
	if err != nil {
		return err
	}
	k.conf = conf
	if ca := conf.Authentication.X509.ClientCAFile; ca != "" {
		data, err := k.p.ReadFile(ca)
		if err != nil {
			return fmt.Errorf("unable to load client CA file %s: %w", ca, notFound(ca))
		}
		if _, err := certutil.ParseCertsPEM(data); err != nil {
			return fmt.Errorf("unable to load client CA file %s: %w", ca, err)
		}
	}
	k.nodeName = strings.ToLower(k.p.Hostname())
	if v, ok := k.p.Flag("hostname-override"); ok && v != "" {
		k.nodeName = strings.ToLower(v)
	}
	k.nodeIP = k.p.IP()
	if v, ok := k.p.Flag("node-ip"); ok && v != "" {
		if net.ParseIP(v) == nil {
			return fmt.Errorf("failed to run Kubelet: invalid --node-ip %q", v)
		}
		k.nodeIP = v
	}
	labels, err := parseNodeLabels(k.p)
	if err != nil {
		return err
	}
	k.labels = labels
	return nil
}

// parseNodeLabels reads --node-labels and refuses, as the kubelet does, labels in the kubernetes.io and
// k8s.io namespaces that a kubelet may not set on itself (such as node-role.kubernetes.io/worker).
func parseNodeLabels(p *windows.Process) (map[string]string, error) {
	labels := map[string]string{}
	raw, _ := p.Flag("node-labels")
	var unknown []string
	for _, kv := range strings.Split(raw, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		key, val, _ := strings.Cut(kv, "=")
		labels[key] = val
		if restrictedNamespace(key) && !kubeletapis.IsKubeletLabel(key) {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v\n"+
			"--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (%s) or be in the specifically allowed set (%s)",
			unknown, strings.Join(kubeletapis.KubeletLabelNamespaces(), ", "), strings.Join(kubeletapis.KubeletLabels(), ", "))
	}
	return labels, nil
}

func restrictedNamespace(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, ns := range []string{"kubernetes.io", "k8s.io"} {
		if prefix == ns || strings.HasSuffix(prefix, "."+ns) {
			return true
		}
	}
	return false
}

// checkRuntime is the kubelet's CRI connection check: containerd's pipe must be open (containerd runs, and
// has opened it: a moment after its service started) and be the configured endpoint.
func (k *kubelet) checkRuntime() error {
	endpoint := k.conf.ContainerRuntimeEndpoint
	if v, ok := k.p.Flag("container-runtime-endpoint"); ok && v != "" {
		endpoint = v
	}
	const pipe = "npipe://./pipe/containerd-containerd"
	if !strings.EqualFold(endpoint, pipe) || !k.p.PipeOpen(windows.ContainerdPipe) {
		return fmt.Errorf("failed to run Kubelet: validate service connection: validate CRI v1 runtime API for endpoint %q: "+
			"rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: open \\\\\\\\.\\\\pipe\\\\containerd-containerd: The system cannot find the file specified.\"", endpoint)
	}
	return nil
}

// loopbackDialer dials only loopback addresses: IP literals in 127.0.0.0/8 or ::1, and names listed in
// hosts (which must map to loopback). Anything else fails as it would on a host with no such route or
// name, so nothing outside the machine is ever contacted.
func loopbackDialer(hosts map[string]string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if mapped, ok := hosts[strings.ToLower(host)]; ok {
			host = mapped
		} else if host == "localhost" {
			host = "127.0.0.1"
		}
		ip := net.ParseIP(host)
		if ip == nil {
			return nil, &net.OpError{Op: "dial", Net: network,
				Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
		}
		if !ip.IsLoopback() {
			return nil, &net.OpError{Op: "dial", Net: network, Addr: &net.TCPAddr{IP: ip},
				Err: errors.New("connectex: A socket operation was attempted to an unreachable network.")}
		}
		return d.DialContext(ctx, network, net.JoinHostPort(host, port))
	}
}

// notFound is the error Windows gives for a missing file.
func notFound(path string) error {
	return fmt.Errorf("open %s: The system cannot find the file specified.", path)
}

// serverHost is the host part of an API server URL, for log lines.
func serverHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Host
}
