package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/model"
)

// failedMachineSnapshot gives the fixture's first Windows MachineSet its providerSpec summary and makes its
// first Machine a failed one with an instance and addresses.
func failedMachineSnapshot() *model.Snapshot {
	snap := fixtureSnapshot()
	ms := &snap.MachineSets[0]
	ms.Provider = model.ProviderSummary{InstanceType: "m5a.large", Zone: "us-east-2a", Image: "ami-0a9b8c7d6e5f40312", UserDataSecret: "windows-user-data"}
	m := &ms.Machines[0]
	m.Phase, m.NodeName = "Failed", ""
	m.ProviderID = "aws:///us-east-2a/i-0f1e2d3c4b5a69788"
	m.Addresses = []string{"InternalIP 127.0.17.41", "InternalDNS ip-127-0-17-41.us-east-2.compute.internal"}
	m.ErrorReason, m.ErrorMessage = "InvalidConfiguration", "error launching instance: The image id '[ami-0a9b8c7d6e5f40312]' does not exist"
	return snap
}

// TestEnterOnAMachineOpensItsDetails: enter on a Machine (an expanded MachineSet's child) opens the
// Machine's details — phase, instance, addresses, node, the machine API's error — not its MachineSet's;
// the MachineSet's details name its instance type, zone, image and user-data secret.
func TestEnterOnAMachineOpensItsDetails(t *testing.T) {
	snap := failedMachineSnapshot()
	m := newTestModel(snap)
	m = update(m, press("2", "right", "j", "enter")...)
	require.True(t, isTop[*detailView](m))
	out := screen(m)
	machine := snap.MachineSets[0].Machines[0].Name
	assert.Contains(t, out, "Machine openshift-machine-api/"+machine)
	assert.Contains(t, out, "aws:///us-east-2a/i-0f1e2d3c4b5a69788")
	assert.Contains(t, out, "InternalIP 127.0.17.41")
	assert.Contains(t, out, "(no node yet)")
	assert.Contains(t, out, "InvalidConfiguration")
	assert.Contains(t, out, "does not exist")

	m = update(m, press("esc", "k", "enter")...)
	out = screen(m)
	assert.Contains(t, out, "MachineSet openshift-machine-api/"+snap.MachineSets[0].Name)
	for _, want := range []string{"m5a.large", "us-east-2a", "ami-0a9b8c7d6e5f40312", "windows-user-data"} {
		assert.Contains(t, out, want)
	}
}

// TestWShowsWindowsMachineSetsOnly: w on the MachineSets pane keeps the Windows MachineSets (and the BYOH
// hosts), and says so; w again shows all.
func TestWShowsWindowsMachineSetsOnly(t *testing.T) {
	m := newTestModel(fixtureSnapshot())
	m = update(m, press("2")...)
	assert.Contains(t, screen(m), infraID+"-worker-us-east-2a")
	m = update(m, press("w")...)
	out := screen(m)
	assert.NotContains(t, out, infraID+"-worker-us-east-2a")
	assert.Contains(t, out, winMachineSet("a"))
	assert.Contains(t, out, "Windows MachineSets only (w shows all)")
	m = update(m, press("w")...)
	assert.Contains(t, screen(m), infraID+"-worker-us-east-2a")
}
