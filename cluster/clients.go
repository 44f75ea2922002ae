// Package cluster is wmcon's cluster backend: it follows the objects the console shows with client-go informers
// and publishes them as immutable snapshots, and it performs the writes actions need (cordon, drain, ...).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	configclient "github.com/openshift/client-go/config/clientset/versioned"
	machineclient "github.com/openshift/client-go/machine/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wmcon/wmcon/localfile"
	"github.com/wmcon/wmcon/model"
)

// Clients are the API clients the cluster layer uses. Real clusters and the demo cluster (fake clientsets)
// fill the same struct, so everything above this package runs unchanged against either.
type Clients struct {
	Kube    kubernetes.Interface
	Machine machineclient.Interface
	Config  configclient.Interface
	Dynamic dynamic.Interface
	// Discovery tells the server's version and which APIs exist; the watcher needs it (the demo's answers
	// for the demo cluster).
	Discovery discovery.DiscoveryInterface
	// REST is the configuration the clients were built from; nil for the demo.
	REST *rest.Config
	// Conn reports the reachability of the API server as the clients see it; nil for the demo.
	Conn *ConnTracker
}

// Target names the cluster for the header.
type Target struct {
	Server  string
	Context string
}

// NewClients builds every client from one REST config.
func NewClients(cfg *rest.Config) (Clients, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		// client-go's default of 5 requests a second (burst 10) spreads a start's lists, the pages of a
		// large fleet's Nodes list and the watches over seconds: at 10,000 nodes the full list took 30 s
		// instead of a few. kubectl's defaults, which the API server's priority and fairness is sized for.
		cfg.QPS, cfg.Burst = 50, 300
	}
	conn := &ConnTracker{}
	cfg.Wrap(conn.Wrap)
	kube, err := kubernetes.NewForConfig(protobufConfig(cfg))
	if err != nil {
		return Clients{}, fmt.Errorf("create Kubernetes client: %w", err)
	}
	machine, err := machineclient.NewForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("create machine API client: %w", err)
	}
	conf, err := configclient.NewForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("create config API client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("create dynamic client: %w", err)
	}
	return Clients{Kube: kube, Machine: machine, Config: conf, Dynamic: dyn, Discovery: kube.Discovery(), REST: cfg, Conn: conn}, nil
}

// protobufConfig asks for Kubernetes' own resources as protobuf, which the API server encodes and
// client-go decodes several times faster than JSON and in less memory: the first screen of a large
// cluster waits for its node list. The OpenShift and dynamic clients stay on JSON (CRD-served resources
// have no protobuf encoding); JSON remains acceptable for the rare reply that has no protobuf form.
func protobufConfig(cfg *rest.Config) *rest.Config {
	pb := rest.CopyConfig(cfg)
	pb.ContentType = runtime.ContentTypeProtobuf
	pb.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return pb
}

// Connect turns the standard kubeconfig flags into clients and checks that the API server answers, so that a
// bad kubeconfig, an unknown context, an unreachable server or expired credentials fail here with one sentence
// saying what to do, rather than later as a confusing watch error.
func Connect(ctx context.Context, flags *genericclioptions.ConfigFlags) (Clients, Target, error) {
	if err := checkKubeconfigFiles(flags); err != nil {
		return Clients{}, Target{}, err
	}
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return Clients{}, Target{}, ExplainConfigError(err)
	}
	if err := checkContextEntries(raw, flags); err != nil {
		return Clients{}, Target{}, err
	}
	// With no kubeconfig at all client-go silently falls back to http://localhost:8080; say what is missing.
	if len(raw.Clusters) == 0 && (flags.APIServer == nil || *flags.APIServer == "") {
		return Clients{}, Target{}, ExplainConfigError(clientcmd.ErrEmptyConfig)
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return Clients{}, Target{}, ExplainConfigError(err)
	}
	if err := checkClientPair(cfg); err != nil {
		return Clients{}, Target{}, err
	}
	target := Target{Server: model.RedactURL(cfg.Host), Context: raw.CurrentContext}
	if flags.Context != nil && *flags.Context != "" {
		target.Context = *flags.Context
	}
	clients, err := NewClients(cfg)
	if err != nil {
		return Clients{}, Target{}, err
	}
	if err := Ping(ctx, clients, 15*time.Second); err != nil {
		return Clients{}, Target{}, err
	}
	return clients, target, nil
}

// checkKubeconfigFiles refuses kubeconfig paths that are not regular files of a sane size before client-go
// reads them whole: --kubeconfig /dev/zero would otherwise fill memory, and a FIFO would block forever.
func checkKubeconfigFiles(flags *genericclioptions.ConfigFlags) error {
	var paths []string
	switch {
	case flags.KubeConfig != nil && *flags.KubeConfig != "":
		paths = []string{*flags.KubeConfig}
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		paths = filepath.SplitList(os.Getenv(clientcmd.RecommendedConfigPathEnvVar))
	default:
		paths = []string{clientcmd.RecommendedHomeFile}
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := localfile.Check(p, localfile.MaxKubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("the kubeconfig cannot be used: %w", err)
		}
	}
	return nil
}

// Ping asks the API server for its version, with a bounded wait, and explains a failure. The wait covers
// the kubeconfig's credential plugin too: client-go runs it with no time limit and without watching any
// context, so a plugin waiting for a browser or a prompt nobody sees would hang wmcon. Past timeout, or
// when ctx ends, Ping returns (the plugin is left to the operating system) with an error that names it.
func Ping(ctx context.Context, c Clients, timeout time.Duration) error {
	if c.REST == nil {
		return nil
	}
	cfg := rest.CopyConfig(c.REST)
	cfg.Timeout = timeout
	// The exec plugin's round tripper wraps this one, so a request reaching it has its credentials.
	var credentialed sync.Once
	gotCredentials := make(chan struct{})
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			credentialed.Do(func() { close(gotCredentials) })
			return rt.RoundTrip(r)
		})
	})
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create discovery client: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := d.ServerVersion()
		done <- err
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		select {
		case <-gotCredentials:
			err = fmt.Errorf("no answer within %s", timeout)
		default:
			if cfg.ExecProvider != nil {
				return fmt.Errorf("the kubeconfig's credential plugin %q gave no credentials within %s, so no request reached the API server: "+
					"run it by hand to see what it waits for (a browser login, a prompt), then log in again with it", cfg.ExecProvider.Command, timeout)
			}
			err = fmt.Errorf("no answer within %s", timeout)
		}
	}
	if err != nil {
		if perr, ok := explainPluginError(cfg, err); ok {
			return perr
		}
		return ExplainServerError(model.RedactURL(cfg.Host), err)
	}
	return nil
}

// ExplainConfigError rewrites kubeconfig loading errors as a sentence with what to do.
func ExplainConfigError(err error) error {
	msg := err.Error()
	var pathErr *os.PathError
	switch {
	case errors.As(err, &pathErr) && errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("the kubeconfig file %s does not exist: pass an existing file with --kubeconfig or set KUBECONFIG", pathErr.Path)
	case clientcmd.IsEmptyConfig(err) || strings.Contains(msg, "no configuration has been provided"):
		return errors.New("no kubeconfig found: pass --kubeconfig, set KUBECONFIG, or log in with 'oc login' (or try 'wmcon --demo')")
	case strings.Contains(msg, "context was not found") || strings.Contains(msg, "does not exist") && strings.Contains(msg, "context"):
		return fmt.Errorf("%s: list the contexts with 'oc config get-contexts' and pass one with --context", strings.TrimPrefix(msg, "invalid configuration: "))
	case strings.Contains(msg, "error loading config file") || strings.Contains(msg, "yaml") || strings.Contains(msg, "json"):
		return fmt.Errorf("the kubeconfig cannot be read (%s): fix the file or log in again with 'oc login'", msg)
	default:
		return fmt.Errorf("invalid kubeconfig: %s: check the file and the --context/--cluster/--user flags", msg)
	}
}

// ExplainServerError rewrites a failed request to the API server as a sentence with what to do.
func ExplainServerError(server string, err error) error {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var urlErr *url.Error
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the API server %s rejected your credentials (401 Unauthorized): they have probably expired; log in again with 'oc login'", server)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("the API server %s refused the request (403 Forbidden): %v", server, err)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("cannot resolve the API server host in %s (%v): check the server address in the kubeconfig and your DNS/VPN", server, dnsErr)
	case errors.As(err, &opErr), errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &urlErr):
		return fmt.Errorf("cannot reach the API server at %s (%v): check the network/VPN and the server address in the kubeconfig", server, rootCause(err))
	default:
		return fmt.Errorf("the API server at %s failed: %v", server, err)
	}
}

func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
