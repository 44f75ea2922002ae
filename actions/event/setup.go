package event

import (
	"fmt"
	"strings"
)

// The guided first-time setup (wmcon setup and the console's wizard) reports two more kinds of Event:
//
//   - Plan: a step shows what it will do before doing it. Every setup request (and MachineSetGenerate,
//     BYOHAdd, Configure with DryRun) has a preview mode that emits exactly one Event of Kind Plan, with
//     Event.Plan set, then Finished (Succeeded), and changes nothing. The console shows the plan, asks, and
//     runs the same request again without Preview on confirmation; headless wmcon setup prints it and
//     applies it only with --yes.
//   - SetupState: request.SetupDetect reports where the setup stands, detected from the cluster alone, in
//     one Event of Kind SetupState with Event.Setup set, then Finished. A wizard opened again (after a
//     crash, a quit or a day) starts at Setup.Next.
const (
	PlanShown  Kind = "plan"        // Plan is set: what the step will do; nothing was changed
	SetupState Kind = "setup-state" // Setup is set: every setup step, done or not, and why
)

// Plan is what a step will do, shown before it does it.
type Plan struct {
	Title string `json:"title"` // "Install WMCO through OLM"
	// Summary is what will happen, one sentence a line ("create namespace openshift-windows-machine-config-operator").
	Summary []string `json:"summary,omitempty"`
	// YAML holds the objects the step creates or applies, as YAML documents ("---" between them); never a
	// secret's value.
	YAML string `json:"yaml,omitempty"`
	// Commands are the headless commands that do the same (wmcon ..., or oc ... where wmcon has none).
	Commands []string `json:"commands,omitempty"`
}

// SetupStepID names a step of the guided setup; package actions/setup/steps defines them, in order.
type SetupStepID string

// The steps of the guided setup (their order, titles and requests are package actions/setup/steps').
const (
	SetupCheck     SetupStepID = "check"     // the prerequisite doctor: no blocking failure
	SetupOperator  SetupStepID = "operator"  // WMCO installed through OLM, or standalone mode chosen
	SetupKey       SetupStepID = "key"       // cloud-private-key present and usable
	SetupMachines  SetupStepID = "machines"  // a Windows MachineSet or a BYOH host exists
	SetupConfigure SetupStepID = "configure" // standalone: wmcon configured the hosts; with WMCO: followed until a Windows node is Ready
	SetupWorkloads SetupStepID = "workloads" // a RuntimeClass for the Ready node's Windows build exists
	SetupDone      SetupStepID = "done"      // everything above is done
)

// Setup modes: who configures the Windows hosts.
const (
	ModeOperator   = "operator"   // WMCO, installed through OLM, configures Machines and BYOH hosts
	ModeStandalone = "standalone" // no operator: wmcon configures each host itself (wmcon configure)
)

// Setup is where the guided setup stands, detected from the cluster's state only.
type Setup struct {
	Steps []SetupStep `json:"steps"` // one per step, in the steps' order (package actions/setup/steps)
	// Next is the first step not done (SetupDone when every one is): where a wizard (re)starts.
	Next SetupStepID `json:"next"`
	// Mode is ModeOperator (WMCO is installed or installing), ModeStandalone (asked for, or evident from a
	// Windows node wmcon configured without an operator), or "" when not decided yet: ask.
	Mode string `json:"mode,omitempty"`
	// Platform is the cluster's platform type (AWS, Azure, VSphere, GCP, Nutanix, None, BareMetal, ...;
	// "" on plain Kubernetes); MachineSets says whether Windows MachineSets can be used there (else BYOH).
	Platform    string `json:"platform,omitempty"`
	MachineSets bool   `json:"machineSets"`
	// Hosts are the Windows machines the setup knows: the Windows MachineSets' Machines and the BYOH
	// entries of windows-instances, each with the node it became.
	Hosts []SetupHost `json:"hosts,omitempty"`
	// MachineSetNames are the Windows MachineSets (machine.openshift.io/os-id: Windows in their template).
	MachineSetNames []string `json:"machineSetNames,omitempty"`
	// Nodes are the Windows nodes; Ready says which are Ready.
	Nodes []SetupNode `json:"nodes,omitempty"`
	// ReadyNode is the newest Ready Windows node ("" when none is Ready): the one the setup ends on (the
	// wizard selects it; the smoke test runs on it). Build is its Windows build, and RuntimeClass the
	// RuntimeClass found for that build ("" when none).
	ReadyNode    string `json:"readyNode,omitempty"`
	Build        string `json:"build,omitempty"`
	RuntimeClass string `json:"runtimeClass,omitempty"`
}

// Step is the state of one step; the zero value when id is unknown.
func (s Setup) Step(id SetupStepID) SetupStep {
	for _, st := range s.Steps {
		if st.ID == id {
			return st
		}
	}
	return SetupStep{}
}

// SetupStep is one step of the setup: done or not, what was found, and what stands in the way.
type SetupStep struct {
	ID    SetupStepID `json:"id"`
	Title string      `json:"title"`
	Done  bool        `json:"done"`
	// Evidence is what the cluster showed, a line each ("Subscription windows-machine-config-operator: CSV
	// windows-machine-config-operator.v11.0.1 Succeeded").
	Evidence []string `json:"evidence,omitempty"`
	// Blocking is why the step cannot be taken or finished now ("2 doctor checks fail", "the operator is
	// still installing: InstallPlan waits for approval"); "" when nothing blocks it (it may simply not be
	// done yet).
	Blocking string `json:"blocking,omitempty"`
	// Hint is what to do next, as a headless command (see Run).
	Hint string `json:"hint,omitempty"`
}

// SetupHost is a Windows machine the setup adds: a Machine of a Windows MachineSet or a BYOH host.
type SetupHost struct {
	Kind    string `json:"kind"` // "machine" or "byoh"
	Name    string `json:"name"` // the Machine's namespace/name, or the BYOH address
	User    string `json:"user,omitempty"`
	Phase   string `json:"phase,omitempty"` // a Machine's phase
	Address string `json:"address,omitempty"`
	Node    string `json:"node,omitempty"` // the node it became; "" none yet
	Ready   bool   `json:"ready,omitempty"`
}

// SetupNode is a Windows node as the setup sees it.
type SetupNode struct {
	Name    string `json:"name"`
	Ready   bool   `json:"ready"`
	Build   string `json:"build,omitempty"`
	Address string `json:"address,omitempty"`
	Version string `json:"version,omitempty"` // windowsmachineconfig.openshift.io/version: who configured it
}

// formatPlan renders a plan under its event's line, indented, for the text sink.
func formatPlan(p Plan) string {
	var b strings.Builder
	b.WriteString("\n  plan: " + p.Title)
	for _, s := range p.Summary {
		b.WriteString("\n    " + s)
	}
	if p.YAML != "" {
		for _, l := range strings.Split(strings.TrimRight(p.YAML, "\n"), "\n") {
			b.WriteString("\n    | " + l)
		}
	}
	for _, c := range p.Commands {
		b.WriteString("\n    $ " + c)
	}
	return b.String()
}

// formatSetup renders the steps of a setup state, one line each, for the text sink.
func formatSetup(s Setup) string {
	var b strings.Builder
	for _, st := range s.Steps {
		mark := "·"
		if st.Done {
			mark = "✓"
		} else if st.ID == s.Next {
			mark = "→"
		}
		fmt.Fprintf(&b, "\n  %s %-9s %s", mark, st.ID, st.Title)
		for _, ev := range st.Evidence {
			b.WriteString("\n      " + ev)
		}
		if st.Blocking != "" {
			b.WriteString("\n      blocked: " + st.Blocking)
		}
		if st.Hint != "" && !st.Done {
			b.WriteString("\n      next: " + st.Hint)
		}
	}
	return b.String()
}
