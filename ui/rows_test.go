package ui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/theme"
)

var testEnv = rowEnv{Now: fixedNow, Marks: theme.MarksFor(false)}

func TestNodeRows(t *testing.T) {
	rows := nodeRows(fixtureSnapshot(), testEnv, false)
	require.Len(t, rows, 9)
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Key] = r
	}
	cases := []struct {
		node string
		want []string
	}{
		{"ip-127-0-17-41.us-east-2.compute.internal", []string{"ip-127-0-17-41.us-east-2.compute.internal", "Ready", "Windows", "10.0.20348", "worker", "10.20.0-bc9a7b1", "", "127.0.17.41", "5d"}},
		{"ip-127-0-23-188.us-east-2.compute.internal", []string{"ip-127-0-23-188.us-east-2.compute.internal", "NotReady", "Windows", "10.0.20348", "worker", "10.20.0-bc9a7b1", "", "127.0.23.188", "3h"}},
		{"ip-127-0-45-7.us-east-2.compute.internal", []string{"ip-127-0-45-7.us-east-2.compute.internal", "Ready", "Windows", "10.0.20348", "worker", "⚠ 10.19.1-0f3c2d4", "", "127.0.45.7", "2d"}},
		{"win-byoh-01.corp.example.com", []string{"win-byoh-01.corp.example.com", "Ready", "Windows", "10.0.17763", "worker", "10.20.0-bc9a7b1", "yes", "127.168.50.21", "40d"}},
		{"ip-127-0-1-100.us-east-2.compute.internal", []string{"ip-127-0-1-100.us-east-2.compute.internal", "Ready", "Linux", "", "control-plane,master", "", "", "127.0.1.100", "6d"}},
		{"ip-127-0-60-12.us-east-2.compute.internal", []string{"ip-127-0-60-12.us-east-2.compute.internal", "Ready,SchedulingDisabled", "Linux", "", "worker", "", "", "127.0.60.12", "6d"}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, byName[c.node].Cells, c.node)
	}
	assert.Equal(t, toneBad, byName["ip-127-0-23-188.us-east-2.compute.internal"].tone(1), "NotReady is flagged")
	assert.Equal(t, toneWarn, byName["ip-127-0-45-7.us-east-2.compute.internal"].tone(5), "drift is flagged")
	assert.Equal(t, toneWarn, byName["ip-127-0-60-12.us-east-2.compute.internal"].tone(1), "cordoned is flagged")

	for i, r := range rows {
		assert.Equal(t, i < 4, r.Cells[2] == "Windows", "Windows nodes come first (row %d)", i)
	}
	windows := nodeRows(fixtureSnapshot(), testEnv, true)
	assert.Len(t, windows, 4)
	for _, r := range windows {
		assert.Equal(t, "Windows", r.Cells[2])
	}
	ascii := nodeRows(fixtureSnapshot(), rowEnv{Now: fixedNow, Marks: theme.MarksFor(true)}, true)
	assert.Equal(t, "! 10.19.1-0f3c2d4", ascii[2].Cells[5], "ASCII drift mark")
	assert.Nil(t, nodeRows(nil, testEnv, false))
}

func TestNodeStatus(t *testing.T) {
	cases := []struct {
		status      model.NodeStatus
		cordoned    bool
		want        string
		wantTone    Tone
		description string
	}{
		{model.NodeReady, false, "Ready", toneGood, "ready"},
		{model.NodeReady, true, "Ready,SchedulingDisabled", toneWarn, "cordoned"},
		{model.NodeNotReady, true, "NotReady,SchedulingDisabled", toneBad, "not ready and cordoned"},
		{model.NodeUnknown, false, "NotReady", toneBad, "kubelet stopped reporting: NotReady, as oc get nodes says"},
		{model.NodeUnknown, true, "NotReady,SchedulingDisabled", toneBad, "unreachable and cordoned"},
		{model.NodeNoStatus, false, "Unknown", toneBad, "no Ready condition yet"},
	}
	for _, c := range cases {
		got, tone := nodeStatus(&model.NodeInfo{Status: c.status, Unschedulable: c.cordoned})
		assert.Equal(t, c.want, got, c.description)
		assert.Equal(t, c.wantTone, tone, c.description)
	}
}

func TestMachineSetRows(t *testing.T) {
	snap := fixtureSnapshot()
	collapsed := machineSetRows(snap, testEnv, nil, false)
	require.Len(t, collapsed, 4)
	assert.Equal(t, []string{winMachineSet("a"), "2", "2", "1", "1", "Windows", "AWS", "5d"}, collapsed[0].Cells)
	assert.Equal(t, "Linux", collapsed[2].Cells[5])
	assert.Equal(t, toneWarn, collapsed[0].tone(3), "fewer ready than desired")

	key := machineSetKey(&snap.MachineSets[0])
	expanded := machineSetRows(snap, testEnv, map[string]bool{key: true}, false)
	require.Len(t, expanded, 6)
	for _, child := range expanded[1:3] {
		assert.Equal(t, key, child.Parent)
		assert.True(t, child.Span)
		assert.True(t, strings.HasPrefix(child.Cells[0], "   ↳ "+winMachineSet("a")+"-"), child.Cells[0])
	}
	assert.Contains(t, expanded[1].Cells[0], "Running")
	assert.Contains(t, expanded[1].Cells[0], "node: ip-127-0-17-41.us-east-2.compute.internal")
	assert.Contains(t, expanded[2].Cells[0], "Provisioned")
	assert.Equal(t, winMachineSet("b"), expanded[3].Cells[0], "the next MachineSet follows its Machines")
}

// topLevel keeps the rows that are not nested under another.
func topLevel(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.Parent == "" {
			out = append(out, r)
		}
	}
	return out
}

func TestSecretRows(t *testing.T) {
	rows := topLevel(secretRows(fixtureSnapshot(), testEnv))
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"cloud-private-key", "yes", "ssh-rsa 4096 bits SHA256:Vq3kV0mW2j8b4yq5bQ8n1h5Zl6Zt2s0Jx3cJ9m1N4aE", "ok"}, rows[0].Cells)
	assert.Equal(t, "key matches cloud-private-key", rows[1].Cells[3])
	assert.Equal(t, []string{"pull-secret", "yes", "4 registries: cloud.openshift.com, mirror.corp.example.com:5000, quay.io, registry.redhat.io", "ok"}, rows[2].Cells)

	cases := []struct {
		name    string
		secrets model.SecretsInfo
		row     int
		status  string
		tone    Tone
	}{
		{"missing key says how to create it", model.SecretsInfo{}, 0, "oc create secret generic cloud-private-key", toneBad},
		{"weak key warns", model.SecretsInfo{PrivateKey: model.KeyInfo{Present: true, Type: "ssh-rsa", Bits: 1024, Warning: "weak key: RSA 1024 bits"}}, 0, "weak key", toneWarn},
		{"unparsable key", model.SecretsInfo{PrivateKey: model.KeyInfo{Present: true, Problem: "key is passphrase-protected"}}, 0, "passphrase-protected", toneBad},
		{"user data for another key", model.SecretsInfo{PrivateKey: model.KeyInfo{Present: true}, UserData: model.UserDataInfo{Present: true}}, 1, "does not match", toneBad},
		{"user data without key to compare", model.SecretsInfo{UserData: model.UserDataInfo{Present: true}}, 1, "cannot compare", toneWarn},
		{"missing pull secret", model.SecretsInfo{}, 2, "missing", toneBad},
	}
	for _, c := range cases {
		snap := &model.Snapshot{Secrets: c.secrets}
		r := topLevel(secretRows(snap, testEnv))[c.row]
		assert.Contains(t, r.Cells[3], c.status, c.name)
		assert.Equal(t, c.tone, r.tone(3), c.name)
	}
}

// TestSecretRowsComparePubKeyHashesAndMirrorCredentials: under the key, each Windows node says whether
// its pub-key-hash is the key's (and what WMCO does when not); under the pull secret, each mirror registry
// whether the pull secret has credentials for it. No credential ever appears.
func TestSecretRowsComparePubKeyHashesAndMirrorCredentials(t *testing.T) {
	snap := withKeyHashes(fixtureSnapshot())
	rows := secretRows(snap, testEnv)
	byKey := map[string]Row{}
	for _, r := range rows {
		byKey[r.Key] = r
	}
	match := byKey["cloud-private-key/ip-127-0-17-41.us-east-2.compute.internal"]
	assert.Contains(t, match.Cells[0], "pub-key-hash matches the key")
	assert.Equal(t, toneGood, match.tone(0))
	byoh := byKey["cloud-private-key/win-byoh-01.corp.example.com"]
	assert.Contains(t, byoh.Cells[0], "pub-key-hash differs: WMCO reconfigures this host")
	assert.Equal(t, toneWarn, byoh.tone(0))

	snap.Nodes[0].Annotations[config.PubKeyHashAnnotation] = "beef"
	rows = secretRows(snap, testEnv)
	for _, r := range rows {
		if r.Key == "cloud-private-key/"+snap.Nodes[0].Name {
			assert.Contains(t, r.Cells[0], "WMCO deletes this Machine and creates a new one", "a Machine-backed node with another key")
			assert.Equal(t, toneBad, r.tone(0))
		}
	}

	withCreds := byKey["pull-secret/mirror.corp.example.com:5000/ocp/release"]
	assert.Contains(t, withCreds.Cells[0], "credentials: yes")
	without := byKey["pull-secret/backup.corp.example.com/ocp/release"]
	assert.Contains(t, without.Cells[0], "credentials: none")
	assert.Equal(t, toneWarn, without.tone(0))
	for _, r := range rows {
		assert.Equal(t, r.Parent == "", r.Key == "cloud-private-key" || r.Key == "windows-user-data" || r.Key == "pull-secret", r.Key)
	}

	m := newTestModel(snap)
	assert.Contains(t, screen(m), "3 Secrets (3)", "a tab count like the others: the secrets present")
	snap.Secrets.PullSecret = false
	m = newTestModel(snap)
	assert.Contains(t, screen(m), "3 Secrets (2)")
}

func TestMirrorRows(t *testing.T) {
	rows := mirrorRows(fixtureSnapshot(), testEnv)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"quay.io/openshift-release-dev/ocp-release → mirror.corp.example.com:5000/ocp/release, backup.corp.example.com/ocp/release",
		"IDMS", "AllowContactingSource", "release-mirrors"}, rows[0].Cells)
	assert.Equal(t, "NeverContactSource", rows[1].Cells[2])
	assert.Equal(t, "ITMS", rows[2].Cells[1])
	ascii := mirrorRows(fixtureSnapshot(), rowEnv{Marks: theme.MarksFor(true)})
	assert.True(t, strings.HasPrefix(ascii[2].Cells[0], "mcr.microsoft.com/windows/servercore -> mirror"))
}
