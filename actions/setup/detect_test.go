package setup_test

import (
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/setup"
	"github.com/wmcon/wmcon/actions/setup/steps"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// usableKey is a key state with a usable cloud-private-key.
var usableKey = cluster.KeyState{Key: &sshkey.Info{Type: "ssh-ed25519", Bits: 256, Fingerprint: "SHA256:abc"}}

func TestDetectSetupDecidesEachStepFromTheClusterAlone(t *testing.T) {
	healthy := diagnosis.Report{Checks: []diagnosis.Check{{ID: "network-type", Title: "Cluster network type", Status: diagnosis.CheckOK},
		// failing checks the setup's own steps fix do not block the check step
		{ID: "wmco", Title: "WMCO", Status: diagnosis.CheckWarn}, {ID: "private-key", Title: "SSH key", Status: diagnosis.CheckFail, Detail: "missing"}}}
	readyNode := model.NodeInfo{Name: "win-a", Windows: true, Status: model.NodeReady, WindowsBuild: "10.0.20348", InternalIP: "127.0.0.5",
		WMCOVersion: "wmcon-payload-0123456789ab", Created: time.Now()}

	t.Run("a blocking doctor failure stops at the check step with what to do", func(t *testing.T) {
		rep := diagnosis.Report{Checks: []diagnosis.Check{{ID: "network-type", Title: "Cluster network type", Status: diagnosis.CheckFail,
			Detail: "network type OpenShiftSDN cannot carry Windows nodes", Fix: "migrate to OVNKubernetes"}}}
		s := setup.DetectSetup(setup.SetupInputs{Doctor: rep, Key: usableKey})
		assert.Equal(t, event.SetupCheck, s.Next)
		c := s.Step(event.SetupCheck)
		assert.False(t, c.Done)
		assert.Contains(t, c.Blocking, "1 doctor check fail: Cluster network type: network type OpenShiftSDN cannot carry Windows nodes")
		assert.Equal(t, []string{"✗ Cluster network type: network type OpenShiftSDN cannot carry Windows nodes — migrate to OVNKubernetes"}, c.Evidence)
		assert.Equal(t, "run wmcon doctor and fix what each failing check says", c.Hint)
	})
	t.Run("standalone is evident from a node wmcon configured without an operator", func(t *testing.T) {
		s := setup.DetectSetup(setup.SetupInputs{Doctor: healthy, Key: usableKey,
			Facts: cluster.SetupFacts{Platform: configv1.NonePlatformType, Nodes: []model.NodeInfo{readyNode}}})
		assert.Equal(t, event.ModeStandalone, s.Mode)
		assert.False(t, s.MachineSets)
		assert.Equal(t, event.SetupWorkloads, s.Next)
		assert.True(t, s.Step(event.SetupMachines).Done, "standalone: the node is the machine")
		assert.Equal(t, "10.0.20348", s.Build)
	})
	t.Run("without an operator or such a node, the mode is asked for", func(t *testing.T) {
		n := readyNode
		n.WMCOVersion = ""
		s := setup.DetectSetup(setup.SetupInputs{Doctor: healthy, Key: usableKey, Facts: cluster.SetupFacts{Nodes: []model.NodeInfo{n}}})
		assert.Equal(t, "", s.Mode)
		assert.Equal(t, event.SetupOperator, s.Next)
	})
	t.Run("a MachineSet without replicas does not count, and says how to scale it", func(t *testing.T) {
		s := setup.DetectSetup(setup.SetupInputs{Doctor: healthy, Key: usableKey, Standalone: true,
			Facts: cluster.SetupFacts{Platform: configv1.AWSPlatformType, MachineSets: []cluster.WindowsMachineSet{{Name: "win-a"}}}})
		m := s.Step(event.SetupMachines)
		assert.False(t, m.Done)
		assert.Equal(t, "the Windows MachineSets have no replicas", m.Blocking)
		assert.Equal(t, "run wmcon machineset scale win-a 1", m.Hint)
	})
	t.Run("a failed Machine blocks the configure step", func(t *testing.T) {
		s := setup.DetectSetup(setup.SetupInputs{Doctor: healthy, Key: usableKey, Standalone: true,
			Facts: cluster.SetupFacts{Platform: configv1.AWSPlatformType, MachineSets: []cluster.WindowsMachineSet{{Name: "win-a", Replicas: 1}},
				Machines: []cluster.WindowsMachine{{Name: "openshift-machine-api/win-a-x", MachineSet: "win-a", Phase: "Failed"}}}})
		assert.Equal(t, event.SetupConfigure, s.Next)
		assert.Contains(t, s.Step(event.SetupConfigure).Blocking, "Machine openshift-machine-api/win-a-x failed")
	})
	t.Run("a missing key names the flags", func(t *testing.T) {
		s := setup.DetectSetup(setup.SetupInputs{Doctor: healthy, Standalone: true})
		assert.Equal(t, event.SetupKey, s.Next)
		assert.Equal(t, "run wmcon setup --key FILE, or run wmcon setup --generate-key --yes", s.Step(event.SetupKey).Hint)
	})
}

// TestDetectionReportsTheDefinedSteps: the detection reports the steps package setup/steps defines, in its
// order and under its titles (configure's as the mode says), so wmcon setup and the wizard show the same.
func TestDetectionReportsTheDefinedSteps(t *testing.T) {
	for _, standalone := range []bool{false, true} {
		s := setup.DetectSetup(setup.SetupInputs{Key: usableKey, Standalone: standalone})
		var ids []event.SetupStepID
		for _, st := range s.Steps {
			ids = append(ids, st.ID)
			assert.Equal(t, steps.Lookup(st.ID).TitleIn(s.Mode), st.Title, "%s (standalone %v)", st.ID, standalone)
		}
		assert.Equal(t, steps.IDs(), ids)
	}
	s := setup.DetectSetup(setup.SetupInputs{Key: usableKey, Standalone: true})
	assert.Equal(t, "Configure the hosts (wmcon configure)", s.Step(event.SetupConfigure).Title)
}
