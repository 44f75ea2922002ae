package request

import (
	"fmt"
	"strings"
	"time"
)

// The guided first-time setup (wmcon setup and the console's wizard) is a sequence of requests the Runner
// runs like any other, each reporting Events:
//
//	SetupDetect        where the setup stands (event.SetupState), changes nothing: run it first and after each step
//	(the doctor)       Session.Doctor; blocking failures are SetupDetect's check step
//	OperatorInstall    install WMCO through OLM, following the InstallPlan and CSV (questions: Manual approval)
//	KeyInstall         cloud-private-key from a file, or a generated pair written locally (question: replacing a key)
//	MachineSetGenerate a Windows MachineSet (question: the YAML), or BYOHAdd for a host in windows-instances
//	Configure          standalone: wmcon configures a BYOH host itself (Confirm asks with the plan)
//	SetupFollow        with WMCO: follow the operator turning Machines / BYOH hosts into Ready nodes; changes nothing
//	RuntimeClassEnsure a RuntimeClass for the node's Windows build
//	SmokeTest          a small Windows pod on the new node until Running, then removed
//	SetupSummary       what the setup created, into the audit log
//
// Every request that changes something has Preview: the run then emits one event.PlanShown event (its Plan:
// summary, YAML, equivalent commands), finishes Succeeded and changes nothing; the caller shows the plan
// and runs the request again with Preview false once confirmed. Previews, SetupDetect and SetupFollow are
// not audited (their Audit says they change nothing); every other run goes through the Runner's audit
// point and, under --read-only, is refused by the read-only clients before anything changes.

// Action names of the guided setup's requests, as their Events carry them.
const (
	ActionSetupDetect   = "setup-detect"
	ActionOperator      = "operator-install"
	ActionKeyInstall    = "key-create"
	ActionRuntimeClass  = "runtimeclass"
	ActionSmokeTest     = "smoke-test"
	ActionSetupFollow   = "setup-follow"
	ActionSetupSummary  = "setup-summary"
	setupClusterTarget  = "cluster"
	defaultRuntimeClass = "windows"
)

// SetupDetect detects, from the cluster's state only, which steps of the guided setup are done, and reports
// them as one event.SetupState event (then Finished). It changes nothing.
//
// How each step is decided: check — the doctor has no failing check other than those later steps fix (WMCO,
// the key, the user data); operator — WMCO's Subscription exists and its CSV Succeeded, or standalone mode:
// Standalone is set (the user chose it), or no operator is installed and cloud-private-key carries
// wmcon/setup-mode=standalone (the key was installed after the choice) or a Windows node carries a version
// annotation wmcon wrote (wmcon-payload-…); otherwise it is not done and the wizard asks; key —
// cloud-private-key present and usable; machines — a Windows MachineSet with replicas, or a
// windows-instances entry, or (standalone) a Windows node; configure — a Windows node is Ready and every
// Windows Machine and BYOH host has a node (one not Ready is for triage, not the setup); workloads —
// a RuntimeClass selects the Ready node's Windows build and tolerates os=Windows:NoSchedule; done — all of them.
type SetupDetect struct {
	Standalone bool // the user chose standalone mode (the wizard's choice, wmcon setup --standalone)
}

func (r SetupDetect) Action() string    { return ActionSetupDetect }
func (r SetupDetect) Targets() []string { return []string{setupClusterTarget} }
func (r SetupDetect) Title() string     { return "detect the setup's progress" }
func (r SetupDetect) Audit() Audit      { return readsOnly }
func (r SetupFollow) Audit() Audit      { return readsOnly }
func (r OperatorInstall) Audit() Audit  { return unlessPreview(r.Preview) }
func (r KeyInstall) Audit() Audit       { return unlessPreview(r.Preview) }
func (r RuntimeClassEnsure) Audit() Audit {
	return unlessPreview(r.Preview)
}
func (r SmokeTest) Audit() Audit { return unlessPreview(r.Preview) }

// SetupSummary changes nothing but the audit log, where it records what the setup made.
func (r SetupSummary) Audit() Audit { return changes("") }

// unlessPreview is the Audit of a setup request: a preview changes nothing.
func unlessPreview(preview bool) Audit {
	if preview {
		return readsOnly
	}
	return changes("")
}

// OperatorInstall installs WMCO through OLM: namespace, OperatorGroup, Subscription, then (Wait) follows the
// InstallPlan and the CSV until Succeeded and the operator's Deployment available. A Manual InstallPlan is a
// Question (approve / leave). On an installed operator it changes nothing. Empty fields take the defaults
// (stable, Automatic, redhat-operators in openshift-marketplace).
type OperatorInstall struct {
	Channel         string
	Approval        string // Automatic or Manual
	Source          string // CatalogSource: redhat-operators, community-operators or another
	SourceNamespace string
	Wait            bool          // follow the install until the operator runs (the console always does)
	Timeout         time.Duration // for the wait (0 = 10m)
	Preview         bool
}

func (r OperatorInstall) Action() string    { return ActionOperator }
func (r OperatorInstall) Targets() []string { return []string{"windows-machine-config-operator"} }
func (r OperatorInstall) Title() string     { return "install WMCO through OLM" + preview(r.Preview) }

// KeyInstall creates or replaces cloud-private-key: from File (a private key file), or Generate a new pair
// of Type (ed25519 or rsa) written to Out and Out.pub (0600, never overwriting). The key is validated first
// (passphrase-protected, weak and public keys refused); replacing a different key is a Question naming its
// consequences. Key material is never in an Event: a preview names the key by type and fingerprint (a
// generated key is not generated by a preview).
type KeyInstall struct {
	File     string
	Generate bool
	Type     string // for Generate: ed25519 (default) or rsa
	Out      string // for Generate: where the private key goes (Out.pub gets the public key)
	// Standalone: the guided setup runs in standalone mode; the choice is recorded on the secret
	// (config.SetupModeAnnotation) so a setup resumed later detects it.
	Standalone bool
	Preview    bool
}

func (r KeyInstall) Action() string    { return ActionKeyInstall }
func (r KeyInstall) Targets() []string { return []string{"cloud-private-key"} }
func (r KeyInstall) Title() string {
	if r.Generate {
		return "generate an SSH key and install it" + preview(r.Preview)
	}
	return "install the SSH key " + r.File + preview(r.Preview)
}

// RuntimeClassEnsure creates, or reuses when one already fits, a RuntimeClass (node.k8s.io/v1) that sends
// pods to Windows nodes of a build: scheduling.nodeSelector kubernetes.io/os=windows and
// node.kubernetes.io/windows-build=Build, toleration os=Windows:NoSchedule. An existing RuntimeClass of that
// name that does not fit is not changed: the step fails saying how it differs.
type RuntimeClassEnsure struct {
	Name    string // "" = windows-<build with dots as dashes>, e.g. windows-10-0-20348
	Build   string // "" = the newest Ready Windows node's build
	Preview bool
}

func (r RuntimeClassEnsure) Action() string    { return ActionRuntimeClass }
func (r RuntimeClassEnsure) Targets() []string { return []string{or(r.Name, "RuntimeClass")} }
func (r RuntimeClassEnsure) Title() string {
	return "RuntimeClass " + or(r.Name, "for build "+or(r.Build, "of the Windows node")) + preview(r.Preview)
}

// SmokeTest runs a small Windows pod (Image, default the servercore image of the node's build) with the
// RuntimeClass onto Node, reports it until Running (its container statuses; its events when it is not
// scheduled or started), then deletes it. It fails when the pod is not Running within Timeout (0 = 5m),
// with the pod's events and conditions.
type SmokeTest struct {
	Node         string
	RuntimeClass string
	Namespace    string // "" = default
	Image        string
	Timeout      time.Duration
	Preview      bool
}

func (r SmokeTest) Action() string    { return ActionSmokeTest }
func (r SmokeTest) Targets() []string { return []string{r.Node} }
func (r SmokeTest) Title() string     { return "smoke test on " + r.Node + preview(r.Preview) }

// SetupFollow follows Machines (namespace/name or name) and BYOH hosts (addresses) until each is a Ready
// node: Machine phases, the node registering, its CSRs, the operator's log lines about it, node events,
// Ready. It changes nothing and ends when all are Ready (Succeeded), at Timeout (0 = 30m, Failed), or when
// cancelled. With WMCO it is what the operator does; in standalone mode wmcon configures with Configure.
type SetupFollow struct {
	Machines []string
	Hosts    []string
	// MachineSets just applied: their Machines are waited for (the machine API creates them a moment
	// later), then followed like Machines.
	MachineSets []string
	Timeout     time.Duration
}

func (r SetupFollow) Action() string { return ActionSetupFollow }
func (r SetupFollow) Targets() []string {
	out := append(append([]string(nil), r.Machines...), r.Hosts...)
	for _, ms := range r.MachineSets {
		out = append(out, "the Machines of "+ms)
	}
	return out
}
func (r SetupFollow) Title() string {
	return fmt.Sprintf("follow %s until Ready", strings.Join(r.Targets(), ", "))
}

// SetupSummary reads what the setup created and reports it (operator objects, the key secret, MachineSets,
// BYOH entries, Windows nodes, RuntimeClass) plus Files (local files the setup wrote, e.g. a generated key)
// and Node (the new node), one StepLog event a line, and records it in the audit log. It changes nothing
// else.
type SetupSummary struct {
	Node  string
	Files []string
}

func (r SetupSummary) Action() string    { return ActionSetupSummary }
func (r SetupSummary) Targets() []string { return []string{setupClusterTarget} }
func (r SetupSummary) Title() string     { return "setup summary" }

// DefaultRuntimeClassName is the name RuntimeClassEnsure gives a RuntimeClass for build ("10.0.20348" →
// "windows-10-0-20348"); "windows" when the build is unknown.
func DefaultRuntimeClassName(build string) string {
	if build == "" {
		return defaultRuntimeClass
	}
	return defaultRuntimeClass + "-" + strings.ReplaceAll(build, ".", "-")
}

func preview(on bool) string {
	if on {
		return " (preview)"
	}
	return ""
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// Previewer is a request that can show its plan before it changes anything: WithPreview is the same
// request with Preview set, which emits one event.PlanShown event, finishes and changes nothing. The
// guided setup shows every change this way first.
type Previewer interface {
	Request
	WithPreview() Request
}

func (r OperatorInstall) WithPreview() Request    { r.Preview = true; return r }
func (r KeyInstall) WithPreview() Request         { r.Preview = true; return r }
func (r RuntimeClassEnsure) WithPreview() Request { r.Preview = true; return r }
func (r SmokeTest) WithPreview() Request          { r.Preview = true; return r }
func (r MachineSetGenerate) WithPreview() Request { r.Preview = true; return r }
func (r BYOHAdd) WithPreview() Request            { r.Preview = true; return r }
func (r Configure) WithPreview() Request          { r.Preview = true; return r }
