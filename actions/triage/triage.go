// Package triage explains why a Windows node is unhappy: checks of the node, its host and the known
// Windows limitations, ranked from the likeliest cause, each with what to do.
package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

// TriageCluster is what triage reads from the cluster besides the snapshot.
type TriageCluster interface {
	NodeEvents(ctx context.Context, node, machine string, limit int) ([]cluster.EventInfo, error)
	NetworkConfig(ctx context.Context) (NetworkConfig, error)
	// ServicesContract is the contract the node's host is held to (ClusterReads.ServicesContract).
	ServicesContract(ctx context.Context, node string) (ServicesContract, error)
}

// NetworkConfig is the part of the cluster's network configuration Windows nodes depend on.
type NetworkConfig struct {
	Type                  string   // network.config.openshift.io spec.networkType
	ClusterNetworks       []string // spec.clusterNetwork CIDRs
	ServiceNetworks       []string // spec.serviceNetwork CIDRs
	OperatorFound         bool     // network.operator.openshift.io/cluster exists
	HybridOverlay         bool     // its ovnKubernetesConfig.hybridOverlayConfig is set
	HybridClusterNetworks []string // hybridClusterNetwork CIDRs
	VXLANPort             uint32   // hybridOverlayVXLANPort; 0 = the default 4789
}

// TriageDeps is what Triage reads through. Snapshot is required; without Cluster the events and
// network checks say unknown, without Hosts every host check does.
type TriageDeps struct {
	Snapshot func(ctx context.Context) (*model.Snapshot, error)
	Cluster  TriageCluster
	Hosts    actions.HostResolver
	// Metrics reads the node's CPU, memory and disk figures; nil makes those checks unknown.
	Metrics TriageMetrics
	Now     func() time.Time
	// Pods reads the figures of the node's pods; nil leaves out the check of the pods behind the node's
	// memory or CPU trouble.
	Pods TriagePods
	// HostTimeout bounds everything done on the host (default 30s); ClusterTimeout the extra API reads
	// (default 15s). A slow part says unknown instead of holding up the report.
	HostTimeout    time.Duration
	ClusterTimeout time.Duration
	LogLines       int // kubelet log lines searched for errors (default 200)
	EventLimit     int // recent events shown (default cluster.DefaultEventLimit)
}

func (d *TriageDeps) applyDefaults() {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.HostTimeout <= 0 {
		d.HostTimeout = 30 * time.Second
	}
	if d.ClusterTimeout <= 0 {
		d.ClusterTimeout = 15 * time.Second
	}
	if d.LogLines <= 0 {
		d.LogLines = 200
	}
	if d.EventLimit <= 0 {
		d.EventLimit = cluster.DefaultEventLimit
	}
}

// Triage answers "why is this Windows node unhappy": it checks the node in the cluster, its host over
// SSH (services, kubelet errors, metadata route) and the known Windows limitations, and orders the
// checks by severity, then by how likely each is to be the cause. It degrades: an unreachable host
// makes the host checks unknown while the cluster checks still run. It fails only when the node
// cannot be found.
func Triage(ctx context.Context, nodeName string, deps TriageDeps) (diagnosis.Report, error) {
	deps.applyDefaults()
	if deps.Snapshot == nil {
		return diagnosis.Report{}, errors.New("triage: no cluster snapshot source configured")
	}
	snap, err := deps.Snapshot(ctx)
	if err != nil {
		return diagnosis.Report{}, fmt.Errorf("triage %s: read the cluster: %w", nodeName, err)
	}
	node, err := windowsNodeIn(snap, nodeName)
	if err != nil {
		return diagnosis.Report{}, err
	}
	var host hostFacts
	var extra clusterFacts
	var mf metricsFacts
	var cf contractFacts
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		// The contract says what to read on the host (the services' configuration, the listed files).
		cf = readContract(ctx, deps, node.Name)
		host = probeHost(ctx, deps, node, snap.Cluster.Platform, cf)
	}()
	go func() { defer wg.Done(); extra = readClusterFacts(ctx, deps, node) }()
	go func() { defer wg.Done(); mf = readMetricsFacts(ctx, deps, node.Name) }()
	wg.Wait()

	in := triageInput{node: node, snap: snap, host: host, extra: extra, metrics: mf, contract: cf, now: deps.Now(), logLines: deps.LogLines}
	checks := in.checks()
	diagnosis.Sort(checks)
	return diagnosis.Report{Node: node.Name, Time: in.now, Checks: checks}, nil
}

func windowsNodeIn(snap *model.Snapshot, name string) (model.NodeInfo, error) {
	if name == "" {
		return model.NodeInfo{}, errors.New("triage: no node name given: pass a Windows node's name (oc get nodes -l kubernetes.io/os=windows)")
	}
	node, ok := snap.Node(name)
	if !ok {
		return model.NodeInfo{}, fmt.Errorf("node %s not found in the cluster: check the name with 'oc get nodes -l kubernetes.io/os=windows'", name)
	}
	if !node.Windows {
		return model.NodeInfo{}, fmt.Errorf("node %s is not a Windows node: triage only covers Windows nodes (label kubernetes.io/os=windows)", name)
	}
	return node, nil
}

// hostFacts is everything read from the host in one visit.
type hostFacts struct {
	configured  bool  // a HostResolver was given
	reachErr    error // the host could not be reached: every host check is unknown
	states      map[string]remote.ServiceState
	statesErr   error
	kubeletLog  []string
	logErr      error
	routeKnown  bool // the metadata route was checked (AWS)
	routeExists bool
	routeErr    error
	// With WMCO's contract: the installed contract services' configuration and the listed files' hashes.
	configs    map[string]remote.ServiceConfig
	configsErr error
	hashes     map[string]string
	hashesErr  error
}

// triageHost is what triage reads on a host: the services' states, the end of the kubelet log, the
// metadata route. It changes nothing.
type triageHost interface {
	ServiceStates(ctx context.Context, names ...string) (map[string]remote.ServiceState, error)
	ServiceConfigs(ctx context.Context, names ...string) (map[string]remote.ServiceConfig, error)
	FileHashes(ctx context.Context, paths []string) (map[string]string, error)
	remote.Logs
	HasMetadataRoute(ctx context.Context) (bool, error)
}

// probeHost reads the services' states (one round trip, which also proves the host answers), the end
// of the kubelet log and, on AWS, the metadata route.
func probeHost(ctx context.Context, deps TriageDeps, node model.NodeInfo, platform string, cf contractFacts) hostFacts {
	f := hostFacts{configured: deps.Hosts != nil}
	if deps.Hosts == nil {
		return f
	}
	ctx, cancel := context.WithTimeout(ctx, deps.HostTimeout)
	defer cancel()
	h, err := deps.Hosts.Host(ctx, node)
	if err != nil {
		f.reachErr = err
		return f
	}
	return readHostFacts(ctx, h, deps.LogLines, platform, cf, f)
}

// readHostFacts reads one host's facts into f: with the operator's contract (cf), also the configuration of
// the contract's services and the hashes of the files it lists.
func readHostFacts(ctx context.Context, h triageHost, logLines int, platform string, cf contractFacts, f hostFacts) hostFacts {
	names := serviceNames(platform)
	if cf.held() {
		for _, s := range cf.sc.Data.Services {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	f.states, f.statesErr = h.ServiceStates(ctx, names...)
	if f.statesErr != nil && !answered(f.statesErr) {
		f.reachErr, f.statesErr = f.statesErr, nil
		return f
	}
	if cf.held() {
		if installed := contractServices(cf.sc.Data, f.states); len(installed) > 0 {
			f.configs, f.configsErr = h.ServiceConfigs(ctx, installed...)
		}
		if len(cf.sc.Data.Files) > 0 {
			f.hashes, f.hashesErr = h.FileHashes(ctx, contractFilePaths(cf.sc.Data))
		}
	}
	f.kubeletLog, f.logErr = tailKubeletLog(ctx, h, logLines)
	if strings.EqualFold(platform, "AWS") {
		f.routeKnown = true
		f.routeExists, f.routeErr = h.HasMetadataRoute(ctx)
	}
	return f
}

// answered tells a command the host ran and failed from a host that could not be asked.
func answered(err error) bool {
	var cmdErr *remote.CommandError
	return errors.As(err, &cmdErr)
}

func tailKubeletLog(ctx context.Context, h remote.Logs, n int) ([]string, error) {
	svc, _ := config.ServiceByName("kubelet")
	return h.TailOnce(ctx, svc.LogFile, n)
}

// serviceNames are the services WMCO installs on this platform, in start order.
func serviceNames(platform string) []string {
	var out []string
	for _, s := range platformServices(platform) {
		out = append(out, s.Name)
	}
	return out
}

func platformServices(platform string) []config.WindowsService {
	var out []config.WindowsService
	for _, s := range config.Services {
		if s.Platform == "" || strings.EqualFold(s.Platform, platform) {
			out = append(out, s)
		}
	}
	return out
}

// clusterFacts are the API reads beyond the snapshot.
type clusterFacts struct {
	configured bool
	events     []cluster.EventInfo
	eventsErr  error
	network    NetworkConfig
	networkErr error
}

func readClusterFacts(ctx context.Context, deps TriageDeps, node model.NodeInfo) clusterFacts {
	f := clusterFacts{configured: deps.Cluster != nil}
	if deps.Cluster == nil {
		return f
	}
	ctx, cancel := context.WithTimeout(ctx, deps.ClusterTimeout)
	defer cancel()
	f.events, f.eventsErr = deps.Cluster.NodeEvents(ctx, node.Name, node.Machine, deps.EventLimit)
	f.network, f.networkErr = deps.Cluster.NetworkConfig(ctx)
	return f
}
