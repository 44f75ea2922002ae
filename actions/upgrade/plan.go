// Package upgrade brings Windows nodes to the target version: it plans who upgrades each node, reconfigures
// the standalone ones in place (cordon, drain, configure with the new payload, Ready, uncordon) and
// follows the operator upgrading its own.
package upgrade

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
)

// Who upgrades a group of nodes.
const (
	UpgradedByOperator = "operator" // WMCO reconfigures them itself; wmcon follows (upgrade run --watch)
	UpgradedByWmcon    = "wmcon"    // standalone nodes wmcon configured: upgrade run reconfigures them
)

// Kinds of upgrade groups.
const (
	GroupMachineSet = "MachineSet"
	GroupBYOH       = "BYOH"
	GroupStandalone = "standalone"
)

// UpgradePlan is which Windows nodes are not at the target version, grouped by who upgrades them, in the
// order they go and why.
type UpgradePlan struct {
	Target       string         `json:"target"`       // the version every node should carry
	TargetSource string         `json:"targetSource"` // where it comes from: the installed operator, or a payload
	Groups       []UpgradeGroup `json:"groups"`
	UpToDate     []string       `json:"upToDate,omitempty"`     // nodes already at the target
	Unconfigured []string       `json:"unconfigured,omitempty"` // Windows nodes without a version annotation: not configured yet
}

// UpgradeGroup is the nodes of one MachineSet, the BYOH nodes, or the standalone nodes.
type UpgradeGroup struct {
	Kind  string        `json:"kind"`           // MachineSet, BYOH, standalone
	Name  string        `json:"name,omitempty"` // the MachineSet's name
	By    string        `json:"by"`             // operator or wmcon
	Nodes []UpgradeNode `json:"nodes"`
}

// UpgradeNode is one node to upgrade.
type UpgradeNode struct {
	Order      int    `json:"order"` // its turn among the nodes the same upgrader takes (1 = first)
	Node       string `json:"node"`
	From       string `json:"from"`
	To         string `json:"to"`
	MachineSet string `json:"machineSet,omitempty"`
	Reason     string `json:"reason"`          // "version 9.0.0 → 10.0.0: ..."
	Waits      string `json:"waits,omitempty"` // why it cannot go now ("last healthy Machine of MachineSet x")
	Upgrading  bool   `json:"upgrading,omitempty"`
}

// Empty reports whether every configured node is at the target.
func (p UpgradePlan) Empty() bool { return len(p.Groups) == 0 }

// Standalone is the nodes wmcon upgrades itself, in order.
func (p UpgradePlan) Standalone() []UpgradeNode {
	for _, g := range p.Groups {
		if g.Kind == GroupStandalone {
			return g.Nodes
		}
	}
	return nil
}

// Operated is the nodes the operator upgrades, in its order.
func (p UpgradePlan) Operated() []UpgradeNode {
	var out []UpgradeNode
	for _, g := range p.Groups {
		if g.By == UpgradedByOperator {
			out = append(out, g.Nodes...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Order < out[j].Order })
	return out
}

// UpgradeInput is what a plan is made from.
type UpgradeInput struct {
	Snapshot     *model.Snapshot
	Target       string
	TargetSource string
	// Owners names, per Windows node, what makes the operator own it ("Machine ns/x", "the windows-instances
	// entry a"), as configure decides it; a node absent or "" is standalone.
	Owners map[string]string
}

// PlanUpgrade lists the Windows nodes whose version annotation differs from the target. Standalone nodes
// are ordered for wmcon's run: nodes already out of service first (upgrading them costs no capacity),
// then the others by name, and last those that are the last healthy Machine of their MachineSet, which
// wait. Nodes the operator owns are ordered as it takes them: the one upgrading now, those whose
// desired-version already names the target, then the rest by name, one at a time.
func PlanUpgrade(in UpgradeInput) UpgradePlan {
	plan := UpgradePlan{Target: in.Target, TargetSource: in.TargetSource}
	groups := map[string]*UpgradeGroup{}
	var keys []string
	for _, n := range in.Snapshot.WindowsNodes() {
		switch {
		case n.WMCOVersion == "":
			plan.Unconfigured = append(plan.Unconfigured, n.Name)
			continue
		case cluster.SameOperatorVersion(n.WMCOVersion, in.Target):
			plan.UpToDate = append(plan.UpToDate, n.Name)
			continue
		}
		ms, _ := MachineSetOf(in.Snapshot, n)
		kind, name, by := groupOf(in.Owners[n.Name], ms)
		key := kind + "/" + name
		g := groups[key]
		if g == nil {
			g = &UpgradeGroup{Kind: kind, Name: name, By: by}
			groups[key] = g
			keys = append(keys, key)
		}
		g.Nodes = append(g.Nodes, UpgradeNode{Node: n.Name, From: n.WMCOVersion, To: in.Target, MachineSet: ms,
			Upgrading: n.Upgrading})
	}
	sort.Slice(keys, func(i, j int) bool { return groupRank(keys[i]) < groupRank(keys[j]) })
	var operated []*UpgradeNode
	for _, k := range keys {
		g := groups[k]
		if g.By == UpgradedByWmcon {
			orderStandalone(in.Snapshot, g.Nodes)
		} else {
			for i := range g.Nodes {
				operated = append(operated, &g.Nodes[i])
			}
		}
		plan.Groups = append(plan.Groups, *g)
	}
	orderOperated(in.Snapshot, operated) // through pointers into the groups' nodes
	for gi := range plan.Groups {
		if nodes := plan.Groups[gi].Nodes; plan.Groups[gi].By == UpgradedByOperator {
			sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Order < nodes[j].Order })
		}
	}
	return plan
}

// groupOf says which group a node belongs to from its owner and MachineSet.
func groupOf(owner, machineSet string) (kind, name, by string) {
	switch {
	case owner == "":
		return GroupStandalone, "", UpgradedByWmcon
	case strings.HasPrefix(owner, "Machine "):
		if machineSet == "" {
			machineSet = "(a Machine without a MachineSet)"
		}
		return GroupMachineSet, machineSet, UpgradedByOperator
	}
	return GroupBYOH, "", UpgradedByOperator
}

// groupRank puts MachineSets first (by name), then BYOH, then standalone.
func groupRank(key string) string {
	switch {
	case strings.HasPrefix(key, GroupMachineSet+"/"):
		return "0" + key
	case strings.HasPrefix(key, GroupBYOH+"/"):
		return "1" + key
	}
	return "2" + key
}

func versionChange(n UpgradeNode) string {
	return fmt.Sprintf("version %s → %s", n.From, n.To)
}

// orderStandalone orders wmcon's own run and says why each node goes where it does.
func orderStandalone(snap *model.Snapshot, nodes []UpgradeNode) {
	rank := func(n UpgradeNode) int {
		info, _ := snap.Node(n.Node)
		switch {
		case !NodeHealthy(info):
			return 0
		case lastHealthy(snap, info):
			return 2
		}
		return 1
	}
	sort.SliceStable(nodes, func(i, j int) bool {
		ri, rj := rank(nodes[i]), rank(nodes[j])
		if ri != rj {
			return ri < rj
		}
		return nodes[i].Node < nodes[j].Node
	})
	for i := range nodes {
		n := &nodes[i]
		n.Order = i + 1
		info, _ := snap.Node(n.Node)
		switch rank(*n) {
		case 0:
			n.Reason = versionChange(*n) + ": already out of service (" + info.State() + "), so first: it costs no capacity"
		case 2:
			n.Reason = versionChange(*n) + ": cordon, drain, reconfigure, Ready, uncordon"
			n.Waits = "last healthy Machine of MachineSet " + n.MachineSet + ": waits until another of its Machines is healthy"
		default:
			n.Reason = versionChange(*n) + ": cordon, drain, reconfigure, Ready, uncordon"
		}
	}
}

// orderOperated orders the operator's nodes across groups as it takes them, one at a time.
func orderOperated(snap *model.Snapshot, nodes []*UpgradeNode) {
	rank := func(n *UpgradeNode) int {
		info, _ := snap.Node(n.Node)
		switch {
		case info.Upgrading:
			return 0
		case info.DriftPickedUp || cluster.SameOperatorVersion(info.DesiredVersion, n.To):
			return 1
		}
		return 2
	}
	sort.SliceStable(nodes, func(i, j int) bool {
		ri, rj := rank(nodes[i]), rank(nodes[j])
		if ri != rj {
			return ri < rj
		}
		return nodes[i].Node < nodes[j].Node
	})
	for i, n := range nodes {
		n.Order = i + 1
		info, _ := snap.Node(n.Node)
		how := ": the operator reconfigures it in place"
		switch rank(n) {
		case 0:
			n.Reason = versionChange(*n) + how + "; upgrading now"
		case 1:
			n.Reason = versionChange(*n) + how + "; taken up (desired-version " + info.DesiredVersion + ")"
		default:
			n.Reason = versionChange(*n) + how + "; waits its turn (one node at a time)"
			if n.Order == 1 {
				n.Reason = versionChange(*n) + how + "; next"
			}
		}
		if others := unhealthyMachines(snap, n.MachineSet, n.Node); n.MachineSet != "" && len(others) > 0 {
			n.Waits = "MachineSet " + n.MachineSet + " has an unhealthy Machine (" + strings.Join(others, ", ") +
				"): the operator takes a Machine out of service only while the others are healthy"
		}
	}
}

// NodeHealthy is a node that serves: Ready and schedulable.
func NodeHealthy(n model.NodeInfo) bool {
	return n.Status == model.NodeReady && !n.Unschedulable
}

// MachineSetOf names the MachineSet whose Machine backs the node ("" when none does).
func MachineSetOf(snap *model.Snapshot, n model.NodeInfo) (string, bool) {
	for _, ms := range snap.MachineSets {
		for _, m := range ms.Machines {
			if m.NodeName == n.Name || (n.Machine != "" && n.Machine == ms.Namespace+"/"+m.Name) {
				return ms.Name, true
			}
		}
	}
	return "", false
}

// machineHealthy is a Machine that is Running and whose node is healthy.
func machineHealthy(snap *model.Snapshot, m model.MachineInfo) bool {
	if m.Phase != "Running" || m.NodeName == "" {
		return false
	}
	n, ok := snap.Node(m.NodeName)
	return ok && NodeHealthy(n)
}

// lastHealthy reports whether taking the node out of service would leave its MachineSet without a
// healthy Machine: it is healthy itself and no other Machine of the set is.
func lastHealthy(snap *model.Snapshot, n model.NodeInfo) bool {
	name, ok := MachineSetOf(snap, n)
	if !ok || !NodeHealthy(n) {
		return false
	}
	for _, ms := range snap.MachineSets {
		if ms.Name != name {
			continue
		}
		for _, m := range ms.Machines {
			if m.NodeName != n.Name && machineHealthy(snap, m) {
				return false
			}
		}
	}
	return true
}

// LastHealthyMachine names the MachineSet of which the node is the last healthy Machine, "" when taking it
// out of service leaves its MachineSet (if any) another healthy Machine.
func LastHealthyMachine(snap *model.Snapshot, node string) string {
	n, ok := snap.Node(node)
	if !ok || !lastHealthy(snap, n) {
		return ""
	}
	ms, _ := MachineSetOf(snap, n)
	return ms
}

// unhealthyMachines names the Machines of a MachineSet, other than the node's, that are not healthy
// ("x (node y NotReady, cordoned)").
func unhealthyMachines(snap *model.Snapshot, machineSet, node string) []string {
	var out []string
	for _, ms := range snap.MachineSets {
		if ms.Name != machineSet {
			continue
		}
		for _, m := range ms.Machines {
			if m.NodeName == node || machineHealthy(snap, m) {
				continue
			}
			why := "phase " + event.OrNone(m.Phase)
			if n, ok := snap.Node(m.NodeName); ok {
				why = "node " + n.Name + " " + n.State()
			}
			out = append(out, m.Name+" ("+why+")")
		}
	}
	return out
}

// Text is the plan as people read it.
func (p UpgradePlan) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "target version %s (%s)\n", p.Target, p.TargetSource)
	if p.Empty() {
		b.WriteString("every configured Windows node is at the target: nothing to upgrade\n")
	}
	for _, g := range p.Groups {
		title := g.Kind
		if g.Name != "" {
			title += " " + g.Name
		}
		switch g.By {
		case UpgradedByOperator:
			title += ": the operator upgrades these, one node at a time (follow it: wmcon upgrade run --watch)"
		default:
			title += ": configured by wmcon, upgraded by wmcon upgrade run"
		}
		b.WriteString(title + "\n")
		for _, n := range g.Nodes {
			fmt.Fprintf(&b, "  %d. %s  %s\n", n.Order, n.Node, n.Reason)
			if n.Waits != "" {
				fmt.Fprintf(&b, "     waits: %s\n", n.Waits)
			}
		}
	}
	if len(p.UpToDate) > 0 {
		fmt.Fprintf(&b, "at the target: %s\n", strings.Join(p.UpToDate, ", "))
	}
	if len(p.Unconfigured) > 0 {
		fmt.Fprintf(&b, "not configured yet (no version annotation): %s\n", strings.Join(p.Unconfigured, ", "))
	}
	return b.String()
}
