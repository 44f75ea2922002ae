// Package doctor checks a cluster's prerequisites for Windows nodes (access, versions, network, platform,
// WMCO, the key), each finding with what to do.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/triage"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/registries"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// ActionDoctor names the prerequisite doctor, as its Events do.
const ActionDoctor = "doctor"

// DoctorDeps are what the doctor reads through.
type DoctorDeps struct {
	Clients cluster.Clients
	Now     func() time.Time
	// Timeout bounds the whole doctor (default 20s): a read that takes longer makes its checks unknown.
	Timeout time.Duration
}

// Doctor checks the cluster's prerequisites for Windows nodes: reachability, the user's permissions, the
// versions, the network, the platform, the proxy, mirrors, WMCO and its SSH key. Every check runs at once
// (reads they share are made once); each that is not ok says what is wrong and what to do. It reports each
// check as an Event to sink (nil: none) and returns the report, failing checks first. The error is only
// for a doctor that could not run at all; failing checks are in the report.
func Doctor(ctx context.Context, deps DoctorDeps, sink event.Sink) (diagnosis.Report, error) {
	if deps.Clients.Kube == nil || deps.Clients.Discovery == nil {
		return diagnosis.Report{}, errors.New("doctor: no cluster connection")
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Timeout <= 0 {
		deps.Timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, deps.Timeout)
	defer cancel()
	r := event.Reporter{Sink: sink, Action: ActionDoctor, Target: "cluster", Now: deps.Now}
	if sink != nil {
		r.Started("checks", fmt.Sprintf("running %d prerequisite checks", len(doctorChecks)))
	}
	f := newDoctorFacts(ctx, deps.Clients)
	checks := make([]diagnosis.Check, len(doctorChecks))
	var wg sync.WaitGroup
	for i, dc := range doctorChecks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dc.run(f)
			c.ID, c.Title, c.Rank = dc.id, dc.title, i
			checks[i] = c
		}()
	}
	wg.Wait()
	diagnosis.Sort(checks)
	rep := diagnosis.Report{Cluster: f.clusterName(), Time: deps.Now(), Checks: checks}
	if sink != nil {
		reportChecks(r, rep)
	}
	return rep, nil
}

// reportChecks emits one event per check, in the report's order, and the outcome.
func reportChecks(r event.Reporter, rep diagnosis.Report) {
	for _, c := range rep.Checks {
		switch c.Status {
		case diagnosis.CheckOK:
			r.Done(c.ID, c.Title+": "+c.Detail)
		case diagnosis.CheckFail:
			r.Emit(event.Event{Kind: event.StepFailed, Step: c.ID, Message: c.Title, Err: c.Detail, Hint: c.Fix})
		default:
			r.Emit(event.Event{Kind: event.StepLog, Step: c.ID, Message: string(c.Status) + ": " + c.Title + ": " + c.Detail, Hint: c.Fix})
		}
	}
	if rep.Healthy() {
		r.Finish(event.Succeeded, rep.Summary(), "")
		return
	}
	r.Finish(event.Failed, rep.Summary(), "fix the failing checks first; each says what to do")
}

// doctorCheck is one prerequisite: its ID and title, and how it is computed from the facts.
type doctorCheck struct {
	id, title string
	run       func(f *doctorFacts) diagnosis.Check
}

// doctorChecks are the prerequisites in the order the report lists checks of the same status.
var doctorChecks = []doctorCheck{
	{"cluster-reachable", "API server", (*doctorFacts).reachable},
	{"access-read", "Access: see the cluster", func(f *doctorFacts) diagnosis.Check { return f.access(accessGroups[0]) }},
	{"access-nodes", "Access: operate nodes", func(f *doctorFacts) diagnosis.Check { return f.access(accessGroups[1]) }},
	{"access-operator", "Access: install WMCO", func(f *doctorFacts) diagnosis.Check { return f.access(accessGroups[2]) }},
	{"access-setup", "Access: set up machines", func(f *doctorFacts) diagnosis.Check { return f.access(accessGroups[3]) }},
	{"access-csr", "Access: approve kubelet CSRs", func(f *doctorFacts) diagnosis.Check { return f.access(accessGroups[4]) }},
	{"access-node-logs", "Access: node logs via API", func(f *doctorFacts) diagnosis.Check { return f.access(accessGroups[5]) }},
	{"kubernetes-version", "Kubernetes version", (*doctorFacts).kubeVersion},
	{"windows-server", "Windows Server versions", (*doctorFacts).windowsServer},
	{"network-type", "Cluster network type", (*doctorFacts).networkType},
	{"hybrid-overlay", "Hybrid overlay networking", (*doctorFacts).hybridOverlay},
	{"network-cidrs", "Network CIDRs", (*doctorFacts).networkCIDRs},
	{"platform", "Platform", (*doctorFacts).platform},
	{"cluster-proxy", "Cluster-wide proxy", (*doctorFacts).proxy},
	{"mirrors", "Disconnected: mirrors", (*doctorFacts).mirrors},
	{"wmco", "WMCO", (*doctorFacts).wmco},
	{"private-key", "SSH key (" + config.PrivateKeySecret + ")", (*doctorFacts).privateKey},
	{"user-data", "User data (" + config.UserDataSecret + ")", (*doctorFacts).userData},
	{"byoh-entries", "BYOH entries (" + config.BYOHConfigMap + ")", (*doctorFacts).byohEntries},
}

// doctorFacts are the doctor's reads, each made once however many checks need it.
type doctorFacts struct {
	c        cluster.Clients
	version  func() (*version.Info, error)
	groups   func() (map[string]bool, error)
	infra    func() (*configv1.Infrastructure, error)
	cv       func() (*configv1.ClusterVersion, error)
	network  func() (triage.NetworkConfig, error)
	proxyCfg func() (model.Proxy, error)
	mirrorIn func() (registries.Input, error)
	operator func() (cluster.OperatorState, error)
	key      func() (keyRead, error)
	userKey  func() (keyRead, error)
	reviews  func() map[cluster.Permission]cluster.Access
	// windowsNodes says whether the cluster has a Windows node; one it cannot list counts as having one
	// (the stricter reading).
	windowsNodes func() bool
	byoh         func() (map[string]string, error)
}

// keyRead is a key secret's description: nil Info when the secret is missing.
type keyRead struct {
	Info    *sshkey.Info
	Problem string
	Script  []byte // windows-user-data only: the script itself
}

func newDoctorFacts(ctx context.Context, c cluster.Clients) *doctorFacts {
	keys := cluster.NewKeys(c)
	return &doctorFacts{
		c:       c,
		version: sync.OnceValues(func() (*version.Info, error) { return c.Discovery.ServerVersion() }),
		groups:  sync.OnceValues(func() (map[string]bool, error) { return cluster.APIGroups(c.Discovery) }),
		infra: sync.OnceValues(func() (*configv1.Infrastructure, error) {
			return c.Config.ConfigV1().Infrastructures().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
		}),
		cv: sync.OnceValues(func() (*configv1.ClusterVersion, error) {
			return c.Config.ConfigV1().ClusterVersions().Get(ctx, config.ClusterVersionName, metav1.GetOptions{})
		}),
		network:  sync.OnceValues(func() (triage.NetworkConfig, error) { return triage.ClusterReads{Clients: c}.NetworkConfig(ctx) }),
		proxyCfg: sync.OnceValues(func() (model.Proxy, error) { return cluster.ClusterProxy(ctx, c) }),
		mirrorIn: sync.OnceValues(func() (registries.Input, error) { return mirrorSets(ctx, c) }),
		operator: sync.OnceValues(func() (cluster.OperatorState, error) { return cluster.NewOLM(c).State(ctx) }),
		key: sync.OnceValues(func() (keyRead, error) {
			info, problem, err := keys.PrivateKey(ctx)
			return keyRead{Info: info, Problem: problem}, err
		}),
		userKey: sync.OnceValues(func() (keyRead, error) {
			script, found, err := keys.UserDataScript(ctx)
			if err != nil || !found {
				return keyRead{}, err
			}
			info, problem := cluster.DescribeUserDataKey(script)
			return keyRead{info, problem, script}, nil
		}),
		windowsNodes: sync.OnceValue(func() bool {
			l, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: config.OSLabel + "=windows", Limit: 1})
			return err != nil || len(l.Items) > 0
		}),
		byoh: sync.OnceValues(func() (map[string]string, error) { return cluster.NewBYOHConfigMap(c).Read(ctx) }),
		reviews: sync.OnceValue(func() map[cluster.Permission]cluster.Access {
			out := map[cluster.Permission]cluster.Access{}
			for _, a := range cluster.ReviewAccess(ctx, c.Kube, allPermissions()) {
				out[a.Permission] = a
			}
			return out
		}),
	}
}

// mirrorSets lists the mirror sets without the pull secret: the doctor only needs where images come from.
func mirrorSets(ctx context.Context, c cluster.Clients) (registries.Input, error) {
	var in registries.Input
	idms, err := c.Config.ConfigV1().ImageDigestMirrorSets().List(ctx, metav1.ListOptions{})
	if err != nil {
		return in, err
	}
	itms, err := c.Config.ConfigV1().ImageTagMirrorSets().List(ctx, metav1.ListOptions{})
	if err != nil {
		return in, err
	}
	in.DigestMirrorSets, in.TagMirrorSets = idms.Items, itms.Items
	return in, nil
}

// clusterName names the cluster in the report: its infrastructure name, else the API server's address.
func (f *doctorFacts) clusterName() string {
	if i, err := f.infra(); err == nil && i.Status.InfrastructureName != "" {
		return i.Status.InfrastructureName
	}
	if f.c.REST != nil {
		return model.RedactURL(f.c.REST.Host)
	}
	return "cluster"
}

// openShift tells whether the cluster serves OpenShift's config API; the second result is a check that
// could not be made (or that this is plain Kubernetes), to return as is.
func (f *doctorFacts) openShift(c diagnosis.Check) (diagnosis.Check, bool) {
	if u, down := f.down(c); down {
		return u, false
	}
	groups, err := f.groups()
	switch {
	case err != nil:
		c.Status, c.Detail = diagnosis.CheckUnknown, "cannot tell whether this is OpenShift: "+err.Error()
		c.Fix = "check the connection to the API server and run the doctor again"
		return c, false
	case !groups["config.openshift.io/v1"]:
		c.Status, c.Detail = diagnosis.CheckUnknown, "not an OpenShift cluster (no config.openshift.io API): this check applies to OpenShift/OKD only"
		c.Fix = "nothing to do on plain Kubernetes: add Windows hosts with wmcon configure --address"
		return c, false
	}
	return c, true
}

// down fills c when the API server did not answer at all.
func (f *doctorFacts) down(c diagnosis.Check) (diagnosis.Check, bool) {
	if _, err := f.version(); err != nil {
		c.Status, c.Detail = diagnosis.CheckUnknown, "not checked: the API server did not answer"
		c.Fix = "fix the connection first (see the API server check)"
		return c, true
	}
	return c, false
}

// cannotCheck fills c for a read that failed: a refusal is its own finding ("you may not get …"), anything
// else says the check could not be made.
func cannotCheck(c diagnosis.Check, what, access string, err error) diagnosis.Check {
	c.Status = diagnosis.CheckUnknown
	if apierrors.IsForbidden(err) {
		c.Detail = "cannot check " + what + ": you may not " + access
		c.Fix = "ask a cluster administrator for " + access + ", or run the doctor as a user who has it"
		return c
	}
	c.Detail = "cannot check " + what + ": " + err.Error()
	c.Fix = "check the connection to the API server and run the doctor again"
	return c
}
