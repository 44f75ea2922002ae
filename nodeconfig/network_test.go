package nodeconfig

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/nodeconfig/conformance"
)

// The inputs of testdata/wmco-11/network-conf (its inputs.txt): what the host and the cluster gave WMCO's
// network-conf.ps1.
var networkConfInputs = struct {
	cni       CNINetwork
	kubeProxy KubeProxyInputs
}{
	cni: CNINetwork{Subnet: "127.0.64.0/24", ProviderAddress: "127.0.0.5", ServiceNetwork: "172.30.0.0/16"},
	kubeProxy: KubeProxyInputs{NodeName: "ip-127-0-0-5.ec2.internal", ClusterCIDR: "127.0.64.0/24", Kubeconfig: KubeconfigPath,
		Verbosity: "0", SourceVIP: "127.0.64.2"},
}

func readNetworkConf(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(conformance.Dir(), "network-conf", name))
	require.NoError(t, err)
	return b
}

// cni.conf is WMCO's field by field, and byte for byte once the whitespace between JSON tokens is taken out
// (so the keys are in WMCO's order too); like the script's, it has LF line ends and no final newline.
func TestCNIConfigConformsToWMCO11(t *testing.T) {
	wmco := readNetworkConf(t, "cni.conf")
	ours, err := CNIConfig(networkConfInputs.cni)
	require.NoError(t, err)
	found, err := conformance.CompareJSON("network-conf/cni.conf", wmco, ours)
	require.NoError(t, err)
	judge(t, []string{"network-conf/cni.conf"}, found)

	var a, b bytes.Buffer
	require.NoError(t, json.Compact(&a, wmco))
	require.NoError(t, json.Compact(&b, ours))
	assert.Equal(t, a.String(), b.String(), "the same JSON tokens in the same order")
	assert.NotContains(t, string(ours), "\r")
	assert.False(t, strings.HasSuffix(string(ours), "\n"), "no final newline, as Set-Content -NoNewline writes it")
}

// kube-proxy.conf holds WMCO's settings field by field (kube-proxy reads it as a KubeProxyConfiguration, so
// key order and quoting do not matter); LF line ends and no final newline.
func TestKubeProxyConfigConformsToWMCO11(t *testing.T) {
	wmco, err := yaml.YAMLToJSON(readNetworkConf(t, "kube-proxy.conf"))
	require.NoError(t, err)
	rendered, err := KubeProxyConfig(networkConfInputs.kubeProxy)
	require.NoError(t, err)
	ours, err := yaml.YAMLToJSON(rendered)
	require.NoError(t, err)
	found, err := conformance.CompareJSON("network-conf/kube-proxy.conf", wmco, ours)
	require.NoError(t, err)
	judge(t, []string{"network-conf/kube-proxy.conf"}, found)
	assert.NotContains(t, string(rendered), "\r")
	assert.False(t, strings.HasSuffix(string(rendered), "\n"))
}

// The node's own subnet, not the cluster-wide hybrid network, is kube-proxy's cluster CIDR, and the source VIP
// is required: a real kube-proxy on an overlay network exits without one.
func TestNetworkConfigRefusesWhatKubeProxyAndHNSCannotUse(t *testing.T) {
	in := networkConfInputs.kubeProxy
	in.SourceVIP = ""
	_, err := KubeProxyConfig(in)
	assert.ErrorContains(t, err, "source VIP")
	in = networkConfInputs.kubeProxy
	in.ClusterCIDR = ""
	_, err = KubeProxyConfig(in)
	assert.ErrorContains(t, err, "hybrid overlay subnet")
	n := networkConfInputs.cni
	n.ProviderAddress = ""
	_, err = CNIConfig(n)
	assert.ErrorContains(t, err, "management IP")
	n = networkConfInputs.cni
	n.Subnet = "nonsense"
	_, err = CNIConfig(n)
	assert.ErrorContains(t, err, "subnet")
}
