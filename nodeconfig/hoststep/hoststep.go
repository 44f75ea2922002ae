// Package hoststep runs the host-side steps of WMCO's services contract on a Windows host: each service's
// PowerShell pre-scripts, before the service is (re)configured, as WMCO's node daemon (WICD) runs them, with
// their outputs filling the service's command line. WMCO's own payload scripts are replaced by wmcon's steps
// over SSH that leave the host as the script would (the README's "How wmcon configures a node, and where it
// differs from WMCO"): the network configuration (network-conf.ps1: the HNS VIP endpoint, cni.conf and
// kube-proxy.conf), the Defender exclusion (windows-defender-exclusion.ps1) and GCP's host name
// (gcp-get-hostname.ps1). Any other pre-script runs as the contract writes it.
package hoststep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/contract"
	"github.com/wmcon/wmcon/remote"
)

// Host is what the steps ask of a Windows host; *remote.Client has it.
type Host interface {
	remote.PreScripts
	remote.HostNetwork
	remote.Defender
	remote.CloudMetadata
	remote.HostDNS
	Upload(ctx context.Context, files []remote.Upload, opts remote.UploadOptions) (remote.UploadReport, error)
	Hostname(ctx context.Context) (string, error)
}

// Options are what the steps need from the cluster, and how long they wait.
type Options struct {
	// ServiceNetwork is the cluster's service network CIDR: WMCO generates network-conf.ps1 with it, and the
	// CNI configuration keeps it out of NAT and inside the overlay.
	ServiceNetwork string
	// HNSModule is WMCO's hns.psm1 on the host (default nodeconfig.HNSModulePath).
	HNSModule string
	// NetworkTries and NetworkDelay bound the wait for the hybrid overlay HNS network, which
	// hybrid-overlay-node creates once it runs (default 20 tries 1 s apart, as network-conf.ps1 waits).
	NetworkTries int
	NetworkDelay time.Duration
}

func (o Options) withDefaults() Options {
	if o.HNSModule == "" {
		o.HNSModule = nodeconfig.HNSModulePath
	}
	if o.NetworkTries <= 0 {
		o.NetworkTries = 20
	}
	if o.NetworkDelay <= 0 {
		o.NetworkDelay = time.Second
	}
	return o
}

// Outputs runs svc's pre-scripts on the host, in order (their node arguments filled from node, which is nil
// before the Node exists: bootstrap services have none), and returns the values they give the variables of
// svc's command line. WMCO's node daemon runs them every time it reconciles, so each step is idempotent.
func Outputs(ctx context.Context, h Host, svc contract.Service, node *corev1.Node, opts Options) (map[string]string, error) {
	opts = opts.withDefaults()
	cmds, err := contract.PreScriptCommands(svc, node)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, cmd := range cmds {
		p := svc.PowershellPreScripts[i]
		val, err := run(ctx, h, cmd, p.VariableName != "", opts)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", svc.Name, err)
		}
		if p.VariableName != "" {
			out[p.VariableName] = val
		}
	}
	return out, nil
}

// Resolve runs svc's pre-scripts on the host and returns svc's command line resolved with node and their
// outputs, as WMCO's node daemon registers it.
func Resolve(ctx context.Context, h Host, svc contract.Service, node *corev1.Node, opts Options) (string, error) {
	out, err := Outputs(ctx, h, svc, node, opts)
	if err != nil {
		return "", err
	}
	return contract.Resolve(svc, node, out)
}

// AllOutputs runs the pre-scripts of several services in their order and returns each one's outputs by
// service name (what nodeconfig.Host.PreScriptOutputs takes).
func AllOutputs(ctx context.Context, h Host, services []contract.Service, node *corev1.Node, opts Options) (map[string]map[string]string, error) {
	all := map[string]map[string]string{}
	for _, s := range services {
		out, err := Outputs(ctx, h, s, node, opts)
		if err != nil {
			return nil, err
		}
		all[s.Name] = out
	}
	return all, nil
}

// Values runs, for each service, only the pre-scripts that fill a variable: WMCO's read the host (its name,
// its address) and change nothing, so a plan (--dry-run) may run them. A script that needs node values runs
// only with a node; without one (before the Node exists) it is left out, and resolving a command line that
// needs its variable fails naming it. The result is by service name then variable
// (nodeconfig.Host.PreScriptOutputs).
func Values(ctx context.Context, h Host, services []contract.Service, node *corev1.Node, opts Options) (map[string]map[string]string, error) {
	opts = opts.withDefaults()
	all := map[string]map[string]string{}
	for _, s := range services {
		out := map[string]string{}
		for _, p := range s.PowershellPreScripts {
			if p.VariableName == "" || node == nil && len(p.NodeArgs) > 0 {
				continue
			}
			cmd, err := oneCommand(s, p, node)
			if err != nil {
				return nil, err
			}
			val, err := run(ctx, h, cmd, true, opts)
			if err != nil {
				return nil, fmt.Errorf("service %s: %w", s.Name, err)
			}
			out[p.VariableName] = val
		}
		all[s.Name] = out
	}
	return all, nil
}

// Effects runs svc's pre-scripts that fill no variable, in order: those run for their effect on the host
// (containerd's Defender exclusion, kube-proxy's network configuration). WMCO's node daemon runs them before
// it (re)configures the service; each is idempotent.
func Effects(ctx context.Context, h Host, svc contract.Service, node *corev1.Node, opts Options) error {
	opts = opts.withDefaults()
	for _, p := range svc.PowershellPreScripts {
		if p.VariableName != "" {
			continue
		}
		cmd, err := oneCommand(svc, p, node)
		if err != nil {
			return err
		}
		if _, err := run(ctx, h, cmd, false, opts); err != nil {
			return fmt.Errorf("service %s: %w", svc.Name, err)
		}
	}
	return nil
}

// EffectsNeedNode says whether svc's effect pre-scripts read node values (they can run only once the Node
// exists and has them).
func EffectsNeedNode(svc contract.Service) bool {
	for _, p := range svc.PowershellPreScripts {
		if p.VariableName == "" && len(p.NodeArgs) > 0 {
			return true
		}
	}
	return false
}

// EffectCommands are svc's effect pre-scripts with node's values filled in: an error names a node value
// the Node does not have (yet), such as its hybrid overlay subnet.
func EffectCommands(svc contract.Service, node *corev1.Node) ([]string, error) {
	var out []string
	for _, p := range svc.PowershellPreScripts {
		if p.VariableName != "" {
			continue
		}
		cmd, err := oneCommand(svc, p, node)
		if err != nil {
			return nil, err
		}
		out = append(out, cmd)
	}
	return out, nil
}

// oneCommand is one of svc's pre-scripts with node's values filled in.
func oneCommand(svc contract.Service, p contract.PreScript, node *corev1.Node) (string, error) {
	one := svc
	one.PowershellPreScripts = []contract.PreScript{p}
	cmds, err := contract.PreScriptCommands(one, node)
	if err != nil {
		return "", err
	}
	return cmds[0], nil
}

// NodeName is the name the host's kubelet registers its Node under: the output of the kubelet's
// HOSTNAME_OVERRIDE pre-script where the contract has one (AWS: the instance metadata's local-hostname),
// otherwise the host's own name; lower case, as the kubelet lowers it.
func NodeName(ctx context.Context, h Host, data contract.Data, opts Options) (string, error) {
	if kubelet, ok := data.Service("kubelet"); ok {
		for _, p := range kubelet.PowershellPreScripts {
			if p.VariableName != nodeconfig.HostnameOverrideVar {
				continue
			}
			name, err := run(ctx, h, p.Path, true, opts.withDefaults())
			if err != nil {
				return "", fmt.Errorf("the node's name: %w", err)
			}
			return strings.ToLower(name), nil
		}
	}
	name, err := h.Hostname(ctx)
	if err != nil {
		return "", err
	}
	return strings.ToLower(strings.TrimSpace(name)), nil
}

// run runs one pre-script command: one of WMCO's own scripts as wmcon's step, any other as written. A script
// that fills a variable must print something.
func run(ctx context.Context, h Host, cmd string, value bool, opts Options) (string, error) {
	script, args := splitCommand(cmd)
	var out string
	var err error
	switch {
	case strings.EqualFold(script, nodeconfig.NetworkConfScriptPath):
		_, err = ConfigureNetwork(ctx, h, networkArgs(args), opts)
	case strings.EqualFold(script, nodeconfig.DefenderScriptPath):
		err = ExcludeFromDefender(ctx, h, args["binpath"])
	case strings.EqualFold(script, nodeconfig.GCPHostnameScriptPath):
		out, err = GCPHostname(ctx, h)
	case cmd == nodeconfig.HostnameScript("VSphere"):
		// wmcon's own vSphere script, run as WMCO reads the name: ipconfig /all's host name and DNS suffix.
		out, err = h.FullyQualifiedHostname(ctx)
	case value:
		out, err = h.PreScriptValue(ctx, cmd)
	default:
		out, err = h.RunPreScript(ctx, cmd)
	}
	if err != nil {
		return "", err
	}
	if value && strings.TrimSpace(out) == "" {
		return "", fmt.Errorf("pre-script %q printed nothing", cmd)
	}
	return strings.TrimSpace(out), nil
}

// splitCommand reads a script invocation: its path and its -Name value arguments (names lower case). The
// contract's arguments are node values and paths without spaces; a quoted one loses its quotes.
func splitCommand(cmd string) (string, map[string]string) {
	words := strings.Fields(cmd)
	if len(words) == 0 {
		return "", nil
	}
	args := map[string]string{}
	for i := 1; i < len(words); i++ {
		if !strings.HasPrefix(words[i], "-") {
			continue
		}
		name := strings.ToLower(strings.TrimPrefix(words[i], "-"))
		if i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			args[name] = strings.Trim(words[i+1], `'"`)
			i++
		} else {
			args[name] = ""
		}
	}
	return words[0], args
}

func networkArgs(a map[string]string) NetworkArgs {
	return NetworkArgs{NodeName: a["hostnameoverride"], ClusterCIDR: a["clustercidr"], Kubeconfig: a["kubeconfigpath"],
		KubeProxyConfigPath: a["kubeproxyconfigpath"], Verbosity: a["verbosity"]}
}

// ExcludeFromDefender is WMCO's windows-defender-exclusion.ps1: when Windows Defender runs, it stops scanning
// what the process opens (containerd's image layers); otherwise nothing happens.
func ExcludeFromDefender(ctx context.Context, h Host, process string) error {
	if process == "" {
		return errors.New("the Defender exclusion needs the program's path (-BinPath)")
	}
	running, err := h.DefenderRunning(ctx)
	if err != nil || !running {
		return err
	}
	return h.AddDefenderExclusion(ctx, process)
}

// GCPHostname is WMCO's gcp-get-hostname.ps1: the instance's host name from GCP's metadata server, shortened
// as GCP's own tools shorten a name over 63 characters (the part before the first dot when that is 1 to 63
// characters long, else the first 63 characters).
func GCPHostname(ctx context.Context, h Host) (string, error) {
	name, err := h.GCPInstanceHostname(ctx)
	if err != nil {
		return "", err
	}
	return shortHostname(name), nil
}

func shortHostname(name string) string {
	if len(name) <= 63 {
		return name
	}
	if first, _, _ := strings.Cut(name, "."); len(first) >= 1 && len(first) <= 63 {
		return first
	}
	return name[:63]
}

// PrepareHost is the host as the configuration engine takes it (nodeconfig.Host), from what the host itself
// says, as WMCO's node daemon reads it: the node name (node's, when the Node exists; else the kubelet's
// HOSTNAME_OVERRIDE pre-script's output where the contract has one, else the host's own name) and the
// outputs of the pre-scripts that fill a variable. ip is the address wmcon reaches the host by.
func PrepareHost(ctx context.Context, h Host, data contract.Data, node *corev1.Node, ip string, byoh bool, opts Options) (nodeconfig.Host, error) {
	host := nodeconfig.Host{IP: ip, BYOH: byoh}
	if node != nil {
		host.NodeName = node.Name
	} else {
		name, err := NodeName(ctx, h, data, opts)
		if err != nil {
			return host, err
		}
		host.NodeName = name
	}
	if node == nil {
		// Node variables of value pre-scripts take the Node as it will register: its name.
		node = &corev1.Node{}
		node.Name = host.NodeName
	}
	out, err := Values(ctx, h, data.Services, node, opts)
	if err != nil {
		return host, err
	}
	host.PreScriptOutputs = out
	return host, nil
}

// nodePoll is how often EffectsOnceNodeHas reads the Node while it lacks a value a pre-script needs.
var nodePoll = time.Second

// EffectsOnceNodeHas runs svc's effect pre-scripts (Effects) once the Node has every value they need, read
// with node each poll: kube-proxy's network step needs the node's hybrid overlay subnet, which OVN-Kubernetes
// gives a Windows node some time after it registers. It waits until ctx ends; the error then names what the
// Node still lacked.
func EffectsOnceNodeHas(ctx context.Context, h Host, svc contract.Service, node func(context.Context) (*corev1.Node, error), opts Options) error {
	if !EffectsNeedNode(svc) {
		return Effects(ctx, h, svc, nil, opts)
	}
	for {
		n, err := node(ctx)
		if err == nil {
			if _, err = EffectCommands(svc, n); err == nil {
				return Effects(ctx, h, svc, n, opts)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the pre-script of %s waited for its Node in vain: %w", svc.Name, err)
		case <-time.After(nodePoll):
		}
	}
}
