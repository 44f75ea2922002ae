package configure

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/nodeops"
	"github.com/wmcon/wmcon/actions/operator"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/hoststep"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/remote"
)

// StepPrepare reads the cluster's facts and the payload before the host is inspected.
const StepPrepare = "prepare"

// OwnedError refuses to configure a host the Windows Machine Config Operator manages.
type OwnedError struct {
	Target string
	Owner  string // "Machine openshift-machine-api/x", "windows-instances entry win1.example.com"
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("the Windows Machine Config Operator owns %s (%s) and configures it itself: wmcon does not fight it", e.Target, e.Owner)
}

// ChangedError is a configuration that failed after it had changed the host or the cluster: the host is
// part-configured, and running the same command again resumes where it stands. Its text is the failure's.
type ChangedError struct{ Err error }

func (e *ChangedError) Error() string { return e.Err.Error() }
func (e *ChangedError) Unwrap() error { return e.Err }

// StandaloneVersion is the version a standalone node carries once configured with p.
func StandaloneVersion(p *payload.Payload) string {
	return config.StandaloneVersionPrefix + p.Version()
}

func init() {
	actions.Register(func(ctx context.Context, b actions.Backends, req request.Configure, sink event.Sink) error {
		res, err := ConfigureHost(ctx, b, req, sink)
		if err != nil && res.Changed {
			return &ChangedError{Err: err}
		}
		return err
	})
	actions.Register(runDeconfigure)
}

// ConfigureHost runs a configure request: it finds the host, refuses one the operator owns, reads the
// cluster's facts and the payload, and runs Configure, audited unless it is a dry run.
func ConfigureHost(ctx context.Context, b actions.Backends, req request.Configure, sink event.Sink) (ConfigureResult, error) {
	req.DryRun = req.DryRun || req.Preview
	target := req.Targets()[0]
	r := event.Reporter{Sink: sink, Action: ConfigureAction, Target: target}
	fail := func(err error, hint string) (ConfigureResult, error) {
		r.Failed(StepPrepare, err, hint)
		r.Finish(event.OutcomeOf(ctx), "configuration of "+target+" did not start: nothing was changed", hint)
		return ConfigureResult{}, fmt.Errorf("configure %s: %w", target, err)
	}
	cb := b.Configure
	if err := checkConfigureRequest(req, cb); err != nil {
		return fail(err, "")
	}
	r.Started(StepPrepare, "reading the cluster's facts and the payload")
	version := ""
	if cb.Version != nil {
		version = cb.Version(ctx)
	}
	ip, err := targetAddress(ctx, b, req)
	if err != nil {
		return fail(err, "check the name or address")
	}
	owner, err := cb.Cluster.WMCOOwner(ctx, ip, req.Node)
	switch {
	case err != nil:
		return fail(err, "check access to the cluster")
	case owner != "" && req.Watch:
		r.Done(StepPrepare, "the operator owns "+target+" ("+owner+"): following its progress")
		opVersion := version
		if strings.HasPrefix(opVersion, config.StandaloneVersionPrefix) {
			opVersion = ""
		}
		return ConfigureResult{}, operator.WatchOperator(ctx, cb.Cluster, operator.WatchOptions{Addr: ip, Node: req.Node, Version: opVersion}, sink)
	case owner != "":
		return fail(&OwnedError{Target: target, Owner: owner}, "follow the operator's progress instead: "+configureCommand(watching(req)))
	case req.Watch:
		return fail(fmt.Errorf("the operator does not own %s: there is no progress of its to follow", target), "configure it with wmcon: run the command without --watch")
	}
	creq := ConfigureRequest{DryRun: req.DryRun, Preview: req.Preview, Command: configureCommand(req), Confirm: req.Confirm, CSRTimeout: req.CSRTimeout, ReadyTimeout: req.ReadyTimeout}
	h, err := configureTarget(ctx, b, req, &creq)
	if err != nil {
		return fail(err, "check the name or address and SSH access to the host (wmcon triage)")
	}
	// With WMCO installed, its services ConfigMap is the contract the host follows.
	nf, err := cb.Cluster.ReadNodeFacts(ctx, cluster.NodeFactsOptions{DryRun: req.DryRun, Version: version, OperatorContract: true})
	if err != nil {
		return fail(err, "fix what is named above in the cluster")
	}
	creq.Facts, creq.BootstrapIdentity, creq.Notes = nf.Facts, nf.BootstrapIdentity, nf.Notes
	if req.Node == "" {
		if err := nameNewHost(ctx, cb.Cluster, h, &creq, r); err != nil {
			var re *renameError
			if errors.As(err, &re) {
				return ConfigureResult{}, fmt.Errorf("configure %s: %w", target, err)
			}
			return fail(err, "check SSH access to the host (wmcon triage)")
		}
	}
	if cb.Username != nil && creq.Host.BYOH {
		creq.Username = cb.Username(ctx, loginUser(h))
	}
	p, err := cb.Payload(ctx, req.PayloadDir, req.PayloadImage)
	if err != nil {
		return fail(err, "give a complete payload with --payload DIR or --payload-image REF; nothing was written to the host")
	}
	creq.Payload = p.NodeFiles()
	if strings.HasPrefix(creq.Facts.Version, config.StandaloneVersionPrefix) {
		// No operator names the version: the node carries its payload's, so an upgrade knows what it has.
		creq.Facts.Version = StandaloneVersion(p)
	}
	creq.Notes = append(creq.Notes, fmt.Sprintf("payload %s: %d files, %s, verified against its sha256sum", p.Source, len(p.Files), nodeconfig.HumanBytes(p.Bytes())))
	if cb.PubKeyHash != nil {
		creq.PubKeyHash = cb.PubKeyHash(ctx)
	}
	r.Done(StepPrepare, "host "+creq.Host.NodeName+" at "+creq.Host.IP)
	return Configure(ctx, cb.Cluster, h, creq, sink)
}

// nameNewHost gives a host without a Node its name, as WMCO does before configuring it: on vSphere and
// Nutanix a Machine's computer takes the Machine's name (renamed and restarted; a dry run only says so),
// then the Node's name is read as the kubelet's pre-scripts will give it.
func nameNewHost(ctx context.Context, c actions.NodeConfigCluster, h remote.Host, creq *ConfigureRequest, r event.Reporter) error {
	mr, err := plannedRename(ctx, c, creq)
	if err != nil {
		return err
	}
	notes := len(creq.Notes)
	if err := nameNewNode(ctx, h, creq); err != nil || mr == nil {
		return err
	}
	// A host that already joined under its computer's name keeps it: renaming it would register a second Node.
	exists, err := c.NodeExists(ctx, creq.Host.NodeName)
	switch {
	case err != nil:
		return err
	case exists:
		creq.Notes = append(creq.Notes, fmt.Sprintf("node %s exists: its computer keeps the name %s rather than take its Machine's, %s (a new name would register a second Node)",
			creq.Host.NodeName, mr.from, mr.to))
		return nil
	case creq.DryRun:
		creq.Notes = creq.Notes[:notes] // nameNewNode's note names the node after the computer's old name
		creq.Host.NodeName = predictRenamed(creq.Host.NodeName, mr)
		creq.Notes = append(creq.Notes, fmt.Sprintf("the computer %s would be renamed %s, its Machine's name, and restarted before it is configured (as WMCO does on %s): the node will be named %s",
			mr.from, mr.to, creq.Facts.Platform, creq.Host.NodeName))
		return nil
	}
	creq.Notes = creq.Notes[:notes]
	if err := renameToMachine(ctx, h, mr, creq, r); err != nil {
		return err
	}
	return nameNewNode(ctx, h, creq)
}

// nameNewNode names the Node a host without one will register, as WMCO's kubelet pre-scripts name it: the
// instance metadata's local-hostname on AWS, GCP's metadata name, else the host's own name (lower case).
func nameNewNode(ctx context.Context, h remote.Host, creq *ConfigureRequest) error {
	data, err := creq.Facts.ServicesContract()
	if err != nil {
		return err
	}
	name, err := hoststep.NodeName(ctx, h, data, hoststep.Options{ServiceNetwork: creq.Facts.ServiceNetwork})
	if err != nil {
		return err
	}
	if name != creq.Host.NodeName {
		creq.Notes = append(creq.Notes, "the node will be named "+name+" (the host calls itself "+creq.Host.NodeName+")")
		creq.HostNames = append(creq.HostNames, name)
	}
	creq.Host.NodeName = name
	return nil
}

// loginUser is the user wmcon logs in to the host as ("" when the host does not say).
func loginUser(h remote.Host) string {
	if u, ok := h.(interface{ User() string }); ok {
		return u.User()
	}
	return ""
}

func checkConfigureRequest(req request.Configure, cb *actions.ConfigureBackends) error {
	switch {
	case cb == nil:
		return errors.New("configuring hosts is not available here")
	case (req.Node == "") == (req.Address == ""):
		return errors.New("name a NODE or give --address ADDR (not both)")
	case req.Node != "" && req.User != "":
		return errors.New("--user goes with --address; a node's host is reached as its SSH settings say")
	case req.PayloadDir != "" && req.PayloadImage != "":
		return errors.New("give --payload DIR or --payload-image REF, not both")
	case cb.ReadOnly && !req.DryRun && !req.Watch:
		return errors.New("--read-only is set: refusing to configure a host (--dry-run shows the plan and changes nothing)")
	}
	return nil
}

// targetAddress is the host's IPv4 address: the node's InternalIP, or the address given.
func targetAddress(ctx context.Context, b actions.Backends, req request.Configure) (string, error) {
	if req.Node != "" {
		n, err := b.FindNode(ctx, req.Node)
		if err != nil {
			return "", err
		}
		return n.InternalIP, nil
	}
	hostPart, _, err := net.SplitHostPort(req.Address)
	if err != nil {
		hostPart = req.Address
	}
	return ipv4Of(ctx, hostPart)
}

// configureTarget finds the host: a Node's address, or an address whose Windows host name, lower case,
// becomes the node name, as the kubelet registers it.
func configureTarget(ctx context.Context, b actions.Backends, req request.Configure, creq *ConfigureRequest) (remote.Host, error) {
	if req.Node != "" {
		n, err := b.FindNode(ctx, req.Node)
		if err != nil {
			return nil, err
		}
		if !n.Windows {
			return nil, &nodeops.NotWindowsError{Node: req.Node}
		}
		if b.Hosts == nil {
			return nil, errors.New("no SSH access to Windows hosts is configured")
		}
		h, err := b.Hosts.Host(ctx, n)
		if err != nil {
			return nil, err
		}
		creq.Host = nodeconfig.Host{NodeName: n.Name, IP: n.InternalIP, BYOH: n.BYOH}
		if hn, err := h.Hostname(ctx); err == nil {
			creq.HostNames = []string{strings.TrimSpace(hn)}
		} else {
			return nil, fmt.Errorf("reach %s: %w", n.Name, err)
		}
		return h, nil
	}
	hostPart, _, err := net.SplitHostPort(req.Address)
	if err != nil {
		hostPart = req.Address
	}
	ip, err := ipv4Of(ctx, hostPart)
	if err != nil {
		return nil, err
	}
	h, err := b.Configure.HostAt(ctx, req.Address, req.User)
	if err != nil {
		return nil, err
	}
	hn, err := h.Hostname(ctx)
	if err != nil {
		return nil, fmt.Errorf("reach %s: %w", req.Address, err)
	}
	name := strings.ToLower(strings.TrimSpace(hn))
	creq.Host = nodeconfig.Host{NodeName: name, IP: ip, BYOH: true}
	creq.HostNames = []string{name}
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

// configureCommand is the headless command that configures the host of req: the way to resume it, too.
func configureCommand(req request.Configure) string {
	args := []string{"configure"}
	if req.Node != "" {
		args = append(args, req.Node)
	}
	return cmdline.Wmcon(append(args, req.Flags()...)...)
}

// watching is req following the operator instead of configuring.
func watching(req request.Configure) request.Configure {
	req.Watch = true
	return req
}

// runDeconfigure deconfigures the request's node, audited.
func runDeconfigure(ctx context.Context, b actions.Backends, req request.Deconfigure, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: DeconfigureAction, Target: req.Node}
	fail := func(err error, hint string) error {
		r.Failed(nodeops.StepCordon, err, hint)
		r.Finish(event.OutcomeOf(ctx), "deconfiguration of "+req.Node+" did not start: nothing was changed", hint)
		return fmt.Errorf("deconfigure %s: %w", req.Node, err)
	}
	cb := b.Configure
	switch {
	case cb == nil:
		return fail(errors.New("deconfiguring hosts is not available here"), "")
	case cb.ReadOnly:
		return fail(errors.New("--read-only is set: refusing to deconfigure a host"), "")
	}
	n, err := b.FindNode(ctx, req.Node)
	if err != nil {
		return fail(err, "name a Windows node")
	}
	if !n.Windows {
		return fail(&nodeops.NotWindowsError{Node: req.Node}, "name a Windows node")
	}
	if owner, err := cb.Cluster.WMCOOwner(ctx, n.InternalIP, n.Name); err != nil {
		return fail(err, "check access to the cluster")
	} else if owner != "" {
		return fail(&OwnedError{Target: req.Node, Owner: owner}, "remove the host from the operator's care first (delete its Machine, or its windows-instances entry: wmcon byoh remove)")
	}
	if b.Hosts == nil {
		return fail(errors.New("no SSH access to Windows hosts is configured"), "give wmcon an SSH key")
	}
	h, err := b.Hosts.Host(ctx, n)
	if err != nil {
		return fail(err, "check SSH access to the host ("+event.Run("triage", req.Node)+")")
	}
	return Deconfigure(ctx, cb.Cluster, h, n.Name, req.Drain, sink)
}
