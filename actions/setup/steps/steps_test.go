package steps_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup/steps"
)

// hosts are a Machine without a node, a BYOH host whose node registered but is not Ready, a BYOH host
// without a node and a Ready one.
var hosts = []event.SetupHost{
	{Kind: "machine", Name: "openshift-machine-api/win-m-1"},
	{Kind: "byoh", Name: "127.0.0.8", Address: "127.0.0.8", User: "Administrator", Node: "win-b-8"},
	{Kind: "byoh", Name: "127.0.0.9", Address: "127.0.0.9", User: "Administrator"},
	{Kind: "byoh", Name: "127.0.0.10", Address: "127.0.0.10", User: "admin", Node: "win-b-10", Ready: true},
}

func TestTheStepsAreTheEventsSteps(t *testing.T) {
	assert.Equal(t, []event.SetupStepID{event.SetupCheck, event.SetupOperator, event.SetupKey, event.SetupMachines,
		event.SetupConfigure, event.SetupWorkloads, event.SetupDone}, steps.IDs())
	for _, s := range steps.All {
		assert.NotEmpty(t, s.Title, s.ID)
		assert.NotEmpty(t, s.Done, s.ID)
		assert.NotEmpty(t, s.Takes, s.ID)
	}
	assert.Equal(t, steps.Step{}, steps.Lookup("nope"))
}

// TestFollowLeavesARegisteredNodeToTriage: following the operator waits for the Machines and hosts that have
// no node yet; one whose node registered is not followed (its readiness is triage's), and when nothing is
// left but MachineSets just applied, their Machines are waited for.
func TestFollowLeavesARegisteredNodeToTriage(t *testing.T) {
	a := steps.Answers{FollowTimeout: 7}
	st := event.Setup{Hosts: hosts, MachineSetNames: []string{"win-ms"}}
	assert.Equal(t, request.SetupFollow{Machines: []string{"openshift-machine-api/win-m-1"}, Hosts: []string{"127.0.0.9"}, Timeout: 7}, a.Follow(st))
	st = event.Setup{Hosts: hosts[3:], MachineSetNames: []string{"win-ms"}}
	assert.Equal(t, request.SetupFollow{MachineSets: []string{"win-ms"}, Timeout: 7}, a.Follow(st))
}

func TestStandaloneHostsAndTheirConfiguration(t *testing.T) {
	st := event.Setup{Hosts: hosts, Mode: event.ModeStandalone}
	assert.Equal(t, []event.SetupHost{hosts[1], hosts[2]}, steps.ConfigureHosts(st), "the BYOH hosts not yet Ready")
	a := steps.Answers{PayloadImage: "registry.example.com/wmco:v1", CSRTimeout: 3, ReadyTimeout: 4}
	assert.Equal(t, request.Configure{Address: "127.0.0.9", User: "Administrator", PayloadImage: "registry.example.com/wmco:v1",
		CSRTimeout: 3, ReadyTimeout: 4}, a.Configure(hosts[2]))
}

func TestKeyRecordsTheModeItIsInstalledIn(t *testing.T) {
	_, ok := steps.Answers{}.KeyInstall(event.Setup{})
	assert.False(t, ok, "no key named")
	req, ok := steps.Answers{KeyFile: "/k"}.KeyInstall(event.Setup{Mode: event.ModeStandalone})
	assert.True(t, ok)
	assert.Equal(t, request.KeyInstall{File: "/k", Standalone: true}, req)
	req, _ = steps.Answers{GenerateKey: true, KeyOut: "/o", KeyType: "rsa"}.KeyInstall(event.Setup{Mode: event.ModeOperator})
	assert.Equal(t, request.KeyInstall{Generate: true, Out: "/o", Type: "rsa"}, req)
}

func TestMachineSetsFitOnlyWithTheOperator(t *testing.T) {
	assert.True(t, steps.MachineSetsFit(event.Setup{MachineSets: true, Mode: event.ModeOperator}))
	assert.True(t, steps.MachineSetsFit(event.Setup{MachineSets: true}), "the mode not chosen yet")
	assert.False(t, steps.MachineSetsFit(event.Setup{MachineSets: true, Mode: event.ModeStandalone}))
	assert.False(t, steps.MachineSetsFit(event.Setup{Mode: event.ModeOperator}), "a platform without MachineSets")
}

// TestTheNewNode: the setup ends on the detection's Ready node, else a host's Ready node, else the last
// Ready Windows node.
func TestTheNewNode(t *testing.T) {
	assert.Equal(t, "win-r", steps.NewNode(event.Setup{ReadyNode: "win-r", Hosts: hosts}))
	assert.Equal(t, "win-b-10", steps.NewNode(event.Setup{Hosts: hosts}))
	assert.Equal(t, "win-n", steps.NewNode(event.Setup{Nodes: []event.SetupNode{{Name: "win-n", Ready: true}, {Name: "win-x"}}}))
	assert.Equal(t, "", steps.NewNode(event.Setup{}))
	st := event.Setup{Hosts: hosts, RuntimeClass: "windows-10-0-20348"}
	assert.Equal(t, request.SmokeTest{Node: "win-b-10", RuntimeClass: "windows-10-0-20348", Timeout: 5}, steps.Answers{SmokeTimeout: 5}.SmokeTestPod(st))
	assert.Equal(t, request.SetupSummary{Node: "win-b-10", Files: []string{"/k"}}, steps.Summary(st, []string{"/k"}))
}
