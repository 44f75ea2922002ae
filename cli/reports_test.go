package cli

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVersionAndKeyShowPrintJSON: version and key show take -o json as every other report does, and print
// one object of the documented shape (issue 25 item 10).
func TestVersionAndKeyShowPrintJSON(t *testing.T) {
	code, out, errOut := runWmcon(t, "version", "-o", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var v versionInfo
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.Equal(t, versionInfo{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}, v)

	code, out, errOut = runWmcon(t, "--demo", "key", "show", "-o", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var k keyReport
	require.NoError(t, json.Unmarshal([]byte(out), &k), out)
	assert.True(t, k.CloudPrivateKey.Present)
	assert.Equal(t, "cloud-private-key", k.CloudPrivateKey.Name)
	assert.Regexp(t, `^SHA256:`, k.CloudPrivateKey.Fingerprint)
	require.NotNil(t, k.UserData.MatchesCloudPrivateKey, out)
	assert.True(t, *k.UserData.MatchesCloudPrivateKey, "the demo's user data authorizes its key")
	assert.NotContains(t, out, "PRIVATE KEY", "never the key itself")

	code, _, errOut = runWmcon(t, "version", "-o", "yaml")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, `--output "yaml": use text or json`)
}

// TestMachineSetGenerateOutputJSON: machineset generate -o json prints the MachineSet as JSON (it used to
// print YAML, -o being the --apply events' format), -o yaml as YAML, and --format and -o that disagree are a
// usage error.
func TestMachineSetGenerateOutputJSON(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "machineset", "generate", "--image", "ami-0windows2022", "-o", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var ms struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ms), out)
	assert.Equal(t, "MachineSet", ms.Kind)
	assert.NotEmpty(t, ms.Metadata.Name)

	code, out, _ = runWmcon(t, "--demo", "machineset", "generate", "--image", "ami-0windows2022", "-o", "yaml")
	require.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "apiVersion: machine.openshift.io/v1beta1\n"), out)

	code, _, errOut = runWmcon(t, "--demo", "machineset", "generate", "--image", "ami-1", "-o", "json", "--format", "yaml")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "--format yaml and --output json disagree")
}

// TestOperatorStatusIsAReport: operator status prints a report, not events: its summary first (never
// "SUCCEEDED WMCO is not installed"), and with -o json one object whose absent objects are null. The demo's
// installed operator has the OperatorGroup and Subscription an OLM install leaves (issue 25 items 9, 10).
func TestOperatorStatusIsAReport(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo=fresh", "operator", "status")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.True(t, strings.HasPrefix(out, "WMCO is not installed"), out)
	assert.NotContains(t, out, "SUCCEEDED")

	code, out, errOut = runWmcon(t, "--demo=fresh", "operator", "status", "-o", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var none map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &none), "one JSON object, not a stream: %s", out)
	assert.Equal(t, false, none["installed"])
	assert.Contains(t, none, "subscription")
	assert.Nil(t, none["subscription"])

	code, out, errOut = runWmcon(t, "--demo", "operator", "status", "-o", "json")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var r operatorReport
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	assert.True(t, r.Installed)
	assert.Equal(t, "11.0.1", r.Version)
	require.NotNil(t, r.OperatorGroup, "an OLM install has its OperatorGroup")
	require.NotNil(t, r.Subscription, "and its Subscription")
	assert.Equal(t, "windows-machine-config-operator.v11.0.1", r.Subscription.InstalledCSV)
	require.NotNil(t, r.Deployment)
	assert.True(t, r.Deployment.Available)
	assert.Len(t, r.Pods, 1)
	assert.Len(t, r.Log, 15)

	code, out, _ = runWmcon(t, "--demo", "operator", "status")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "missing", "nothing of an installed operator is missing")
}

// TestBYOHListHasAHeaderAndTheNode: byoh list prints a header, as oc get does, and the node each address
// became (issue 25 item 10); -o json carries the user and the node too.
func TestBYOHListHasAHeaderAndTheNode(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "byoh", "list")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	assert.Equal(t, []string{"ADDRESS", "USER", "NODE", "PROBLEM"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"127.0.0.5", "Administrator", "ip-127-0-0-5.ec2.internal", "-"}, strings.Fields(lines[1]))

	code, out, _ = runWmcon(t, "--demo", "byoh", "list", "-o", "json")
	require.Equal(t, 0, code)
	assert.JSONEq(t, `[{"address":"127.0.0.5","value":"username=Administrator","user":"Administrator","node":"ip-127-0-0-5.ec2.internal"}]`, out)
}
