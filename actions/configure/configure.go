// Package configure makes a Windows host a Ready worker node over SSH, as WMCO does, and deconfigure
// reverses it. The engine (Configure) compares what the host has with the desired state (package
// nodeconfig) and applies only the difference, so a re-run changes nothing and a run after a failure
// resumes; the configure and deconfigure requests find the host and the cluster's facts around it.
package configure

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/nodeops"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/hoststep"
	"github.com/wmcon/wmcon/remote"
)

// ConfigureAction is the action name configure events carry.
const ConfigureAction = "configure"

// The steps of a configuration, in order.
const (
	StepInspect      = "inspect"
	StepServicesDown = "stop-services" // an upgrade's: the services stop before their files change
	StepDirs         = "directories"
	StepPayload      = "payload"
	StepConfig       = "configuration"
	StepServices     = "services"
	StepClientCSR    = "client-csr"
	StepNode         = "node"
	StepServingCSR   = "serving-csr"
	StepNodeServices = "node-services"
	StepLabel        = "label"
	StepNodeReady    = "ready"
	StepVersion      = "version"
)

// ConfigureSteps lists the steps of a configuration in the order they run (cordon and uncordon frame
// them when the Node already exists). The version annotation comes last, as WMCO writes it: it says the
// node was fully configured, so it is written only once the node proved Ready.
var ConfigureSteps = []string{StepInspect, nodeops.StepCordon, StepDirs, StepPayload, StepConfig, StepServices,
	StepClientCSR, StepNode, StepServingCSR, StepNodeServices, StepLabel, StepNodeReady, nodeops.StepUncordon, StepVersion}

// ConfigureRequest is one host to configure.
type ConfigureRequest struct {
	Facts             nodeconfig.Facts
	BootstrapIdentity string // the user the kubelet's client CSR must come from
	Host              nodeconfig.Host
	HostNames         []string // other DNS names of the host (its Windows host name) allowed in the serving CSR
	Payload           []nodeconfig.PayloadFile
	PubKeyHash        string // WMCO's pub-key-hash of the SSH key wmcon logs in with ("" = not annotated)
	// Username is the BYOH node's username annotation as WMCO writes it (the user wmcon logs in as,
	// encrypted with the private key: cluster.EncryptUsername); "" = not annotated.
	Username string
	DryRun   bool     // inspect and plan only
	Preview  bool     // with DryRun: report the plan as one event.PlanShown event (the guided setup's preview)
	Command  string   // the headless command that does the same, for the preview
	Confirm  bool     // ask (Question "configure", the plan as its detail) before changing anything
	Notes    []string // where facts came from (a bootstrap token created, ...), reported first
	// KnownNode: the Node registered before and its kubelet keeps its certificates (an upgrade stopped its
	// services), so no certificate request is awaited even when the Node is not Ready now.
	KnownNode bool
	// CallerCordoned: the caller cordoned the Node for this run (an upgrade), so the run uncordons it once
	// it is Ready, before it records the version, as it does a node it cordoned itself.
	CallerCordoned bool

	CSRTimeout   time.Duration // for each of the kubelet's CSRs to appear (default 5m)
	ReadyTimeout time.Duration // for the Node to appear and to be Ready (default 10m)
}

// ConfigureResult says what a run did.
type ConfigureResult struct {
	Plan       nodeconfig.Plan
	Changed    bool // anything was written to the host or the cluster
	Uncordoned bool // the run made the node schedulable (only the version may be left to record)
}

// ConfigurableHost is what configuring asks of a host: the transport (uploads, the hostname), its files,
// services and environment, and its logs (the kubelet's, to say why a node does not join). Not reboots or
// routes: *remote.Client and the simulator's hosts have those too, but configuring never needs them.
type ConfigurableHost interface {
	remote.Transport
	remote.Files
	remote.Services
	remote.Environment
	remote.Logs
	remote.Clock
	// WMCO's host-side steps: the contract's pre-scripts, the network configuration, Defender, metadata.
	remote.PreScripts
	remote.HostNetwork
	remote.Defender
	remote.CloudMetadata
	remote.HostDNS
}

// Configure makes a Windows host a Ready worker node: it reads the host's state, diffs it against the
// desired state, applies only the difference (directories, payload, configuration files, services),
// approves this host's kubelet CSRs, labels the Node and waits for it to be Ready. Every step is
// idempotent, so a run after a failure resumes where the host stands and a run on a configured host
// changes nothing.
func Configure(ctx context.Context, c actions.ConfigureCluster, h ConfigurableHost, req ConfigureRequest, sink event.Sink) (ConfigureResult, error) {
	r := event.Reporter{Sink: sink, Action: ConfigureAction, Target: req.Host.NodeName}
	run := &configureRun{ctx: ctx, c: c, h: h, req: req, r: r, cordoned: req.CallerCordoned}
	req.applyDefaults(&run.req)
	err := run.do(ctx)
	if errors.Is(err, ErrNotConfirmed) {
		return run.result, err
	}
	if err != nil {
		what := "stopped at " + run.step
		if ctx.Err() != nil {
			err = fmt.Errorf("%w during step %s; %s", stopCause(ctx), run.step, run.leftState())
			what = "interrupted at " + run.step
		}
		r.Finish(event.OutcomeOf(ctx), "configuration of "+req.Host.NodeName+" "+what+": "+run.leftState(), run.hint())
		return run.result, fmt.Errorf("configure %s: %w", req.Host.NodeName, err)
	}
	return run.result, nil
}

func (ConfigureRequest) applyDefaults(r *ConfigureRequest) {
	if r.CSRTimeout <= 0 {
		r.CSRTimeout = 5 * time.Minute
	}
	if r.ReadyTimeout <= 0 {
		r.ReadyTimeout = 10 * time.Minute
	}
}

type configureRun struct {
	// ctx is the run's own context, kept to tell an interrupted step (a signal) from a failed one.
	ctx    context.Context
	c      actions.ConfigureCluster
	h      ConfigurableHost
	req    ConfigureRequest
	r      event.Reporter
	step   string
	result ConfigureResult

	leftovers   []string // temporary files of a transfer an earlier run had cut
	nodeExisted bool     // before this run
	nodeSeen    bool     // the Node exists: before this run, or it registered during it
	wasReady    bool
	cordoned    bool     // by this run (or by its caller for it: CallerCordoned)
	done        []string // the steps that finished
	// hostAhead is how far the host's clock is ahead of this machine's (read at the clock check; 0 when
	// it could not be read), give or take hostClockErr: the kubelet stamps its heartbeats with the host's
	// clock.
	hostAhead, hostClockErr time.Duration
	// readySince, when set, is the whole second on the host's clock from which a Ready heartbeat proves
	// the kubelet this run started: its old kubelet was not running from then on, so a Ready status
	// posted before is stale (set when the run finds the kubelet stopped, or stops it).
	readySince time.Time
}

// hint says how to resume: the command that was run (by --address when there was no Node), again.
func (run *configureRun) hint() string {
	cmd := run.req.Command
	if cmd == "" {
		cmd = cmdline.Wmcon("configure", run.req.Host.NodeName)
	}
	if run.cordoned {
		return "the node is left cordoned; run " + cmd + " again to resume from this step (it skips what is done)"
	}
	return "run " + cmd + " again to resume from this step (it skips what is done)"
}

// logHint says where to read a service's log: wmcon logs once the Node exists; before, the file on the host,
// as wmcon logs finds hosts by their Node.
func (run *configureRun) logHint(service string) string {
	name := run.req.Host.NodeName
	what, where, args := "the services' logs", `C:\var\log`, []string{"logs", name, "--via", "ssh"}
	if s, ok := config.ServiceByName(service); ok {
		what, args = "the "+service+" log", []string{"logs", name, "--service", service, "--via", "ssh"}
		if s.LogFile != "" {
			where = s.LogFile
		}
	}
	if run.nodeSeen {
		return "read " + what + " (" + cmdline.Wmcon(args...) + ")"
	}
	return "read " + what + " on the host " + run.req.Host.IP + " (" + where + "; no node " + name + " has registered yet for wmcon logs to read)"
}

// failedService is the one of names an error names: the service whose log says why ("" when it names
// none, or several).
func failedService(err error, names []string) string {
	found := ""
	for _, n := range names {
		if strings.Contains(err.Error(), n) {
			if found != "" {
				return ""
			}
			found = n
		}
	}
	return found
}

// stopCause says why ctx ended: the interrupt the command line cancels with (a signal), a deadline, or
// a plain cancellation (the console's).
func stopCause(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == context.Canceled {
		return fmt.Errorf("cancelled (%w)", cause)
	}
	return cause
}

// leftState says in what state a run that stopped left the host and the Node.
func (run *configureRun) leftState() string {
	name := run.req.Host.NodeName
	switch {
	case !run.result.Changed:
		return "nothing was changed"
	case run.cordoned:
		return "the host is partly reconfigured and node " + name + " is left cordoned"
	case run.nodeSeen:
		return "the host is partly configured; node " + name + " exists"
	case len(run.done) > 0:
		return "the host is partly configured (done: " + strings.Join(run.done, ", ") + "); no node " + name + " has registered yet"
	}
	return "the host is partly configured; no node " + name + " has registered yet"
}

// fail reports the step's failure; a step cut short by an interrupt reports the interrupt, not whatever
// its wait made of the cancellation.
func (run *configureRun) fail(step string, err error, hint string) error {
	if run.ctx.Err() != nil {
		err = stopCause(run.ctx)
	}
	run.r.Failed(step, err, hint)
	return err
}

func (run *configureRun) do(ctx context.Context) error {
	plan, err := run.inspect(ctx)
	if err != nil {
		return err
	}
	if run.req.DryRun {
		if run.req.Preview {
			var buf strings.Builder
			if err := plan.Write(&buf); err == nil {
				title := "configure " + run.r.Target
				run.r.Emit(event.Event{Kind: event.PlanShown, Step: "plan", Message: title, Plan: &event.Plan{Title: title,
					Summary: strings.Split(strings.TrimRight(buf.String(), "\n"), "\n"), Commands: []string{run.req.Command}}})
			}
		}
		run.r.Finish(event.Succeeded, "dry run: nothing was changed", "")
		return nil
	}
	if err := run.confirm(ctx, plan); err != nil {
		return err
	}
	for _, s := range []func(context.Context, nodeconfig.Plan) error{
		run.cordon, run.dirs, run.stopServices, run.payload, run.configFiles, run.bootstrapServices, run.join, run.nodeServices,
		run.label, run.ready, run.uncordon, run.version,
	} {
		if err := s(ctx, plan); err != nil {
			return err
		}
		if len(run.done) == 0 || run.done[len(run.done)-1] != run.step {
			run.done = append(run.done, run.step)
		}
	}
	msg := run.req.Host.NodeName + " is a Ready worker node"
	if !run.result.Changed {
		msg = run.req.Host.NodeName + " was already configured: nothing changed"
	}
	run.r.Finish(event.Succeeded, msg, "")
	return nil
}

func (run *configureRun) inspect(ctx context.Context) (nodeconfig.Plan, error) {
	run.step = StepInspect
	run.r.Started(StepInspect, "reading the host's directories, files and services")
	for _, n := range run.req.Notes {
		run.r.Log(StepInspect, n)
	}
	if err := run.preScriptValues(ctx); err != nil {
		return nodeconfig.Plan{}, run.fail(StepInspect, err, "check SSH access to the host (wmcon triage)")
	}
	want, err := nodeconfig.Desired(run.req.Facts, run.req.Host, run.req.Payload)
	if err != nil {
		return nodeconfig.Plan{}, run.fail(StepInspect, err, "fix the cluster facts or the payload named above")
	}
	if err := run.checkClock(ctx); err != nil {
		return nodeconfig.Plan{}, err
	}
	got, err := ObserveHost(ctx, run.h, want)
	if err != nil {
		return nodeconfig.Plan{}, run.fail(StepInspect, err, "check SSH access to the host (wmcon triage)")
	}
	plan := nodeconfig.Diff(want, got)
	run.result.Plan = plan
	if slices.Contains(plan.Start, kubeletService) {
		run.kubeletDown() // not running now: whatever Ready status the Node shows was posted before
	}
	if run.leftovers, err = run.h.UploadLeftovers(ctx, fileDirs(want)); err != nil {
		return plan, run.fail(StepInspect, err, "check SSH access to the host (wmcon triage)")
	}
	if len(run.leftovers) > 0 {
		run.r.Log(StepInspect, fmt.Sprintf("%d temporary files of an interrupted transfer to remove: %s", len(run.leftovers), strings.Join(run.leftovers, ", ")))
	}
	if run.nodeExisted, err = run.c.NodeExists(ctx, run.req.Host.NodeName); err != nil {
		return plan, run.fail(StepInspect, err, "check access to the cluster")
	}
	run.nodeSeen = run.nodeExisted
	if run.nodeExisted {
		n, err := run.c.Node(ctx, run.req.Host.NodeName)
		if err == nil {
			run.wasReady = n.Status == model.NodeReady
		}
		if o, err := run.c.NodeObject(ctx, run.req.Host.NodeName); err == nil && o.Spec.Unschedulable && o.Annotations[config.CordonedByAnnotation] == cordonedByConfigure {
			run.cordoned = true
			run.r.Log(StepInspect, "cordoned by a configuration that stopped: uncordoned once Ready")
		}
	}
	run.r.Done(StepInspect, planSummary(plan))
	return plan, nil
}

// errNotConfirmed ends a run the user did not confirm; nothing was changed.
var ErrNotConfirmed = errors.New("not confirmed: nothing was changed")

// confirm shows the plan and asks before anything is written, when the request asks for it (the console).
func (run *configureRun) confirm(ctx context.Context, plan nodeconfig.Plan) error {
	if !run.req.Confirm {
		return nil
	}
	var text strings.Builder
	_ = plan.Write(&text)
	q := event.Question{Title: "Configure " + run.req.Host.NodeName + " (" + run.req.Host.IP + ")?",
		Detail:  strings.Split(strings.TrimRight(text.String(), "\n"), "\n"),
		Choices: []event.Choice{{Key: event.ChoiceCancel, Label: "Cancel (change nothing)"}, {Key: event.ChoiceApply, Label: "Apply the plan"}}}
	answer, err := run.r.Ask(ctx, q)
	if err != nil {
		return err
	}
	if answer != event.ChoiceApply {
		run.r.Finish(event.Cancelled, "not configured: nothing was changed", "")
		return ErrNotConfirmed
	}
	return nil
}

// fileDirs are the directories the desired files go to, where an interrupted upload leaves its temporary file.
func fileDirs(want nodeconfig.State) []string {
	var dirs []string
	for _, f := range want.Files {
		if i := strings.LastIndex(f.Path, `\`); i > 0 && !slices.Contains(dirs, f.Path[:i]) {
			dirs = append(dirs, f.Path[:i])
		}
	}
	return dirs
}

func planSummary(p nodeconfig.Plan) string {
	if p.Empty() {
		return fmt.Sprintf("host configured: %d directories, %d files and %d services match", p.UpToDate.Dirs, p.UpToDate.Files, p.UpToDate.Services)
	}
	return fmt.Sprintf("%d directories to create, %d payload files (%s) and %d configuration files to write, %d services to create, %d to start",
		len(p.MakeDirs), len(p.Payload), nodeconfig.HumanBytes(p.PayloadBytes()), len(p.Config), len(p.Create), len(p.Start))
}

// cordon keeps pods off an existing Node while its host is reconfigured, as WMCO does.
func (run *configureRun) cordon(ctx context.Context, plan nodeconfig.Plan) error {
	if !run.nodeExisted || plan.Empty() || run.req.CallerCordoned {
		return nil
	}
	run.step = nodeops.StepCordon
	run.r.Started(nodeops.StepCordon, "cordoning the node while its host is reconfigured")
	changed, err := run.c.Cordon(ctx, run.req.Host.NodeName)
	if err != nil {
		return run.fail(nodeops.StepCordon, err, "check that you may patch nodes")
	}
	if changed {
		run.cordoned = true
		run.result.Changed = true
		// Marked as this configuration's, so a run that resumes after this one stopped lifts it.
		mark := cluster.NodeMeta{Annotations: map[string]string{config.CordonedByAnnotation: cordonedByConfigure}}
		if _, err := run.c.ApplyNodeMeta(ctx, run.req.Host.NodeName, mark); err != nil {
			return run.fail(nodeops.StepCordon, err, nodeops.UncordonHint(run.req.Host.NodeName))
		}
	}
	run.r.Done(nodeops.StepCordon, "cordoned")
	return nil
}

// cordonedByConfigure is the value of config.CordonedByAnnotation on a Node configure cordoned.
const cordonedByConfigure = "configure"

func (run *configureRun) dirs(ctx context.Context, plan nodeconfig.Plan) error {
	run.step = StepDirs
	run.r.Started(StepDirs, fmt.Sprintf("%d directories to create", len(plan.MakeDirs)))
	if len(plan.MakeDirs) == 0 {
		run.r.Done(StepDirs, fmt.Sprintf("all %d directories exist", plan.UpToDate.Dirs))
		return nil
	}
	if err := run.h.MakeDirs(ctx, plan.MakeDirs); err != nil {
		return run.fail(StepDirs, err, run.hint())
	}
	run.result.Changed = true
	run.r.Done(StepDirs, fmt.Sprintf("created %d directories", len(plan.MakeDirs)))
	return nil
}

// stopServices stops, dependents first, the services to be recreated and those whose executables the
// payload replaces: Windows refuses to replace a running program's file. The services step starts them
// again.
func (run *configureRun) stopServices(ctx context.Context, plan nodeconfig.Plan) error {
	if len(plan.Stop) == 0 {
		return nil
	}
	run.step = StepServicesDown
	run.r.Started(StepServicesDown, "stopping "+strings.Join(plan.Stop, ", ")+" so their binaries can be replaced")
	for _, s := range plan.Stop {
		if err := run.h.StopService(ctx, s); err != nil {
			return run.fail(StepServicesDown, err, run.hint())
		}
		run.result.Changed = true
		if s == kubeletService {
			run.kubeletDown()
		}
		run.r.Log(StepServicesDown, "stopped "+s)
	}
	run.r.Done(StepServicesDown, "stopped "+strings.Join(plan.Stop, ", "))
	return nil
}

// payload sends the files that differ, a few at a time over the one connection, each to a temporary name
// then renamed into place, so an interrupted transfer never leaves a truncated binary. Progress counts
// files and bytes over the whole payload; each file is logged as it lands.
func (run *configureRun) payload(ctx context.Context, plan nodeconfig.Plan) error {
	run.step = StepPayload
	total := plan.PayloadBytes()
	run.r.Started(StepPayload, fmt.Sprintf("%d files to send (%s)", len(plan.Payload), nodeconfig.HumanBytes(total)))
	if len(run.leftovers) > 0 {
		if err := run.h.RemovePaths(ctx, run.leftovers); err != nil {
			return run.fail(StepPayload, err, run.hint())
		}
		run.result.Changed = true
		run.r.Log(StepPayload, fmt.Sprintf("removed %d temporary files an interrupted transfer left", len(run.leftovers)))
	}
	if len(plan.Payload) == 0 {
		run.r.Done(StepPayload, fmt.Sprintf("%d files up to date", plan.UpToDate.Files))
		return nil
	}
	uploads := make([]remote.Upload, len(plan.Payload))
	for i, f := range plan.Payload {
		uploads[i] = remote.Upload{Remote: f.Path, Local: f.Local}
	}
	start := time.Now()
	var mu sync.Mutex
	var landed int
	var last time.Time
	_, err := run.h.Upload(ctx, uploads, remote.UploadOptions{Force: true, Parallel: payloadParallel,
		Progress: func(done, of int64) {
			mu.Lock()
			defer mu.Unlock()
			if time.Since(last) < 250*time.Millisecond && done < of {
				return
			}
			last = time.Now()
			run.r.Progress(StepPayload, landed, len(plan.Payload), fmt.Sprintf("%s/%s %s",
				nodeconfig.HumanBytes(done), nodeconfig.HumanBytes(of), rate(done, time.Since(start))))
		},
		Sent: func(path string, size int64) {
			mu.Lock() // the reporter gets one call at a time
			defer mu.Unlock()
			landed++
			run.result.Changed = true
			run.r.Log(StepPayload, fmt.Sprintf("sent %s (%s)", path, nodeconfig.HumanBytes(size)))
		}})
	if err != nil {
		return run.fail(StepPayload, err, run.hint())
	}
	run.result.Changed = true
	run.r.Done(StepPayload, fmt.Sprintf("sent %d files, %s at %s", len(plan.Payload), nodeconfig.HumanBytes(total), rate(total, time.Since(start))))
	return nil
}

// payloadParallel is how many payload files are in flight at once over the one SSH connection: enough to
// hide the round trips of small files behind the large ones.
const payloadParallel = 4

func rate(n int64, d time.Duration) string {
	if d <= 0 {
		d = time.Millisecond
	}
	return nodeconfig.HumanBytes(int64(float64(n)/d.Seconds())) + "/s"
}

// configFiles writes kubelet.conf, the bootstrap kubeconfig, the CAs, containerd's configuration and the
// registries directory in one SFTP session, then removes stale registries and sets the proxy variables.
func (run *configureRun) configFiles(ctx context.Context, plan nodeconfig.Plan) error {
	run.step = StepConfig
	run.r.Started(StepConfig, fmt.Sprintf("%d configuration files to write", len(plan.Config)))
	var ups []remote.Upload
	for _, f := range plan.Config {
		ups = append(ups, remote.Upload{Remote: f.Path, Data: f.Data})
	}
	if len(ups) > 0 {
		if _, err := run.h.Upload(ctx, ups, remote.UploadOptions{Force: true}); err != nil {
			return run.fail(StepConfig, err, run.hint())
		}
		for _, f := range plan.Config {
			run.r.Log(StepConfig, "wrote "+f.Path)
		}
	}
	if len(plan.RemoveRegistry) > 0 {
		if err := run.h.RemovePaths(ctx, plan.RemoveRegistry); err != nil {
			return run.fail(StepConfig, err, run.hint())
		}
		run.r.Log(StepConfig, "removed "+strings.Join(plan.RemoveRegistry, ", "))
	}
	if len(plan.Env) > 0 {
		vars := map[string]string{}
		for _, e := range plan.Env {
			vars[e.Name] = e.Value
		}
		if err := run.h.SetEnvs(ctx, vars); err != nil {
			return run.fail(StepConfig, err, run.hint())
		}
		run.r.Log(StepConfig, "proxy variables changed: the services see them after a reboot ("+event.Run("reboot", run.req.Host.NodeName)+")")
	}
	changed := len(ups)+len(plan.RemoveRegistry)+len(plan.Env) > 0
	run.result.Changed = run.result.Changed || changed
	if changed {
		run.r.Done(StepConfig, fmt.Sprintf("wrote %d files", len(ups)))
	} else {
		run.r.Done(StepConfig, "configuration up to date")
	}
	return nil
}

// bootstrapServices stops and deletes the services whose command line changed, then creates the missing
// ones and starts the contract's bootstrap services (containerd, the kubelet) in dependency order, batched
// (remote.EnsureServices), as WMCO starts them before the Node exists.
func (run *configureRun) bootstrapServices(ctx context.Context, plan nodeconfig.Plan) error {
	return run.services(ctx, StepServices, plan, false)
}

// nodeServices starts the contract's other services (windows_exporter, csi-proxy, hybrid-overlay-node,
// kube-proxy, cloud-node-manager) once the kubelet has joined, as WMCO's daemon does.
func (run *configureRun) nodeServices(ctx context.Context, plan nodeconfig.Plan) error {
	return run.services(ctx, StepNodeServices, plan, true)
}

func (run *configureRun) services(ctx context.Context, step string, plan nodeconfig.Plan, afterJoin bool) error {
	run.step = step
	var specs []remote.ServiceSpec
	var names []string
	for _, s := range plan.Services {
		if s.AfterJoin == afterJoin {
			specs = append(specs, remote.ServiceSpec{Name: s.Name, BinPath: s.BinPath, DependsOn: s.DependsOn, Description: s.Description, Recovery: true})
			names = append(names, s.Name)
		}
	}
	todo := 0
	for _, n := range append(namesOf(plan.Create), plan.Start...) {
		if slices.Contains(names, n) {
			todo++
		}
	}
	run.r.Started(step, "services "+strings.Join(names, ", "))
	if todo == 0 {
		run.r.Done(step, "all running as configured")
		return nil
	}
	if !afterJoin {
		for _, s := range plan.Recreate {
			if err := run.h.DeleteService(ctx, s); err != nil {
				return run.fail(step, err, run.hint())
			}
			run.r.Log(step, "deleted "+s+" to create it again (its command line changed, or it was stopped)")
		}
	}
	run.result.Changed = true
	if slices.Contains(names, kubeletService) {
		if err := run.waitReadySince(ctx); err != nil {
			return run.fail(step, err, run.hint())
		}
	}
	ensure := func(ctx context.Context) error { return run.startBatches(ctx, step, plan, afterJoin) }
	if !afterJoin {
		ensure = func(ctx context.Context) error {
			return run.whileKubeletRuns(ctx, func(ctx context.Context) error { return run.startBatches(ctx, step, plan, afterJoin) })
		}
	}
	if err := ensure(ctx); err != nil {
		err = withKubeletReason(ctx, run.h, err)
		if run.ctx.Err() != nil { // interrupted: there is no cause in a log to fix
			return run.fail(step, err, run.hint())
		}
		return run.fail(step, err, run.logHint(failedService(err, names))+", fix the cause, then "+run.hint())
	}
	run.r.Done(step, "running: "+strings.Join(names, ", "))
	return nil
}

// startBatches starts the step's services batch by batch (nodeconfig.StartBatches): a service's pre-scripts
// (containerd's Defender exclusion, kube-proxy's network configuration, which waits for the Node's hybrid
// overlay subnet) run once the services before it run, as WMCO's node daemon runs them before it configures
// the service.
func (run *configureRun) startBatches(ctx context.Context, step string, plan nodeconfig.Plan, afterJoin bool) error {
	var mine []nodeconfig.Service
	for _, s := range plan.Services {
		if s.AfterJoin == afterJoin {
			mine = append(mine, s)
		}
	}
	data, err := run.req.Facts.ServicesContract()
	if err != nil {
		return err
	}
	for _, batch := range nodeconfig.StartBatches(mine) {
		if first := batch[0]; len(first.PreScripts) > 0 {
			cs, ok := data.Service(first.Name)
			if !ok {
				return fmt.Errorf("service %s is not in the services contract", first.Name)
			}
			run.r.Log(step, "running the pre-scripts of "+first.Name)
			wctx, cancel := context.WithTimeout(ctx, run.req.ReadyTimeout)
			err := hoststep.EffectsOnceNodeHas(wctx, run.h, cs, func(ctx context.Context) (*corev1.Node, error) {
				return run.c.NodeObject(ctx, run.req.Host.NodeName)
			}, run.hostStepOptions())
			cancel()
			if err != nil {
				return err
			}
		}
		specs := make([]remote.ServiceSpec, len(batch))
		for i, s := range batch {
			specs[i] = remote.ServiceSpec{Name: s.Name, BinPath: s.BinPath, DependsOn: s.DependsOn, Description: s.Description, Recovery: true}
		}
		if err := run.h.EnsureServices(ctx, specs); err != nil {
			return err
		}
	}
	return nil
}

// hostStepOptions are what WMCO's host-side steps need from the cluster.
func (run *configureRun) hostStepOptions() hoststep.Options {
	return hoststep.Options{ServiceNetwork: run.req.Facts.ServiceNetwork}
}

// preScriptValues runs, unless the request carries them, the pre-scripts that fill the services' variables
// (they only read the host: a dry run runs them too), with the Node when it exists. A Node that exists keeps
// its name: a host name the kubelet's pre-script now gives otherwise would register a second Node.
func (run *configureRun) preScriptValues(ctx context.Context) error {
	if run.req.Host.PreScriptOutputs != nil {
		return nil
	}
	data, err := run.req.Facts.ServicesContract()
	if err != nil {
		return err
	}
	node, err := run.c.NodeObject(ctx, run.req.Host.NodeName)
	if err != nil {
		node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: run.req.Host.NodeName}}
	}
	out, err := hoststep.Values(ctx, run.h, data.Services, node, run.hostStepOptions())
	if err != nil {
		return err
	}
	if kubelet := out["kubelet"]; kubelet != nil && kubelet[nodeconfig.HostnameOverrideVar] != "" && kubelet[nodeconfig.HostnameOverrideVar] != run.req.Host.NodeName {
		run.r.Log(StepInspect, fmt.Sprintf("the host's name for its node is %s; node %s keeps its name", kubelet[nodeconfig.HostnameOverrideVar], run.req.Host.NodeName))
		kubelet[nodeconfig.HostnameOverrideVar] = run.req.Host.NodeName
	}
	run.req.Host.PreScriptOutputs = out
	return nil
}

func namesOf(ss []nodeconfig.Service) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// join approves this host's client CSR, waits for the Node, then approves its serving CSR. A Node that
// was already Ready needs neither.
func (run *configureRun) join(ctx context.Context, plan nodeconfig.Plan) error {
	name := run.req.Host.NodeName
	if run.nodeExisted && (run.wasReady || run.req.KnownNode) {
		run.step = StepNode
		run.r.Started(StepNode, "checking the node")
		run.r.Done(StepNode, "node "+name+" registered and Ready already: no certificate to approve")
		return nil
	}
	policy := cluster.CSRPolicy{NodeName: name, BootstrapIdentity: run.req.BootstrapIdentity,
		Names: append([]string{name}, lowerAll(run.req.HostNames)...), IPs: []string{run.req.Host.IP}}
	client, err := run.approve(ctx, StepClientCSR, policy, cluster.ClientCSR)
	if err != nil {
		return err
	}
	run.step = StepNode
	run.r.Started(StepNode, "waiting for node "+name+" to register")
	wctx, cancel := context.WithTimeout(ctx, run.req.ReadyTimeout)
	defer cancel()
	err = run.whileKubeletRuns(wctx, func(ctx context.Context) error {
		_, err := run.c.WaitNode(ctx, name, func(model.NodeInfo) bool { return true })
		return err
	})
	if err != nil {
		return run.fail(StepNode, withKubeletReason(ctx, run.h, err), run.logHint("kubelet")+", then "+run.hint())
	}
	run.nodeSeen = true
	run.r.Done(StepNode, "node "+name+" registered")
	policy.ServingSince = client.Created
	_, err = run.approve(ctx, StepServingCSR, policy, cluster.ServingCSR)
	return err
}

// approve waits for the kubelet's CSR of kind and approves it (cluster.CSRPolicy says which is its). For
// the client CSR it first reads, from the host, the public half of the key the kubelet generated.
func (run *configureRun) approve(ctx context.Context, step string, p cluster.CSRPolicy, kind string) (cluster.CSRRef, error) {
	run.step = step
	run.r.Started(step, "waiting for the kubelet's "+kind+" certificate request")
	cctx, cancel := context.WithTimeout(ctx, run.req.CSRTimeout)
	defer cancel()
	var ref cluster.CSRRef
	var noKey bool
	err := run.whileKubeletRuns(cctx, func(ctx context.Context) error {
		if kind == cluster.ClientCSR {
			key, err := waitKubeletKey(ctx, run.h)
			if err != nil {
				noKey = ctx.Err() != nil
				return err
			}
			p.ClientKey, p.KeyWritten = key.PublicKey, key.Written
			run.r.Log(step, "the kubelet's key is "+cluster.KeyFingerprint(key.PublicKey)+": only a client CSR signed with it is approved")
		}
		var err error
		ref, err = run.c.ApproveCSR(ctx, p, kind, func(d cluster.CSRDecision) {
			if d.Approved {
				run.result.Changed = true
				return
			}
			run.r.Log(step, fmt.Sprintf("not approving %s CSR %s: %s", d.Kind, d.Name, d.Reason))
		})
		return err
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("no %s CSR from this host's kubelet within %s", kind, run.req.CSRTimeout)
			if noKey {
				err = fmt.Errorf("this host's kubelet wrote no client key (%s or %s) within %s", nodeconfig.KubeletClientKeyTmp, nodeconfig.KubeletClientCurrent, run.req.CSRTimeout)
			}
		}
		return ref, run.fail(step, withKubeletReason(ctx, run.h, err), run.logHint("kubelet")+", then "+run.hint())
	}
	run.r.Done(step, "approved "+kind+" CSR "+ref.Name)
	return ref, nil
}

// label puts WMCO's labels and annotations on the Node, all but the version (see version).
func (run *configureRun) label(ctx context.Context, _ nodeconfig.Plan) error {
	run.step = StepLabel
	run.r.Started(StepLabel, "labelling and annotating the node")
	meta := cluster.NodeMeta{Labels: map[string]string{config.WorkerRoleLabel: ""}, Annotations: map[string]string{}}
	if run.req.Host.BYOH {
		meta.Labels[config.BYOHLabel] = "true"
	}
	if run.req.PubKeyHash != "" {
		meta.Annotations[config.PubKeyHashAnnotation] = run.req.PubKeyHash
	}
	if run.req.Host.BYOH && run.req.Username != "" && !run.hasUsername(ctx) {
		meta.Annotations[config.UsernameAnnotation] = run.req.Username
	}
	pin, err := run.c.PinnedHostKey(ctx, run.req.Host.IP)
	if err != nil {
		return run.fail(StepLabel, err, run.hint())
	}
	for k, v := range pin {
		meta.Annotations[k] = v
	}
	changed, err := run.c.ApplyNodeMeta(ctx, run.req.Host.NodeName, meta)
	if err != nil {
		return run.fail(StepLabel, err, run.hint())
	}
	run.result.Changed = run.result.Changed || changed
	if changed {
		run.r.Done(StepLabel, "labelled and annotated")
	} else {
		run.r.Done(StepLabel, "labels and annotations already set")
	}
	return nil
}

// hasUsername says whether the Node carries the username annotation already: its encryption differs each
// time (a random salt), so writing it again would change the Node on every run.
func (run *configureRun) hasUsername(ctx context.Context) bool {
	n, err := run.c.NodeObject(ctx, run.req.Host.NodeName)
	return err == nil && n.Annotations[config.UsernameAnnotation] != ""
}

// ready waits for the Node to be Ready; when this run started its kubelet, on a heartbeat that kubelet
// posted (a Node whose old kubelet was stopped still shows the Ready it last posted).
func (run *configureRun) ready(ctx context.Context, _ nodeconfig.Plan) error {
	run.step = StepNodeReady
	name := run.req.Host.NodeName
	what, done := "waiting for "+name+" to be Ready", name+" is Ready"
	if !run.readySince.IsZero() {
		what, done = "waiting for a Ready heartbeat from "+name+"'s restarted kubelet", name+" is Ready on a heartbeat of its restarted kubelet"
	}
	run.r.Started(StepNodeReady, what)
	wctx, cancel := context.WithTimeout(ctx, run.req.ReadyTimeout)
	defer cancel()
	if _, err := run.c.WaitNode(wctx, name, run.readyNow); err != nil {
		return run.fail(StepNodeReady, withKubeletReason(ctx, run.h, err), "read the node's conditions ("+event.Run("triage", name)+")")
	}
	run.r.Done(StepNodeReady, done)
	return nil
}

// readyNow says whether n is Ready, on a heartbeat posted since readySince when that is set.
func (run *configureRun) readyNow(n model.NodeInfo) bool {
	if n.Status != model.NodeReady {
		return false
	}
	if run.readySince.IsZero() {
		return true
	}
	for _, c := range n.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True" && nodeops.PostedSince(c.LastHeartbeatTime, run.readySince)
		}
	}
	return false
}

// kubeletDown records that the node's kubelet is not running from now on: a Ready heartbeat counts from
// the next whole second on the host's clock. The API server keeps heartbeats to the second, so one the
// old kubelet posted in this very second must not pass for the new kubelet's (nodeops.PostedSince).
func (run *configureRun) kubeletDown() {
	hostNow := time.Now().Add(run.hostAhead)
	run.readySince = hostNow.Truncate(time.Second).Add(time.Second)
}

// waitReadySince waits, before the kubelet starts, until the host's clock reads readySince: every
// heartbeat the new kubelet posts is then stamped at or after it, so its first one, posted as it starts,
// proves it (a real kubelet posts its status at once when it starts, then only every few minutes). It is
// at most a second, and only when the run stopped the kubelet or found it stopped within that second.
func (run *configureRun) waitReadySince(ctx context.Context) error {
	if run.readySince.IsZero() {
		return nil
	}
	wait := time.Until(run.readySince.Add(-run.hostAhead).Add(run.hostClockErr + 10*time.Millisecond))
	if wait <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
		return nil
	}
}

// version records the version the node is configured to, last, as WMCO does: the annotation says the
// node was fully configured (the upgrade plan and the drift checks read it), so it is written only once
// the node proved Ready and, when this run cordoned it, is schedulable again.
func (run *configureRun) version(ctx context.Context, _ nodeconfig.Plan) error {
	v := run.req.Facts.Version
	if v == "" {
		return nil
	}
	run.step = StepVersion
	run.r.Started(StepVersion, "recording version "+v+" on the node")
	changed, err := run.c.ApplyNodeMeta(ctx, run.req.Host.NodeName, cluster.NodeMeta{Annotations: map[string]string{config.VersionAnnotation: v}})
	if err != nil {
		return run.fail(StepVersion, err, run.hint())
	}
	run.result.Changed = run.result.Changed || changed
	if changed {
		run.r.Done(StepVersion, "annotated "+config.VersionAnnotation+"="+v)
	} else {
		run.r.Done(StepVersion, "version "+v+" recorded already")
	}
	return nil
}

// uncordon makes the node schedulable: a new node, or one this run cordoned. A node someone else
// cordoned stays cordoned.
func (run *configureRun) uncordon(ctx context.Context, _ nodeconfig.Plan) error {
	if run.nodeExisted && !run.cordoned {
		return nil
	}
	run.step = nodeops.StepUncordon
	run.r.Started(nodeops.StepUncordon, "marking the node schedulable")
	changed, err := run.c.Uncordon(ctx, run.req.Host.NodeName)
	if err != nil {
		return run.fail(nodeops.StepUncordon, err, event.Run("uncordon", run.req.Host.NodeName))
	}
	run.result.Changed = run.result.Changed || changed
	run.cordoned = false
	run.result.Uncordoned = true
	run.r.Done(nodeops.StepUncordon, "schedulable")
	return nil
}

func lowerAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}
