// Package steps defines the guided setup's steps once: their order, their titles, what the detection
// checks to call each one done, and the requests that take each one given where the setup stands and what
// the user answered. wmcon setup (package setup's Run) and the console's wizard both drive them, and the
// detection (package setup) reports each step under its title here. Like the rest of the actions'
// vocabulary it imports neither client-go nor SSH nor Bubble Tea, so the console can import it.
package steps

import (
	"time"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/config"
)

// Step is one step of the guided setup.
type Step struct {
	ID    event.SetupStepID
	Title string // as the detection reports it and the wizard lists it (configure's depends on the mode: TitleIn)
	Done  string // what the detection checks to call it done
	Takes string // what taking it runs
}

// All are the steps, in the order the setup takes them.
var All = []Step{
	{ID: event.SetupCheck, Title: "Check the prerequisites",
		Done:  "the doctor has no failing check other than those later steps fix (WMCO, the key, the user data)",
		Takes: "nothing: what fails is fixed in the cluster (wmcon doctor says how), then checked again"},
	{ID: event.SetupOperator, Title: "Install WMCO, or choose standalone mode",
		Done: "WMCO's Subscription exists and its CSV Succeeded; or standalone mode: chosen, recorded on " +
			config.PrivateKeySecret + ", or evident from a Windows node wmcon configured",
		Takes: "OperatorInstall (Wait), shown first; or the choice of standalone mode, which installs nothing"},
	{ID: event.SetupKey, Title: "The SSH key (" + config.PrivateKeySecret + ")",
		Done:  config.PrivateKeySecret + " is present and usable",
		Takes: "KeyInstall from a private key file, or a pair generated locally (0600, never overwriting)"},
	{ID: event.SetupMachines, Title: "Windows machines: a MachineSet or BYOH hosts",
		Done:  "a Windows MachineSet with replicas, or a windows-instances entry, or (standalone) a Windows node",
		Takes: "MachineSetGenerate (not in standalone mode), or BYOHAdd for each host"},
	{ID: event.SetupConfigure, Title: "Configure the hosts (standalone) or follow the operator",
		Done:  "a Windows node is Ready and every Windows Machine and BYOH host has a node",
		Takes: "standalone: Configure for each BYOH host not yet a node; with WMCO: SetupFollow, which changes nothing"},
	{ID: event.SetupWorkloads, Title: "Workloads: a RuntimeClass for the node's Windows build",
		Done:  "a RuntimeClass selects the Ready node's Windows build and tolerates os=Windows:NoSchedule",
		Takes: "RuntimeClassEnsure; then, when asked, a SmokeTest pod on the new node"},
	{ID: event.SetupDone, Title: "Done", Done: "every step above is done", Takes: "SetupSummary, into the audit log"},
}

// IDs are the steps' IDs in order.
func IDs() []event.SetupStepID {
	out := make([]event.SetupStepID, len(All))
	for i, s := range All {
		out[i] = s.ID
	}
	return out
}

// Lookup is the step id; the zero Step when there is none.
func Lookup(id event.SetupStepID) Step {
	for _, s := range All {
		if s.ID == id {
			return s
		}
	}
	return Step{}
}

// TitleIn is the step's title once the mode is known: configuring is wmcon's in standalone mode and the
// operator's otherwise.
func (s Step) TitleIn(mode string) string {
	switch {
	case s.ID != event.SetupConfigure:
	case mode == event.ModeStandalone:
		return "Configure the hosts (wmcon configure)"
	case mode == event.ModeOperator:
		return "Follow the operator until a Windows node is Ready"
	}
	return s.Title
}

// Answers are what only the user knows: wmcon setup's flags, or the wizard's choices and forms.
type Answers struct {
	Standalone   bool                       // configure hosts with wmcon, no operator
	Operator     request.OperatorInstall    // channel, approval, source of the operator install
	KeyFile      string                     // cloud-private-key from this file; or
	GenerateKey  bool                       // generate a pair (KeyType) into KeyOut
	KeyType      string                     //
	KeyOut       string                     //
	BYOH         []request.BYOHAdd          // hosts for windows-instances
	MachineSet   request.MachineSetGenerate // with Image set: a Windows MachineSet to create
	RuntimeClass string                     // "" = windows-<build>
	SmokeTest    bool                       // run a smoke-test pod at the end

	PayloadDir, PayloadImage string        // for configuring hosts (standalone)
	CSRTimeout, ReadyTimeout time.Duration // for configuring hosts (standalone)
	FollowTimeout            time.Duration // for the operator to make nodes Ready (0 = 30m)
	SmokeTimeout             time.Duration // for the smoke-test pod to run (0 = 5m)
}

// OperatorInstall installs WMCO and follows the install until the operator runs.
func (a Answers) OperatorInstall() request.OperatorInstall {
	in := a.Operator
	in.Wait = true
	return in
}

// KeyInstall installs the key the answers name, recording standalone mode with it when the setup runs in
// it; false when they name none (neither a file nor a key to generate).
func (a Answers) KeyInstall(st event.Setup) (request.KeyInstall, bool) {
	req := request.KeyInstall{File: a.KeyFile, Generate: a.GenerateKey, Type: a.KeyType, Out: a.KeyOut,
		Standalone: st.Mode == event.ModeStandalone}
	return req, req.File != "" || req.Generate
}

// MachineSetsFit says whether a Windows MachineSet can take the machines step: the platform has them, and
// the operator (not standalone mode) makes their Machines nodes.
func MachineSetsFit(st event.Setup) bool { return st.MachineSets && st.Mode != event.ModeStandalone }

// MachineSetGenerate creates the answers' Windows MachineSet, of one Machine unless they say how many;
// false when they name no image.
func (a Answers) MachineSetGenerate() (request.MachineSetGenerate, bool) {
	ms := a.MachineSet
	return ms, ms.Image != ""
}

// ConfigureHosts are the hosts wmcon configures in standalone mode: the BYOH hosts not yet a Ready node.
func ConfigureHosts(st event.Setup) []event.SetupHost {
	var out []event.SetupHost
	for _, h := range st.Hosts {
		if h.Kind == "byoh" && !h.Ready {
			out = append(out, h)
		}
	}
	return out
}

// Configure configures one standalone host with the answers' payload and waits.
func (a Answers) Configure(h event.SetupHost) request.Configure {
	return request.Configure{Address: h.Address, User: h.User, PayloadDir: a.PayloadDir, PayloadImage: a.PayloadImage,
		CSRTimeout: a.CSRTimeout, ReadyTimeout: a.ReadyTimeout}
}

// Follow follows the operator making nodes of the Machines and BYOH hosts that have none yet (one that
// registered is for triage, not the setup, when it is not Ready); when there is none but Windows
// MachineSets were just applied, it waits for the machine API to create their Machines first.
func (a Answers) Follow(st event.Setup) request.SetupFollow {
	req := request.SetupFollow{Timeout: a.FollowTimeout}
	for _, h := range st.Hosts {
		switch {
		case h.Node != "":
		case h.Kind == "machine":
			req.Machines = append(req.Machines, h.Name)
		default:
			req.Hosts = append(req.Hosts, h.Address)
		}
	}
	if len(req.Machines)+len(req.Hosts) == 0 {
		req.MachineSets = st.MachineSetNames
	}
	return req
}

// FollowPlan is what following shows before it starts: it changes nothing.
func FollowPlan(req request.SetupFollow) event.Plan {
	return event.Plan{Title: "Follow WMCO until " + request.UntilReadyNodes(req.Targets()),
		Summary:  []string{"nothing is changed: the operator does the work; this shows its progress in the panel"},
		Commands: []string{"wmcon setup"}}
}

// RuntimeClassEnsure creates (or reuses) a RuntimeClass for the Ready node's Windows build.
func (a Answers) RuntimeClassEnsure(st event.Setup) request.RuntimeClassEnsure {
	return request.RuntimeClassEnsure{Name: a.RuntimeClass, Build: st.Build}
}

// NewNode is the Ready Windows node the setup produced, where it ends: the detection's, else a host's
// node when one is Ready, else the last Ready Windows node; "" when none is Ready.
func NewNode(st event.Setup) string {
	if st.ReadyNode != "" {
		return st.ReadyNode
	}
	for i := len(st.Hosts) - 1; i >= 0; i-- {
		if st.Hosts[i].Ready {
			return st.Hosts[i].Node
		}
	}
	for i := len(st.Nodes) - 1; i >= 0; i-- {
		if st.Nodes[i].Ready {
			return st.Nodes[i].Name
		}
	}
	return ""
}

// SmokeTestPod runs a small Windows pod with the setup's RuntimeClass on the new node.
func (a Answers) SmokeTestPod(st event.Setup) request.SmokeTest {
	return request.SmokeTest{Node: NewNode(st), RuntimeClass: st.RuntimeClass, Timeout: a.SmokeTimeout}
}

// Summary records what the setup made, with the new node and the local files it wrote (a generated key).
func Summary(st event.Setup, files []string) request.SetupSummary {
	return request.SetupSummary{Node: NewNode(st), Files: files}
}

// SummaryPlan is what the summary shows before it is written.
func SummaryPlan() event.Plan {
	return event.Plan{Title: "Setup summary", Summary: []string{"read what the setup made and record it in the audit log"},
		Commands: []string{"wmcon setup"}}
}
