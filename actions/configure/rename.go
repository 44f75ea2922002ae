package configure

import (
	"context"
	"fmt"
	"strings"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/remote"
)

// StepRename is WMCO's first host step on vSphere and Nutanix: the computer takes its Machine's name.
const StepRename = "rename"

// RenameHost is what renaming needs from the host: the new name holds only after a restart.
type RenameHost interface {
	Hostname(ctx context.Context) (string, error)
	remote.ComputerName
	remote.Rebooter
}

// machineNamedPlatforms are where WMCO names a Machine's computer after the Machine before configuring it:
// those images come up with a generated name (WIN-…), and the Node must carry the Machine's name (on
// vSphere its fully qualified form) for the Machine and the cloud provider to find it.
var machineNamedPlatforms = map[string]bool{"vsphere": true, "nutanix": true}

// machineRename is a rename the host needs: its name now and its Machine's.
type machineRename struct{ from, to string }

// plannedRename finds the rename a host given by address needs: on vSphere and Nutanix, a host whose name is
// not its Machine's. Nil when the platform keeps host names, the host is no Machine's, or it has the name.
func plannedRename(ctx context.Context, c actions.NodeConfigCluster, creq *ConfigureRequest) (*machineRename, error) {
	if !machineNamedPlatforms[strings.ToLower(creq.Facts.Platform)] {
		return nil, nil
	}
	machine, err := c.WindowsMachineAt(ctx, creq.Host.IP)
	if err != nil || machine == "" {
		return nil, err
	}
	if strings.EqualFold(machine, creq.Host.NodeName) {
		return nil, nil
	}
	return &machineRename{from: creq.Host.NodeName, to: machine}, nil
}

// renameToMachine renames the computer and restarts it, as WMCO does, then takes the host's new name. Every
// failure says how the host was left.
func renameToMachine(ctx context.Context, h RenameHost, mr *machineRename, creq *ConfigureRequest, r event.Reporter) error {
	renameFailed := func(err error, left, hint string) error {
		r.Failed(StepRename, err, hint)
		r.Finish(event.OutcomeOf(ctx), "configuration of "+mr.from+" stopped at the rename: "+left, hint)
		return &renameError{err: err, left: left}
	}
	r.Started(StepRename, fmt.Sprintf("renaming the computer %s to %s, its Machine's name (Windows takes it at the next start)", mr.from, mr.to))
	if err := h.RenameComputer(ctx, mr.to); err != nil {
		return renameFailed(fmt.Errorf("rename the computer: %w", err),
			"the host was not changed", "check the Machine's name is a valid computer name, then run the same command again")
	}
	r.Log(StepRename, "restarting the host")
	if err := h.Reboot(ctx, remote.RebootOptions{}); err != nil {
		return renameFailed(fmt.Errorf("restart after renaming the computer: %w", err),
			"the computer is renamed "+mr.to+" but keeps its old name until it restarts",
			"restart the host (from vSphere or Nutanix if it does not answer), then run the same command again")
	}
	hn, err := h.Hostname(ctx)
	if err == nil && !strings.EqualFold(strings.TrimSpace(hn), mr.to) {
		err = fmt.Errorf("after the restart the host still calls itself %s, not %s", strings.TrimSpace(hn), mr.to)
	}
	if err != nil {
		return renameFailed(err, "the host was renamed and restarted, and nothing else was changed",
			"check the host's name (hostname), then run the same command again")
	}
	name := strings.ToLower(strings.TrimSpace(hn))
	creq.Host.NodeName, creq.HostNames = name, []string{name}
	r.Done(StepRename, "the computer is now "+strings.TrimSpace(hn))
	return nil
}

// renameError is a failed rename and how it left the host.
type renameError struct {
	err  error
	left string
}

func (e *renameError) Error() string { return e.err.Error() + "; " + e.left }
func (e *renameError) Unwrap() error { return e.err }

// predictRenamed is the node name a dry run predicts for a host it would rename: the name read from the host
// now, with the old computer name replaced by the Machine's (vSphere's keeps the DNS suffix).
func predictRenamed(name string, mr *machineRename) string {
	if rest, ok := strings.CutPrefix(name, strings.ToLower(mr.from)); ok {
		return strings.ToLower(mr.to) + rest
	}
	return strings.ToLower(mr.to)
}
