package contract_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/nodeconfig/contract"
)

func wmcoAWS(t *testing.T) contract.Data {
	t.Helper()
	d, err := contract.Parse("windows-services-11.0.0", wmcoData(t, "aws"))
	require.NoError(t, err)
	return d
}

func node(annotations map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-127-0-0-8.ec2.internal", Annotations: annotations}}
}

func service(t *testing.T, d contract.Data, name string) contract.Service {
	t.Helper()
	s, ok := d.Service(name)
	require.True(t, ok, name)
	return s
}

// The kubelet's command gets its pre-scripts' outputs (trimmed, as WICD trims them).
func TestResolveFillsPreScriptVariables(t *testing.T) {
	kubelet := service(t, wmcoAWS(t), "kubelet")
	got, err := contract.Resolve(kubelet, nil, map[string]string{"HOSTNAME_OVERRIDE": "ip-127-0-0-8.ec2.internal\r\n", "NODE_IP": " 127.0.0.8\n"})
	require.NoError(t, err)
	assert.Contains(t, got, " --hostname-override=ip-127-0-0-8.ec2.internal --node-ip=127.0.0.8 ")
	assert.NotContains(t, got, "HOSTNAME_OVERRIDE")
	assert.NotContains(t, got, "NODE_IP")
}

// A node variable comes from the Node object by its JSON path.
func TestResolveFillsNodeVariables(t *testing.T) {
	ho := service(t, wmcoAWS(t), "hybrid-overlay-node")
	got, err := contract.Resolve(ho, node(nil), nil)
	require.NoError(t, err)
	assert.Contains(t, got, `hybrid-overlay-node.exe --node ip-127-0-0-8.ec2.internal --bootstrap-kubeconfig=`)
}

// kube-proxy's pre-script gets the node's name and hybrid-overlay subnet from the Node (an annotation whose
// dots are escaped in the path) and WMCO's literal arguments as they are.
func TestPreScriptCommandsFillNodeArgs(t *testing.T) {
	kp := service(t, wmcoAWS(t), "kube-proxy")
	got, err := contract.PreScriptCommands(kp, node(map[string]string{"k8s.ovn.org/hybrid-overlay-node-subnet": "127.132.1.0/24"}))
	require.NoError(t, err)
	assert.Equal(t, []string{`C:\Temp\network-conf.ps1 -hostnameOverride ip-127-0-0-8.ec2.internal -clusterCIDR 127.132.1.0/24 ` +
		`-kubeConfigPath C:\k\kubeconfig -kubeProxyConfigPath C:\k\kube-proxy.conf -verbosity 0`}, got)
	cmd, err := contract.Resolve(kp, node(nil), nil)
	require.NoError(t, err, "kube-proxy's command itself has no variables; its pre-script has no output variable")
	assert.Equal(t, kp.Command, cmd)
}

// What cannot be resolved is named: the service, the variable and the JSON path or the pre-script.
func TestResolveNamesWhatIsMissing(t *testing.T) {
	d := wmcoAWS(t)
	_, err := contract.PreScriptCommands(service(t, d, "kube-proxy"), node(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `service kube-proxy: variable NODE_SUBNET (from the Node's {.metadata.annotations.k8s\.ovn\.org/hybrid-overlay-node-subnet})`)
	assert.Contains(t, err.Error(), "has no such field")
	var re *contract.ResolveError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, "NODE_SUBNET", re.Variable)

	_, err = contract.Resolve(service(t, d, "hybrid-overlay-node"), nil, nil)
	assert.ErrorContains(t, err, "service hybrid-overlay-node: variable NODE_NAME (from the Node's {.metadata.name}): the Node is not known yet")

	_, err = contract.Resolve(service(t, d, "kubelet"), nil, map[string]string{"NODE_IP": "127.0.0.8"})
	assert.ErrorContains(t, err, "service kubelet: variable HOSTNAME_OVERRIDE (from its pre-script's output): the pre-script has not run on the host (Invoke-RestMethod")

	_, err = contract.Resolve(service(t, d, "kubelet"), nil, map[string]string{"NODE_IP": "127.0.0.8", "HOSTNAME_OVERRIDE": " \r\n"})
	assert.ErrorContains(t, err, "variable HOSTNAME_OVERRIDE (from its pre-script's output): the pre-script printed nothing")
}

// A variable must be exactly one string, as WICD requires.
func TestNodeValueWantsOneString(t *testing.T) {
	n := node(map[string]string{"a": "1"})
	n.Labels = map[string]string{"x": "y"}
	v, err := contract.NodeValue(contract.NodeVariable{Name: "V", NodeObjectJSONPath: "0"}, n)
	require.NoError(t, err)
	assert.Equal(t, "0", v, "plain text is its own value")
	v, err = contract.NodeValue(contract.NodeVariable{Name: "V", NodeObjectJSONPath: `C:\k\kubeconfig`}, n)
	require.NoError(t, err)
	assert.Equal(t, `C:\k\kubeconfig`, v)
	_, err = contract.NodeValue(contract.NodeVariable{Name: "V", NodeObjectJSONPath: "{.metadata.labels}"}, n)
	assert.ErrorContains(t, err, "is a map on Node ip-127-0-0-8.ec2.internal, not a string")
	_, err = contract.NodeValue(contract.NodeVariable{Name: "V", NodeObjectJSONPath: "{.metadata.name}-{.metadata.name}"}, n)
	assert.ErrorContains(t, err, "gives 3 values")
}

// Substitution is one pass: a value containing another variable's name stays as it is, and a longer
// name is not cut by a shorter one.
func TestResolveSubstitutesOnce(t *testing.T) {
	svc := contract.Service{Name: "s", Command: "s.exe --a=NODE_NAME_LONG --b=NODE_NAME",
		NodeVariablesInCommand: []contract.NodeVariable{{Name: "NODE_NAME", NodeObjectJSONPath: "{.metadata.name}"}, {Name: "NODE_NAME_LONG", NodeObjectJSONPath: "{.metadata.annotations.v}"}}}
	got, err := contract.Resolve(svc, node(map[string]string{"v": "NODE_NAME"}), nil)
	require.NoError(t, err)
	assert.Equal(t, "s.exe --a=NODE_NAME --b=ip-127-0-0-8.ec2.internal", got)
}
