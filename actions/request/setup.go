package request

import (
	"fmt"
	"strings"
)

// Action names of the cluster-side setup actions the console runs, as their Events carry them.
const (
	ActionMachineSetGenerate = "machineset-apply"
	ActionMachineSetScale    = "machineset-scale"
	ActionMachineSetDelete   = "machineset-delete"
	ActionBYOHAdd            = "byoh-add"
	ActionBYOHRemove         = "byoh-remove"
)

// MachineSetGenerate builds a Windows MachineSet from the cluster's own settings and what only the user knows,
// shows it and applies it once confirmed. Empty fields take the platform's defaults.
type MachineSetGenerate struct {
	Platform     string // aws, azure, vsphere, gcp, nutanix; "" = the cluster's
	Name         string
	Zone         string
	Image        string
	InstanceType string
	Replicas     *int32 // nil = 1; 0 is a MachineSet without Machines
	// Preview emits the MachineSet's YAML as an event.PlanShown event and changes nothing (see wizard.go);
	// without it the YAML is a Question before applying.
	Preview bool
	// Confirmed: the user has seen that plan and confirmed it (the wizard's preview), so it is applied
	// without asking again.
	Confirmed bool
	// Apply is the command line's --apply: it asked for the MachineSet, so creating it asks nothing more;
	// replacing one still asks (answered by --yes), and a replacement not confirmed is an error.
	Apply bool
}

func (r MachineSetGenerate) Action() string { return ActionMachineSetGenerate }
func (r MachineSetGenerate) Targets() []string {
	if r.Name == "" {
		return []string{"new Windows MachineSet"}
	}
	return []string{r.Name}
}

// Title says "apply": whether it creates the MachineSet or replaces a Windows one of that name is known
// only once the cluster was read, and its question says which.
func (r MachineSetGenerate) Title() string { return "apply MachineSet " + r.Targets()[0] }

// Audit: a preview changes nothing.
func (r MachineSetGenerate) Audit() Audit {
	if r.Preview {
		return readsOnly
	}
	return changes(fmt.Sprintf("platform %q, image %q, zone %q, instance type %q, replicas %d", r.Platform, r.Image, r.Zone, r.InstanceType, r.ReplicaCount()))
}

// ReplicaCount is how many Machines the MachineSet asks for: Replicas, or 1 when it is not given.
func (r MachineSetGenerate) ReplicaCount() int32 {
	if r.Replicas == nil {
		return 1
	}
	return *r.Replicas
}

// MachineSetScale sets a MachineSet's replicas.
type MachineSetScale struct {
	Name     string
	Replicas int32
}

func (r MachineSetScale) Action() string    { return ActionMachineSetScale }
func (r MachineSetScale) Targets() []string { return []string{r.Name} }
func (r MachineSetScale) Audit() Audit      { return changes(fmt.Sprintf("replicas %d", r.Replicas)) }
func (r MachineSetScale) Title() string {
	return fmt.Sprintf("scale MachineSet %s to %d", r.Name, r.Replicas)
}

// MachineSetDelete deletes a MachineSet, and with it its Machines and nodes, after a question naming them.
type MachineSetDelete struct{ Name string }

func (r MachineSetDelete) Action() string    { return ActionMachineSetDelete }
func (r MachineSetDelete) Targets() []string { return []string{r.Name} }
func (r MachineSetDelete) Title() string     { return "delete MachineSet " + r.Name }
func (r MachineSetDelete) Audit() Audit      { return changes("") }

// BYOHAdd adds a host to the windows-instances ConfigMap (WMCO then configures it; in standalone mode the
// entry records the host and wmcon configures it). Preview emits the entry as an event.PlanShown event and
// changes nothing.
type BYOHAdd struct {
	Address, User string
	Preview       bool
}

func (r BYOHAdd) Action() string    { return ActionBYOHAdd }
func (r BYOHAdd) Targets() []string { return []string{r.Address} }
func (r BYOHAdd) Title() string     { return "add BYOH host " + r.Address }

// Audit: a preview changes nothing.
func (r BYOHAdd) Audit() Audit {
	if r.Preview {
		return readsOnly
	}
	return changes("user " + r.User)
}

// BYOHRemove removes a host from windows-instances after a question saying what WMCO will do to its node.
type BYOHRemove struct{ Address, Node string }

func (r BYOHRemove) Action() string    { return ActionBYOHRemove }
func (r BYOHRemove) Targets() []string { return []string{r.Address} }
func (r BYOHRemove) Title() string     { return "remove BYOH host " + r.Address }
func (r BYOHRemove) Audit() Audit      { return changes("") }

// UntilReadyNodes words what following the operator waits for: "X is a Ready node" or "X, Y are Ready
// nodes" (the headless hint and the console's plan say the same).
func UntilReadyNodes(names []string) string {
	if len(names) == 1 {
		return names[0] + " is a Ready node"
	}
	return strings.Join(names, ", ") + " are Ready nodes"
}
