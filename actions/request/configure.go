package request

import (
	"time"

	"github.com/wmcon/wmcon/cmdline"
)

// Action names of the node configuration actions.
const (
	ActionConfigure   = "configure"
	ActionDeconfigure = "deconfigure"
)

// Configure makes a Windows host a Ready worker node over SSH, as WMCO does: the host of an existing
// Windows Node (Node), or a host that has no Node yet (Address, with User). Only the difference between the
// host and the desired state is applied, so a re-run changes nothing and a run after a failure resumes.
type Configure struct {
	Node    string // an existing Windows node; or
	Address string // a host's address (IPv4 or a DNS name, optionally :port) when it has no Node yet
	User    string // SSH user for Address ("" = the platform's: Administrator, capi on Azure)

	PayloadDir   string // a directory laid out like WMCO's /payload; or
	PayloadImage string // an OCI image whose /payload to install; neither = the installed operator's image (the demo's own)

	DryRun bool // inspect and report the plan (every directory, file and service command line), change nothing
	// Preview is the guided setup's preview (wizard.go): a dry run that also reports the plan as one
	// event.PlanShown event, before Finished.
	Preview bool
	// Confirm asks (a Question "configure") once the plan is known and before anything is written: the
	// console's confirmation shows the plan.
	Confirm bool
	// Watch follows the operator's progress on a host it owns (Machine phase, Node, CSRs, events, version,
	// Ready) instead of configuring it; it changes nothing.
	Watch bool

	CSRTimeout   time.Duration // for each of the kubelet's CSRs to appear (0 = 5m)
	ReadyTimeout time.Duration // for the Node to register and to be Ready (0 = 10m)
}

func (r Configure) Action() string { return ActionConfigure }

// Targets is the node, or the address when there is no node yet.
func (r Configure) Targets() []string {
	if r.Node != "" {
		return []string{r.Node}
	}
	return []string{r.Address}
}

// Audit: a dry run, a preview and a watch change nothing; a configuration records the flags that would
// run it again.
func (r Configure) Audit() Audit {
	if r.DryRun || r.Preview || r.Watch {
		return readsOnly
	}
	return changes(cmdline.Join(r.Flags()...))
}

// Flags are the wmcon configure flags that say where the host and its payload are (and --watch).
func (r Configure) Flags() []string {
	var flags []string
	for _, f := range [][2]string{{"--address", r.Address}, {"--user", r.User}, {"--payload", r.PayloadDir}, {"--payload-image", r.PayloadImage}} {
		if f[1] != "" {
			flags = append(flags, f[0], f[1])
		}
	}
	if r.Watch {
		flags = append(flags, "--watch")
	}
	return flags
}

func (r Configure) Title() string {
	t := title(r.Action(), r.Targets())
	if r.DryRun || r.Preview {
		t += " (dry run)"
	}
	if r.Watch {
		t += " (watching the operator)"
	}
	return t
}

// Deconfigure reverses Configure on a node's host, as WMCO does when a BYOH host is removed: cordon, drain,
// stop and delete the services, remove the files, directories and HNS networks, delete the Node.
type Deconfigure struct {
	Node  string
	Drain DrainOptions
}

func (r Deconfigure) Action() string    { return ActionDeconfigure }
func (r Deconfigure) Targets() []string { return []string{r.Node} }
func (r Deconfigure) Title() string     { return title(r.Action(), r.Targets()) }
func (r Deconfigure) Audit() Audit      { return changes(r.Drain.String()) }
