package request

import (
	"fmt"
	"strings"
	"time"
)

// DrainOptions are what the user chooses about a drain, as `oc adm drain`'s flags. DefaultDrainOptions
// gives the documented reboot procedure's; the console's confirmation and the headless flags start from it.
// cluster.DrainChoices has the same fields, so the actions hand these to cluster as cluster.DrainChoices(o).
type DrainOptions struct {
	// GracePeriodSeconds given to each pod; -1 uses each pod's terminationGracePeriodSeconds, 0 deletes at once.
	GracePeriodSeconds int
	Timeout            time.Duration // for the whole drain of one node; 0 = no limit
	IgnoreDaemonSets   bool          // skip DaemonSet-managed pods (they would only come back)
	DeleteEmptyDirData bool          // drain pods with emptyDir volumes (their data is lost)
	Force              bool          // also delete pods no controller manages
	DisableEviction    bool          // delete pods instead of evicting them: bypasses PodDisruptionBudgets
}

// DefaultDrainTimeout bounds one node's drain unless the user says otherwise, in the console and headless
// alike: long enough for pods that take their time to stop, short enough that a PodDisruptionBudget that
// never allows an eviction ends the run with an answer instead of hanging a script.
const DefaultDrainTimeout = 10 * time.Minute

// DefaultDrainOptions are the documented reboot procedure's: --ignore-daemonsets --delete-emptydir-data
// --force, evicting (so PodDisruptionBudgets are honoured), each pod's own grace period.
func DefaultDrainOptions() DrainOptions {
	return DrainOptions{GracePeriodSeconds: -1, Timeout: DefaultDrainTimeout, IgnoreDaemonSets: true, DeleteEmptyDirData: true, Force: true}
}

// String summarises the options as `oc adm drain` flags.
func (d DrainOptions) String() string {
	var f []string
	if d.IgnoreDaemonSets {
		f = append(f, "--ignore-daemonsets")
	}
	if d.DeleteEmptyDirData {
		f = append(f, "--delete-emptydir-data")
	}
	if d.Force {
		f = append(f, "--force")
	}
	if d.DisableEviction {
		f = append(f, "--disable-eviction")
	}
	if d.GracePeriodSeconds >= 0 {
		f = append(f, fmt.Sprintf("--grace-period=%d", d.GracePeriodSeconds))
	}
	if d.Timeout > 0 {
		f = append(f, "--timeout="+d.Timeout.String())
	}
	return strings.Join(f, " ")
}
