package hoststep

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/contract"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/sim/windows"
)

const serviceNetwork = "172.30.0.0/16"

// simHost starts a simulated host and returns it with a client logged in to it over SSH.
func simHost(t *testing.T, opts windows.Options) (*windows.Host, *remote.Client) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	opts.AuthorizedKeys = []ssh.PublicKey{signer.PublicKey()}
	opts.LogInterval, opts.ServicePending = time.Hour, 20*time.Millisecond
	h, err := windows.Start(opts)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	pool, err := remote.NewPool(remote.Config{Auth: remote.Auth{KeyPEM: pem.EncodeToMemory(block), KeyPEMName: "test key"},
		HostKeys: remote.NewKnownHostsStore(filepath.Join(t.TempDir(), "known_hosts")), KeepaliveInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { pool.Close() })
	c, err := pool.Client(remote.Target{Addr: h.Addr()})
	require.NoError(t, err)
	return h, c
}

// networkHost is a configured host whose hybrid-overlay-node runs (so its HNS network exists) and which has
// WMCO's hns.psm1, before the network step ran.
func networkHost(t *testing.T, addr string) (*windows.Host, *remote.Client) {
	h, c := simHost(t, windows.Options{Configured: true, Addr: addr, Platform: "AWS"})
	require.NoError(t, h.WriteFile(nodeconfig.HNSModulePath, []byte("# hns.psm1\n")))
	require.Eventually(t, func() bool { return h.ServiceRunning("hybrid-overlay-node") }, 10*time.Second, 10*time.Millisecond)
	// As before WMCO's network step ran: no VIP endpoint, no CNI or kube-proxy configuration.
	h.RemoveHNSEndpoint(nodeconfig.VIPEndpointName)
	require.NoError(t, h.RemoveFile(nodeconfig.CNIConfPath))
	require.NoError(t, h.RemoveFile(nodeconfig.KubeProxyConfPath))
	return h, c
}

// awsContract is wmcon's contract for an AWS cluster, as a host gets it.
func awsContract(t *testing.T) contract.Data {
	d, err := nodeconfig.Contract(nodeconfig.ContractInputs{Platform: "AWS", APIServerURL: "https://api-int.example.test:6443"})
	require.NoError(t, err)
	return d
}

// nodeWithSubnet is the Node as the cluster has it once the hybrid overlay gave it its subnet.
func nodeWithSubnet(name, subnet string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{config.HybridOverlaySubnet: subnet}}}
}

// kube-proxy's pre-script leaves the host as WMCO's network-conf.ps1 does: the VIP endpoint created and
// attached, cni.conf for the host's HNS network and kube-proxy.conf with the endpoint's address; a second
// run (WMCO's node daemon runs it every reconcile) changes nothing.
func TestKubeProxyPreScriptConfiguresTheNetworkAsWMCOs(t *testing.T) {
	h, c := networkHost(t, "127.0.0.51:0")
	ctx := context.Background()
	kp, ok := awsContract(t).Service("kube-proxy")
	require.True(t, ok)
	const nodeName = "ip-127-0-0-51.ec2.internal"
	node := nodeWithSubnet(nodeName, h.HybridOverlaySubnet())
	opts := Options{ServiceNetwork: serviceNetwork}

	cmd, err := Resolve(ctx, c, kp, node, opts)
	require.NoError(t, err)
	assert.Equal(t, kp.Command, cmd, "kube-proxy's command has no variables: its settings are in the file")

	eps := h.HNSEndpoints()
	require.Len(t, eps, 1)
	assert.Equal(t, nodeconfig.VIPEndpointName, eps[0].Name)
	assert.Equal(t, 1, eps[0].Compartment, "attached to the host")
	network, ok := h.HNSNetworkInfo(nodeconfig.HybridOverlayNetwork)
	require.True(t, ok)
	assert.Equal(t, network.ID, eps[0].NetworkID)

	wantCNI, err := nodeconfig.CNIConfig(nodeconfig.CNINetwork{Subnet: network.Subnet, ProviderAddress: network.ManagementIP, ServiceNetwork: serviceNetwork})
	require.NoError(t, err)
	gotCNI, err := h.ReadFile(nodeconfig.CNIConfPath)
	require.NoError(t, err)
	assert.Equal(t, string(wantCNI), string(gotCNI))
	wantKP, err := nodeconfig.KubeProxyConfig(nodeconfig.KubeProxyInputs{NodeName: nodeName, ClusterCIDR: h.HybridOverlaySubnet(),
		Kubeconfig: nodeconfig.KubeconfigPath, Verbosity: "0", SourceVIP: eps[0].IP})
	require.NoError(t, err)
	gotKP, err := h.ReadFile(nodeconfig.KubeProxyConfPath)
	require.NoError(t, err)
	assert.Equal(t, string(wantKP), string(gotKP))
	assert.Contains(t, string(gotKP), "sourceVip: "+eps[0].IP)

	// The script compares without carriage returns: a file that differs only by them is left alone.
	require.NoError(t, h.WriteFile(nodeconfig.CNIConfPath, []byte(strings.ReplaceAll(string(wantCNI), "\n", "\r\n"))))
	res, err := ConfigureNetwork(ctx, c, NetworkArgs{NodeName: nodeName, ClusterCIDR: h.HybridOverlaySubnet(), Kubeconfig: nodeconfig.KubeconfigPath, Verbosity: "0"}, opts)
	require.NoError(t, err)
	assert.Equal(t, NetworkResult{Network: res.Network, Endpoint: res.Endpoint, SourceVIP: eps[0].IP}, res, "nothing created or written the second time")
	assert.Len(t, h.HNSEndpoints(), 1)
}

// Without the hybrid overlay's HNS network (hybrid-overlay-node not running yet) the step waits as the script
// does, then fails with the script's reason; kube-proxy is not configured.
func TestNetworkStepWaitsForTheHybridOverlayNetwork(t *testing.T) {
	h, c := simHost(t, windows.Options{Addr: "127.0.0.52:0"})
	require.NoError(t, h.WriteFile(nodeconfig.HNSModulePath, []byte("# hns.psm1\n")))
	_, err := ConfigureNetwork(context.Background(), c, NetworkArgs{NodeName: "n", ClusterCIDR: h.HybridOverlaySubnet(), Kubeconfig: nodeconfig.KubeconfigPath},
		Options{ServiceNetwork: serviceNetwork, NetworkTries: 3, NetworkDelay: 10 * time.Millisecond})
	assert.ErrorContains(t, err, "cannot find HNS network with name OVNKubernetesHybridOverlayNetwork after 3 tries")
	assert.False(t, h.Exists(nodeconfig.KubeProxyConfPath))
	assert.False(t, h.Exists(nodeconfig.CNIConfPath))
}

// kube-proxy's pre-script reads the node's hybrid overlay subnet from its Node: until the cluster gave it one
// the pre-script cannot run, and the error names the variable.
func TestKubeProxyPreScriptNeedsTheNodesSubnet(t *testing.T) {
	_, c := networkHost(t, "127.0.0.53:0")
	kp, _ := awsContract(t).Service("kube-proxy")
	_, err := Outputs(context.Background(), c, kp, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, Options{ServiceNetwork: serviceNetwork})
	var re *contract.ResolveError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, nodeconfig.NodeSubnetVar, re.Variable)
}

// The bootstrap services' pre-scripts, run on an AWS host before its Node exists: the kubelet's name is the
// instance metadata's local-hostname (what AWS's cloud provider expects, not the host's EC2AMAZ- name), its
// address the default route's; containerd's pre-script excludes it from Defender.
func TestBootstrapPreScriptsOnAnAWSHost(t *testing.T) {
	h, c := simHost(t, windows.Options{Platform: "AWS", Addr: "127.0.0.54:0"})
	ctx := context.Background()
	data := awsContract(t)
	out, err := AllOutputs(ctx, c, data.Bootstrap(), nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]string{
		"containerd": {},
		"kubelet":    {nodeconfig.HostnameOverrideVar: "ip-127-0-0-54.ec2.internal", nodeconfig.NodeIPVar: "127.0.0.54"},
	}, out)
	assert.Equal(t, []string{`C:\k\containerd\containerd.exe`}, h.DefenderExclusions())
	kubelet, _ := data.Service("kubelet")
	cmd, err := contract.Resolve(kubelet, nil, out["kubelet"])
	require.NoError(t, err)
	assert.Contains(t, cmd, "--hostname-override=ip-127-0-0-54.ec2.internal --node-ip=127.0.0.54")

	name, err := NodeName(ctx, c, data, Options{})
	require.NoError(t, err)
	assert.Equal(t, "ip-127-0-0-54.ec2.internal", name)
	assert.NotEqual(t, strings.ToLower(h.Hostname()), name)
}

// Where the cloud provider takes the host's own name (no HOSTNAME_OVERRIDE pre-script), the node is named
// after the host; a host without Defender gets no exclusion and no error.
func TestNodeNameWithoutOverride(t *testing.T) {
	h, c := simHost(t, windows.Options{Platform: "None", Hostname: "WIN-BM-7", NoDefender: true})
	data, err := nodeconfig.Contract(nodeconfig.ContractInputs{Platform: "None", APIServerURL: "https://api-int.example.test:6443"})
	require.NoError(t, err)
	name, err := NodeName(context.Background(), c, data, Options{})
	require.NoError(t, err)
	assert.Equal(t, "win-bm-7", name)
	containerd, _ := data.Service("containerd")
	_, err = Outputs(context.Background(), c, containerd, nil, Options{})
	require.NoError(t, err)
	assert.Empty(t, h.DefenderExclusions())
}

// GCP names its instances by the metadata server's host name, shortened as GCP shortens one over 63
// characters.
func TestGCPHostname(t *testing.T) {
	_, c := simHost(t, windows.Options{Platform: "GCP", Hostname: "WIN-G2"})
	name, err := GCPHostname(context.Background(), c)
	require.NoError(t, err)
	assert.Equal(t, "win-g2.c.winsim-project.internal", name)
	long := strings.Repeat("a", 40) + "." + strings.Repeat("b", 30)
	assert.Equal(t, strings.Repeat("a", 40), shortHostname(long))
	assert.Equal(t, strings.Repeat("c", 63), shortHostname(strings.Repeat("c", 70)))
	assert.Equal(t, "short.example", shortHostname("short.example"))
}

// A contract's pre-script that is none of WMCO's scripts runs as written; one that fills a variable but
// prints nothing is refused.
func TestOtherPreScriptsRunAsWritten(t *testing.T) {
	_, c := simHost(t, windows.Options{Hostname: "WIN-X"})
	svc := contract.Service{Name: "custom", Command: "C:\\k\\x.exe --name NAME",
		PowershellPreScripts: []contract.PreScript{{VariableName: "NAME", Path: "hostname"}}}
	cmd, err := Resolve(context.Background(), c, svc, nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, `C:\k\x.exe --name WIN-X`, cmd)
	svc.PowershellPreScripts[0].Path = "[Environment]::GetEnvironmentVariable('NOT_SET', 'Machine')"
	_, err = Resolve(context.Background(), c, svc, nil, Options{})
	assert.ErrorContains(t, err, "printed nothing")
}

// A plan runs only the pre-scripts that fill a variable (they read the host), never those run for their
// effect: no Defender exclusion, no network step, and kube-proxy's script, which needs the Node, is left out
// before the Node exists. Effects runs those, once the Node has what they need.
func TestValuesChangeNothingEffectsDo(t *testing.T) {
	h, c := networkHost(t, "127.0.0.55:0")
	ctx := context.Background()
	data := awsContract(t)
	out, err := Values(ctx, c, data.Services, nil, Options{ServiceNetwork: serviceNetwork})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{nodeconfig.HostnameOverrideVar: "ip-127-0-0-55.ec2.internal", nodeconfig.NodeIPVar: "127.0.0.55"}, out["kubelet"])
	assert.Empty(t, out["containerd"])
	assert.Empty(t, out["kube-proxy"])
	assert.Empty(t, h.DefenderExclusions(), "a plan adds no Defender exclusion")
	assert.Empty(t, h.HNSEndpoints(), "a plan creates no VIP endpoint")

	containerd, _ := data.Service("containerd")
	kp, _ := data.Service("kube-proxy")
	assert.False(t, EffectsNeedNode(containerd))
	assert.True(t, EffectsNeedNode(kp))
	_, err = EffectCommands(kp, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	assert.ErrorContains(t, err, nodeconfig.NodeSubnetVar, "the Node has no hybrid overlay subnet yet")

	require.NoError(t, Effects(ctx, c, containerd, nil, Options{}))
	assert.Equal(t, []string{`C:\k\containerd\containerd.exe`}, h.DefenderExclusions())
	node := nodeWithSubnet("ip-127-0-0-55.ec2.internal", h.HybridOverlaySubnet())
	require.NoError(t, Effects(ctx, c, kp, node, Options{ServiceNetwork: serviceNetwork}))
	require.Len(t, h.HNSEndpoints(), 1)
	assert.True(t, h.Exists(nodeconfig.KubeProxyConfPath))
	assert.True(t, h.Exists(nodeconfig.CNIConfPath))
}

// kube-proxy's network step waits until the Node has its hybrid overlay subnet, then runs; a Node that never
// gets one ends the wait with the variable named.
func TestEffectsWaitForTheNodesValues(t *testing.T) {
	nodePoll = 10 * time.Millisecond
	t.Cleanup(func() { nodePoll = time.Second })
	h, c := networkHost(t, "127.0.0.56:0")
	kp, _ := awsContract(t).Service("kube-proxy")
	reads := 0
	node := func(context.Context) (*corev1.Node, error) {
		reads++
		if reads < 3 {
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, nil
		}
		return nodeWithSubnet("n", h.HybridOverlaySubnet()), nil
	}
	require.NoError(t, EffectsOnceNodeHas(context.Background(), c, kp, node, Options{ServiceNetwork: serviceNetwork}))
	assert.Equal(t, 3, reads)
	assert.True(t, h.Exists(nodeconfig.KubeProxyConfPath))

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	never := func(context.Context) (*corev1.Node, error) {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, nil
	}
	err := EffectsOnceNodeHas(ctx, c, kp, never, Options{ServiceNetwork: serviceNetwork})
	assert.ErrorContains(t, err, "waited for its Node in vain")
	assert.ErrorContains(t, err, nodeconfig.NodeSubnetVar)
}
