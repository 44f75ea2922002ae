package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/contract"
	"github.com/wmcon/wmcon/sim/cloudprovider"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// wmcon configures an AWS host as WMCO does, end to end with no allowance from the simulator: a real API
// server and controller manager on an OpenShift-on-AWS cluster, OVN-Kubernetes' hybrid overlay (its subnets,
// hybrid-overlay-node's HNS networks) and AWS's cloud controller stand-ins, and a host over real SSH that
// answers to its NetBIOS name (EC2AMAZ-…) and serves AWS instance metadata. The node takes the metadata's
// local-hostname (the cloud controller finds it and initializes it), the kubelet waits out containerd's pipe,
// and WMCO's network step leaves the VIP endpoint, cni.conf and kube-proxy.conf (with the source VIP and the
// node's subnet) so kube-proxy runs and the node is Ready with pod networking. A re-run changes nothing.
func TestConfigureAWSHostAsWMCODoes(t *testing.T) {
	server := kubeapi.Start(t, kubeapi.WithControllerManager())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := cluster.NewClients(server.AdminConfig())
	require.NoError(t, err)
	seedOpenShiftAWS(t, ctx, c, server.AdminConfig().Host)
	kube := kubernetes.NewForConfigOrDie(server.AdminConfig())

	const ip, want = "127.0.0.84", "ip-127-0-0-84.ec2.internal"
	cloud := &cloudprovider.NodeController{Kube: kube}
	cloud.AddInstance(cloudprovider.Instance{Name: want, ProviderID: "aws:///us-east-2a/i-0aws84"})
	simCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{}, 1)
	go func() { cloud.Run(simCtx, 200*time.Millisecond); done <- struct{}{} }()
	t.Cleanup(func() { stop(); <-done })

	b := newBareHosts(t)
	b.overlay(kube)
	host := b.startOpts("EC2AMAZ-K7Q2P1A", ip, windows.Options{Platform: "AWS", Programs: map[string]windows.Program{
		"kubelet.exe": kubelet.Kubelet(kubelet.KubeletOptions{})}})
	admin := server.Kubeconfig("wmcon-aws", "system:masters")

	code, out, errOut := runWmcon(t, b.args(admin, "configure", "--address", ip, "--payload", b.payloadDir, "--dry-run")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "plan for "+want+" ("+ip+")", "named as AWS's cloud provider knows the instance")
	assert.Contains(t, out, `C:\k\kube-proxy.exe --config C:\k\kube-proxy.conf --windows-service`)
	assert.Contains(t, out, `first its pre-script: C:\Temp\network-conf.ps1`)
	assert.NotContains(t, out, "not yet WMCO's command line: its pre-script")
	assert.False(t, host.Exists(`C:\k`), "a dry run writes nothing")
	assert.Empty(t, host.DefenderExclusions(), "a dry run runs no pre-script for its effect")

	code, out, errOut = runWmcon(t, b.args(admin, "configure", "--address", ip, "--payload", b.payloadDir,
		"--csr-timeout", "90s", "--ready-timeout", "90s")...)
	require.Equal(t, 0, code, "%s\n%s\nkubelet log:\n%s", out, errOut, kubeletLog(host))

	n, err := kube.CoreV1().Nodes().Get(ctx, want, metav1.GetOptions{})
	require.NoError(t, err, "the node is named by the metadata's local-hostname, not %s", strings.ToLower(host.Hostname()))
	assert.True(t, nodeReady(n), "Ready: the runtime's network is configured")
	assert.Equal(t, "aws:///us-east-2a/i-0aws84", n.Spec.ProviderID, "the cloud controller found its instance")
	for _, taint := range n.Spec.Taints {
		assert.NotEqual(t, cloudprovider.TaintUninitialized, taint.Key)
	}
	subnet := n.Annotations[config.HybridOverlaySubnet]
	require.NotEmpty(t, subnet)

	// WMCO's network step's end state, from the host's own HNS network and endpoint.
	network, ok := host.HNSNetworkInfo(nodeconfig.HybridOverlayNetwork)
	require.True(t, ok)
	assert.Equal(t, subnet, network.Subnet, "hybrid-overlay-node made the network with the node's subnet")
	var vip windows.HNSEndpoint
	for _, e := range host.HNSEndpoints() {
		if e.Name == nodeconfig.VIPEndpointName {
			vip = e
		}
	}
	require.NotEmpty(t, vip.IP, "the VIP endpoint exists")
	assert.Equal(t, 1, vip.Compartment, "attached to the host")
	wantCNI, err := nodeconfig.CNIConfig(nodeconfig.CNINetwork{Subnet: network.Subnet, ProviderAddress: network.ManagementIP, ServiceNetwork: "172.30.0.0/16"})
	require.NoError(t, err)
	gotCNI, err := host.ReadFile(nodeconfig.CNIConfPath)
	require.NoError(t, err)
	assert.Equal(t, string(wantCNI), string(gotCNI))
	wantKP, err := nodeconfig.KubeProxyConfig(nodeconfig.KubeProxyInputs{NodeName: want, ClusterCIDR: subnet, Kubeconfig: nodeconfig.KubeconfigPath,
		Verbosity: "0", SourceVIP: vip.IP})
	require.NoError(t, err)
	gotKP, err := host.ReadFile(nodeconfig.KubeProxyConfPath)
	require.NoError(t, err)
	assert.Equal(t, string(wantKP), string(gotKP))
	assert.Equal(t, []string{`C:\k\containerd\containerd.exe`}, host.DefenderExclusions(), "containerd's Defender pre-script ran")
	assert.True(t, host.Exists(`C:\k\cni\config\ovnkube-client-current.pem`),
		"hybrid-overlay-node runs with its own certificate, requested with the kubelet's kubeconfig")

	time.Sleep(time.Second) // a kube-proxy that refuses its settings exits at once
	assert.True(t, host.ServiceRunning("kube-proxy"), "kube-proxy runs with its source VIP")
	kpLog, _ := host.ReadFile(`C:\var\log\kube-proxy\kube-proxy.log`)
	assert.Contains(t, string(kpLog), `sourceVip="`+vip.IP+`"`)

	before := len(host.Commands())
	code, out, errOut = runWmcon(t, b.args(admin, "configure", "--address", ip, "--payload", b.payloadDir)...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "already configured: nothing changed")
	for _, cmd := range host.Commands()[before:] {
		assert.False(t, hostWrite.MatchString(cmd), "re-run wrote to the host: %s", cmd)
		assert.NotContains(t, cmd, "New-HnsEndpoint", "re-run made another VIP endpoint")
	}

	// With WMCO installed, its windows-services-<version> ConfigMap is the contract: missing, configure stops
	// naming it; present, the host runs WMCO's command lines, here one that differs from wmcon's own.
	t.Run("with WMCO installed", func(t *testing.T) {
		const ip2, want2 = "127.0.0.85", "ip-127-0-0-85.ec2.internal"
		cloud.AddInstance(cloudprovider.Instance{Name: want2, ProviderID: "aws:///us-east-2a/i-0aws85"})
		// containerd opens its pipe late here: the kubelet's first start meets no runtime and exits, and its
		// recovery action (10 s) starts it again; configure waits for that rather than calling it fatal.
		host2 := b.startOpts("EC2AMAZ-M3N4B5C", ip2, windows.Options{Platform: "AWS", ContainerdPipeDelay: 4 * time.Second,
			Programs: map[string]windows.Program{"kubelet.exe": kubelet.Kubelet(kubelet.KubeletOptions{})}})
		ops := cluster.NewOps(c)
		nf, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{DryRun: true})
		require.NoError(t, err)
		operatorCSV(t, server, "quay.io/example/wmco:11.0.1")
		succeeded(t, server, config.OperatorName+".v11.0.1")

		code, out, errOut := runWmcon(t, b.args(admin, "configure", "--address", ip2, "--payload", b.payloadDir, "--dry-run")...)
		assert.Equal(t, ExitFailed, code, out)
		assert.Contains(t, out+errOut, "ConfigMap "+config.OperatorNamespace+"/windows-services-11.0.1 not found")

		data, err := nodeconfig.Contract(nf.Facts.ContractInputs())
		require.NoError(t, err)
		for i := range data.Services {
			if data.Services[i].Name == "csi-proxy" {
				data.Services[i].Command = strings.Replace(data.Services[i].Command, "--v=2", "--v=4", 1)
			}
		}
		cmData, err := contract.Render(data)
		require.NoError(t, err)
		_, err = kube.CoreV1().ConfigMaps(config.OperatorNamespace).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: contract.ConfigMapName("11.0.1")}, Data: cmData}, metav1.CreateOptions{})
		require.NoError(t, err)

		code, out, errOut = runWmcon(t, b.args(admin, "configure", "--address", ip2, "--payload", b.payloadDir,
			"--csr-timeout", "90s", "--ready-timeout", "90s")...)
		require.Equal(t, 0, code, "%s\n%s\nkubelet log:\n%s", out, errOut, kubeletLog(host2))
		assert.Contains(t, out, "the services follow WMCO 11.0.1's contract")
		assert.Contains(t, kubeletLog(host2), `containerd-containerd: The system cannot find the file specified.`, "the kubelet met containerd's pipe race")
		csi, ok := host2.Service("csi-proxy")
		require.True(t, ok)
		assert.Contains(t, csi.BinaryPath, "-windows-service --v=4", "WMCO's command line, not wmcon's")
		n, err := kube.CoreV1().Nodes().Get(ctx, want2, metav1.GetOptions{})
		require.NoError(t, err)
		assert.True(t, nodeReady(n))
		assert.Equal(t, "11.0.1", n.Annotations[config.VersionAnnotation])
		assert.NotEmpty(t, n.Annotations[config.UsernameAnnotation], "a BYOH node carries WMCO's username annotation")
	})
}

// succeeded marks the operator's CSV Succeeded, as OLM does once it runs: WMCO is installed.
func succeeded(t *testing.T, server *kubeapi.Server, name string) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(server.AdminConfig()).Resource(cluster.CSVResource).Namespace(config.OperatorNamespace)
	csv, err := dyn.Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(csv.Object, "Succeeded", "status", "phase"))
	_, err = dyn.UpdateStatus(context.Background(), csv, metav1.UpdateOptions{})
	require.NoError(t, err)
}
