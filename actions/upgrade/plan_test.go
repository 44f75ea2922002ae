package upgrade_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/upgrade"
	"github.com/wmcon/wmcon/model"
)

// fleet builds a snapshot: nodes by name with their version and health, and MachineSets of Machines.
type fleet struct{ snap model.Snapshot }

func (f *fleet) node(name, version string, status model.NodeStatus, cordoned bool) *fleet {
	f.snap.Nodes = append(f.snap.Nodes, model.NodeInfo{Name: name, Windows: true, WMCOVersion: version, Status: status, Unschedulable: cordoned})
	return f
}

func (f *fleet) machineSet(name string, nodes ...string) *fleet {
	ms := model.MachineSetInfo{Namespace: "openshift-machine-api", Name: name, Windows: true}
	for _, n := range nodes {
		ms.Machines = append(ms.Machines, model.MachineInfo{Name: name + "-" + n, Phase: "Running", NodeName: n, Windows: true})
	}
	f.snap.MachineSets = append(f.snap.MachineSets, ms)
	return f
}

func order(nodes []upgrade.UpgradeNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Node)
	}
	return out
}

func TestUpgradePlanGroupsAndOrdersStandaloneNodes(t *testing.T) {
	const old, target = "wmcon-9.0.0", "10.0.0"
	f := (&fleet{}).
		node("s-b", old, model.NodeReady, false).
		node("s-a", old, model.NodeReady, false).
		node("s-down", old, model.NodeNotReady, false).
		node("s-last", old, model.NodeReady, false).
		node("s-peer", old, model.NodeNotReady, false).
		node("s-current", target+"-abc", model.NodeReady, false).
		node("s-new", "", model.NodeReady, false).
		node("m-1", "9.0.0", model.NodeReady, false).
		node("m-2", "9.0.0", model.NodeReady, false).
		node("byoh-1", "9.0.0", model.NodeReady, false).
		machineSet("ms-own", "s-last", "s-peer"). // s-peer is down: s-last is the set's last healthy Machine
		machineSet("ms-wmco", "m-1", "m-2")
	f.snap.Nodes[8].Upgrading = true // m-2: the operator is at it
	owners := map[string]string{"m-1": "Machine openshift-machine-api/ms-wmco-m-1", "m-2": "Machine openshift-machine-api/ms-wmco-m-2",
		"byoh-1": "the windows-instances entry 127.0.0.9"}

	plan := upgrade.PlanUpgrade(upgrade.UpgradeInput{Snapshot: &f.snap, Target: target, TargetSource: "the installed operator", Owners: owners})

	require.Len(t, plan.Groups, 3)
	assert.Equal(t, []string{"MachineSet", "BYOH", "standalone"}, []string{plan.Groups[0].Kind, plan.Groups[1].Kind, plan.Groups[2].Kind})
	assert.Equal(t, "ms-wmco", plan.Groups[0].Name)
	assert.Equal(t, upgrade.UpgradedByOperator, plan.Groups[0].By)
	assert.Equal(t, upgrade.UpgradedByWmcon, plan.Groups[2].By)
	assert.Equal(t, []string{"s-current"}, plan.UpToDate, "a version with the operator's build suffix is at the target")
	assert.Equal(t, []string{"s-new"}, plan.Unconfigured)

	st := plan.Standalone()
	assert.Equal(t, []string{"s-down", "s-peer", "s-a", "s-b", "s-last"}, order(st),
		"out-of-service nodes first, then by name, the last healthy Machine of a MachineSet last")
	for i, n := range st {
		assert.Equal(t, i+1, n.Order)
		assert.Contains(t, n.Reason, "version wmcon-9.0.0 → 10.0.0")
	}
	assert.Contains(t, st[0].Reason, "already out of service (NotReady, schedulable)")
	assert.Equal(t, "ms-own", st[4].MachineSet)
	assert.Contains(t, st[4].Waits, "last healthy Machine of MachineSet ms-own")
	assert.Empty(t, st[2].Waits)

	op := plan.Operated()
	assert.Equal(t, []string{"m-2", "byoh-1", "m-1"}, order(op), "the node upgrading now first, then by name")
	assert.Contains(t, op[0].Reason, "upgrading now")
	assert.Contains(t, op[2].Reason, "waits its turn")
	assert.Contains(t, plan.Text(), "MachineSet ms-wmco: the operator upgrades these")
	assert.Contains(t, plan.Text(), "waits: last healthy Machine of MachineSet ms-own")
}

func TestLastHealthyMachine(t *testing.T) {
	cases := []struct {
		name string
		f    *fleet
		want string
	}{
		{"another healthy Machine", (&fleet{}).node("a", "1", model.NodeReady, false).node("b", "1", model.NodeReady, false).machineSet("ms", "a", "b"), ""},
		{"the other is NotReady", (&fleet{}).node("a", "1", model.NodeReady, false).node("b", "1", model.NodeNotReady, false).machineSet("ms", "a", "b"), "ms"},
		{"the other is cordoned", (&fleet{}).node("a", "1", model.NodeReady, false).node("b", "1", model.NodeReady, true).machineSet("ms", "a", "b"), "ms"},
		{"alone in its MachineSet", (&fleet{}).node("a", "1", model.NodeReady, false).machineSet("ms", "a"), "ms"},
		{"itself unhealthy: taking it costs nothing", (&fleet{}).node("a", "1", model.NodeNotReady, false).machineSet("ms", "a"), ""},
		{"no MachineSet", (&fleet{}).node("a", "1", model.NodeReady, false), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, upgrade.LastHealthyMachine(&c.f.snap, "a"))
		})
	}
	t.Run("a Machine not Running does not count", func(t *testing.T) {
		f := (&fleet{}).node("a", "1", model.NodeReady, false).node("b", "1", model.NodeReady, false).machineSet("ms", "a", "b")
		f.snap.MachineSets[0].Machines[1].Phase = "Deleting"
		assert.Equal(t, "ms", upgrade.LastHealthyMachine(&f.snap, "a"))
	})
}

func TestUpgradePlanOperatorWaitsForAnUnhealthyMachineSet(t *testing.T) {
	f := (&fleet{}).node("m-1", "9.0.0", model.NodeReady, false).node("m-2", "10.0.0", model.NodeNotReady, false).machineSet("ms", "m-1", "m-2")
	plan := upgrade.PlanUpgrade(upgrade.UpgradeInput{Snapshot: &f.snap, Target: "10.0.0", Owners: map[string]string{"m-1": "Machine x/ms-m-1", "m-2": "Machine x/ms-m-2"}})
	op := plan.Operated()
	require.Len(t, op, 1)
	assert.Contains(t, op[0].Waits, "MachineSet ms has an unhealthy Machine (ms-m-2 (node m-2 NotReady, schedulable))")
}
