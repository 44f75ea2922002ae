package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/conformance"
	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// With no cluster (a kubeconfig that does not exist), --render-services prints the services ConfigMap's data
// that wmcon applies without WMCO: it parses as a services ConfigMap, equals the generator's output, and for
// WMCO 11's inputs is WMCO 11's own ConfigMap byte for byte (testdata/wmco-11/services).
func TestRenderServicesPrintsTheContract(t *testing.T) {
	noCluster := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	const api = "https://api-int.example.test:6443"
	for _, p := range []string{"aws", "azure", "none", "nutanix"} {
		t.Run(p, func(t *testing.T) {
			code, out, errOut := runWmcon(t, "--kubeconfig", noCluster, "configure", "--render-services", "--platform", p, "--api-server", api, "-o", "json")
			require.Equal(t, ExitOK, code, errOut)
			var data map[string]string
			require.NoError(t, json.Unmarshal([]byte(out), &data))
			got, err := contract.Parse("render-services", data)
			require.NoError(t, err)
			platform, _ := nodeconfig.CanonicalPlatform(p)
			want, err := nodeconfig.Contract(nodeconfig.ContractInputs{Platform: platform, APIServerURL: api})
			require.NoError(t, err)
			assert.Equal(t, want, got)

			wmco, err := os.ReadFile(filepath.Join(conformance.Dir(), "services", "services-"+p+".json"))
			require.NoError(t, err)
			assert.Equal(t, string(wmco), out, "WMCO 11's ConfigMap for the same inputs")
		})
	}
	code, out, errOut := runWmcon(t, "--kubeconfig", noCluster, "configure", "--render-services", "--platform", "vsphere", "--api-server", api, "--vxlan-port", "9898")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "--hybrid-overlay-vxlan-port 9898")
	assert.Contains(t, out, "HOSTNAME_OVERRIDE = the output of: ")
	assert.Contains(t, out, "kube-proxy (priority 3, after the Node exists, depends on hybrid-overlay-node)")
}

// Bad flags are usage errors (exit 64) that say what to give instead.
func TestRenderServicesRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--render-services", "--platform", "openstack", "--api-server", "https://api-int.example.test:6443"},
			`--platform "openstack" is not a platform wmcon knows: use one of AWS, Azure, GCP, VSphere, Nutanix, BareMetal, None`},
		{[]string{"--render-services", "--api-server", "https://api-int.example.test:6443"}, "--render-services needs --platform: one of AWS, Azure"},
		{[]string{"--render-services", "--platform", "AWS"}, `--api-server "": give the API server's internal URL`},
		{[]string{"--render-services", "--platform", "AWS", "--api-server", "http://api-int.example.test:6443"}, "give the API server's internal URL"},
		{[]string{"--render-services", "--platform", "AWS", "--api-server", "https://api-int.example.test:6443", "--vxlan-port", "70000"}, `--vxlan-port "70000" is not a port number`},
		{[]string{"--render-services", "--platform", "AWS", "--api-server", "https://api-int.example.test:6443", "ip-127-0-0-8.ec2.internal"}, "--render-services reads only --platform"},
		{[]string{"ip-127-0-0-8.ec2.internal", "--platform", "AWS"}, "go with --render-services"},
	} {
		code, _, errOut := runWmcon(t, append([]string{"configure"}, tc.args...)...)
		assert.Equal(t, ExitUsage, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
}

// Issue 24's reproduction: the demo's ip-127-0-0-8 holds the mirror configuration mirrors status calls in
// step; configure --dry-run on it plans neither removing nor rewriting any of it.
func TestConfigureDryRunKeepsTheDemosMirrorFiles(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "mirrors", "status")
	require.Equal(t, ExitCheckFailed, code, "%s\n%s", out, errOut)
	require.Regexp(t, `ip-127-0-0-8\.ec2\.internal +in step`, out, "the node has the cluster's mirror files")

	code, out, errOut = runWmcon(t, "--demo", "configure", "ip-127-0-0-8.ec2.internal", "--dry-run")
	require.Equal(t, ExitOK, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "plan for ip-127-0-0-8.ec2.internal")
	assert.NotContains(t, out, `C:\k\containerd\registries\`, "nothing under the registries directory is removed or rewritten")
}
