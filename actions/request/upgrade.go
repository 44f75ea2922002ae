package request

import (
	"fmt"
	"strings"
	"time"
)

// ActionUpgrade names the upgrade, as its Events do.
const ActionUpgrade = "upgrade"

// Upgrade brings Windows nodes to the target version (the installed operator's, else the payload's).
// Standalone nodes (configured by wmcon, not owned by the operator) are reconfigured in place one at a
// time (MaxUnavailable): cordon, drain, reconfigure with the new payload, Ready, uncordon. Nodes the
// operator owns are upgraded by it; Watch follows it instead and changes nothing.
type Upgrade struct {
	Nodes          []string // standalone nodes to upgrade; none = every standalone node the plan lists
	MaxUnavailable int      // 0 = DefaultMaxUnavailable
	Drain          DrainOptions

	PayloadDir   string // a directory laid out like WMCO's /payload; or
	PayloadImage string // an OCI image whose /payload to install; neither = the installed operator's image (the demo's own)

	// Confirm shows the plan and asks (a Question "upgrade") before anything changes: the console's dialog.
	Confirm bool
	// Watch follows the operator upgrading the nodes it owns (which node, its steps, what blocks it).
	Watch bool

	ReadyTimeout time.Duration // for each node to be Ready again (0 = 10m)
}

func (r Upgrade) Action() string    { return ActionUpgrade }
func (r Upgrade) Targets() []string { return r.Nodes }

// Audit: following the operator changes nothing; an upgrade records its limits and payload.
func (r Upgrade) Audit() Audit {
	if r.Watch {
		return readsOnly
	}
	parts := []string{fmt.Sprintf("--max-unavailable=%d", maxUnavailable(r.MaxUnavailable))}
	if r.PayloadDir != "" {
		parts = append(parts, "--payload "+r.PayloadDir)
	}
	if r.PayloadImage != "" {
		parts = append(parts, "--payload-image "+r.PayloadImage)
	}
	return changes(strings.Join(append(parts, "drain: "+r.Drain.String()), "; "))
}

func (r Upgrade) Title() string {
	switch {
	case r.Watch:
		return "upgrade: following the operator"
	case len(r.Nodes) == 0:
		return "upgrade the standalone Windows nodes"
	case len(r.Nodes) == 1:
		return "upgrade " + r.Nodes[0]
	}
	return fmt.Sprintf("upgrade %d nodes", len(r.Nodes))
}
