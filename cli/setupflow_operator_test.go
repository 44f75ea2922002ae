package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	operatorv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/setup"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/machineapi"
	"github.com/wmcon/wmcon/sim/olm"
	"github.com/wmcon/wmcon/sim/operator"
	"github.com/wmcon/wmcon/sim/ovn"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// TestSetupWithTheOperatorAndAMachineSetEndToEnd runs wmcon setup's operator path from the command line
// against the real kube-apiserver and kube-controller-manager (CSR signer, node lifecycle) on an OpenShift
// cluster on AWS with no Windows: the OLM stand-in installs WMCO from its catalog, a generated key is
// installed, WMCO's stand-in writes windows-user-data from it, the generated Windows MachineSet is applied,
// the machine API stand-in boots its Machine as a simulated Windows Server authorizing the key from the user
// data, WMCO's stand-in configures it over SSH into a node whose kubelet joins with what was written — and
// wmcon follows the Machine until that node is Ready and carries the operator's version (exit 0). A run on
// the finished setup changes nothing.
func TestSetupWithTheOperatorAndAMachineSetEndToEnd(t *testing.T) {
	dir := t.TempDir()
	server := kubeapi.Start(t, kubeapi.WithControllerManager())
	auditPath := filepath.Join(dir, "wmcon-audit.log")
	t.Setenv(actions.AuditEnv, auditPath)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := cluster.NewClients(server.AdminConfig())
	require.NoError(t, err)
	seedOpenShiftAWS(t, ctx, c, server.AdminConfig().Host)
	startOperatorPath(t, ctx, c, dir)

	admin := server.Kubeconfig("wmcon-setup-op", "system:masters")
	keyOut := filepath.Join(dir, "windows-key")
	args := []string{"--kubeconfig", admin, "--known-hosts", filepath.Join(dir, "known_hosts"), "--ssh-agent=false", "setup",
		"--generate-key", "--key-out", keyOut, "--machineset-image", "ami-0123456789abcdef0", "--zone", "us-east-2a",
		"--follow-timeout", "3m", "--yes", "-o", "json"}
	code, out, errOut := runWmcon(t, args...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	events := jsonEvents(t, out)
	last := events[len(events)-1]
	assert.Equal(t, setup.ActionSetup, last.Action)
	assert.Equal(t, event.Succeeded, last.Outcome)
	var plans []string
	for _, e := range events {
		if e.Kind == event.PlanShown {
			plans = append(plans, e.Action)
		}
	}
	assert.Equal(t, []string{"operator-install", "key-create", "machineset-apply", "runtimeclass"}, plans,
		"each change is shown before it is made")
	// Whether wmcon follows the Machine depends on how fast the operator is: the configure step may be
	// done by the time the setup looks again (following is tested in the actions and session packages).
	assert.NotContains(t, out+errOut, "BEGIN OPENSSH PRIVATE KEY", "the key is never printed")

	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: config.OSLabel + "=windows"})
	require.NoError(t, err)
	require.Len(t, nodes.Items, 1)
	n := nodes.Items[0]
	assert.True(t, nodeReady(&n))
	assert.Equal(t, "11.0.1", n.Annotations[config.VersionAnnotation], "the operator's version, as WMCO annotates")
	assert.NotEmpty(t, n.Annotations[config.PubKeyHashAnnotation])
	assert.Equal(t, "127.0.0.120", internalIP(&n), "the Machine's instance")
	assert.Contains(t, last.Message, "Windows node "+n.Name+" is Ready")
	ms, err := c.Machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx,
		metav1.ListOptions{LabelSelector: config.MachineOSIDLabel + "=" + config.WindowsOSID})
	require.NoError(t, err)
	require.Len(t, ms.Items, 1)
	require.NotNil(t, ms.Items[0].Status.NodeRef, "the machine API linked the Machine to its node")
	assert.Equal(t, n.Name, ms.Items[0].Status.NodeRef.Name)

	records, err := actions.ReadAudit(auditPath)
	require.NoError(t, err)
	var audited []string
	for _, r := range records {
		audited = append(audited, r.Action)
	}
	assert.Equal(t, []string{"operator-install", "key-create", "machineset-apply", "runtimeclass", "setup-summary"}, audited,
		"every change audited, previews, detections and following not")

	// On the finished setup: complete, nothing changed (the summary is recorded again).
	code, out, errOut = runWmcon(t, "--kubeconfig", admin, "--ssh-agent=false", "setup")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "the setup is complete")
	again, err := actions.ReadAudit(auditPath)
	require.NoError(t, err)
	require.Len(t, again, len(records)+1, "only the summary is recorded again")
	assert.Equal(t, "setup-summary", again[len(again)-1].Action)
}

// seedOpenShiftAWS gives the server what an OpenShift cluster on AWS has that the setup reads: the
// Infrastructure (its internal API URL is this server, so joining kubelets reach it on loopback), the
// version, OVN-Kubernetes with a hybrid overlay.
func seedOpenShiftAWS(t *testing.T, ctx context.Context, c cluster.Clients, apiURL string) {
	t.Helper()
	cfg := c.Config.ConfigV1()
	infra, err := cfg.Infrastructures().Create(ctx, &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: config.ClusterSingletonName}}, metav1.CreateOptions{})
	require.NoError(t, err)
	infra.Status = configv1.InfrastructureStatus{InfrastructureName: "e2e-x1y2z", APIServerInternalURL: apiURL,
		ControlPlaneTopology: configv1.HighlyAvailableTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
		PlatformStatus: &configv1.PlatformStatus{Type: configv1.AWSPlatformType, AWS: &configv1.AWSPlatformStatus{Region: "us-east-2"}}}
	_, err = cfg.Infrastructures().UpdateStatus(ctx, infra, metav1.UpdateOptions{})
	require.NoError(t, err)
	cv, err := cfg.ClusterVersions().Create(ctx, &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: "version"},
		Spec: configv1.ClusterVersionSpec{ClusterID: "8f4f0c3e-0000-4000-8000-000000000002"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cv.Status.Desired.Version = "4.24.2"
	_, err = cfg.ClusterVersions().UpdateStatus(ctx, cv, metav1.UpdateOptions{})
	require.NoError(t, err)
	_, err = cfg.Networks().Create(ctx, &configv1.Network{ObjectMeta: metav1.ObjectMeta{Name: config.ClusterSingletonName}, Spec: configv1.NetworkSpec{
		NetworkType:    "OVNKubernetes",
		ClusterNetwork: []configv1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
		ServiceNetwork: []string{"172.30.0.0/16"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	n := &operatorv1.Network{TypeMeta: metav1.TypeMeta{APIVersion: "operator.openshift.io/v1", Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Name: config.ClusterSingletonName}}
	n.Spec.ManagementState = operatorv1.Managed
	n.Spec.DefaultNetwork = operatorv1.DefaultNetworkDefinition{Type: operatorv1.NetworkTypeOVNKubernetes,
		OVNKubernetesConfig: &operatorv1.OVNKubernetesConfig{HybridOverlayConfig: &operatorv1.HybridOverlayConfig{
			HybridClusterNetwork: []operatorv1.ClusterNetworkEntry{{CIDR: "10.132.0.0/14", HostPrefix: 23}}}}}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(n)
	require.NoError(t, err)
	_, err = c.Dynamic.Resource(operatorv1.GroupVersion.WithResource("networks")).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	require.NoError(t, err)
	linuxWorker(t, ctx, c, infra.Status.InfrastructureName)
}

// linuxWorker adds the running Linux worker Machine a generated Windows MachineSet copies its AWS settings
// from (subnet and security-group filters, instance profile, credentials).
func linuxWorker(t *testing.T, ctx context.Context, c cluster.Clients, infraID string) {
	t.Helper()
	raw, err := json.Marshal(&machinev1beta1.AWSMachineProviderConfig{
		TypeMeta:           metav1.TypeMeta{APIVersion: "machine.openshift.io/v1beta1", Kind: "AWSMachineProviderConfig"},
		AMI:                machinev1beta1.AWSResourceReference{ID: ptr.To("ami-0rhcos")},
		InstanceType:       "m6i.xlarge",
		IAMInstanceProfile: &machinev1beta1.AWSResourceReference{ID: ptr.To(infraID + "-worker-profile")},
		UserDataSecret:     &corev1.LocalObjectReference{Name: "worker-user-data"},
		CredentialsSecret:  &corev1.LocalObjectReference{Name: "aws-cloud-credentials"},
		SecurityGroups:     []machinev1beta1.AWSResourceReference{{Filters: []machinev1beta1.Filter{{Name: "tag:Name", Values: []string{infraID + "-node"}}}}},
		Subnet:             machinev1beta1.AWSResourceReference{Filters: []machinev1beta1.Filter{{Name: "tag:Name", Values: []string{infraID + "-subnet-private-us-east-2a"}}}},
		Placement:          machinev1beta1.Placement{Region: "us-east-2", AvailabilityZone: "us-east-2a"},
	})
	require.NoError(t, err)
	machines := c.Machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	m, err := machines.Create(ctx, &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: infraID + "-worker-us-east-2a-x1", Namespace: config.MachineAPINamespace,
		Labels: map[string]string{config.MachineRoleLabel: "worker", config.MachineTypeLabel: "worker", config.MachineSetClusterLabel: infraID}},
		Spec: machinev1beta1.MachineSpec{ProviderSpec: machinev1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	m.Status.Phase = ptr.To("Running") // provisioned long ago: the machine API stand-in leaves it alone
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "ip-127-0-1-20.us-east-2.compute.internal"}
	_, err = machines.UpdateStatus(ctx, m, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// startOperatorPath runs the cluster's side of the operator path until the test ends: OLM (a catalog
// offering WMCO 11.0.1), the machine API (instances on 127.0.0.120–122 whose kubelet.exe is the honest
// simulated kubelet) and WMCO (its secret and node controllers, with a synthetic payload in its image).
func startOperatorPath(t *testing.T, ctx context.Context, c cluster.Clients, dir string) {
	t.Helper()
	olm := olm.New(c, olm.Options{Catalogs: []olm.Catalog{{Name: cluster.DefaultCatalogSource, Channels: []string{"stable"},
		DefaultChannel: "stable", Version: "11.0.1"}}})
	require.NoError(t, olm.Seed(ctx))
	logErr := func(err error) { t.Logf("simulator: %v", err) }
	olm.OnError = logErr
	machines, err := machineapi.New(c.Kube, c.Machine, machineapi.Options{Addresses: []string{"127.0.0.120", "127.0.0.121", "127.0.0.122"},
		Platform: "AWS", Programs: map[string]windows.Program{"kubelet.exe": kubelet.Kubelet(kubelet.KubeletOptions{}),
			"hybrid-overlay-node.exe": ovn.HybridOverlayNode(ovn.NodeOptions{})},
		LogInterval: time.Hour, OnError: logErr})
	require.NoError(t, err)
	payloadDir := filepath.Join(dir, "operator-payload")
	require.NoError(t, payload.WriteSynthetic(payloadDir, nodeconfig.RequiredPayload("AWS")))
	p, err := payload.LoadDir(payloadDir, filepath.Join(dir, "payload-cache"))
	require.NoError(t, err)
	op := &operator.Operator{Clients: c, Platform: "AWS", OnError: logErr, Nodes: &operator.NodeOptions{
		Host:    machines.HostAt,
		Payload: func(context.Context) (*payload.Payload, error) { return p, nil },
		Retry:   time.Second, CSRTimeout: time.Minute, ReadyTimeout: time.Minute,
		Log: func(l string) {
			if strings.Contains(l, "error") {
				t.Log("operator: " + l)
			}
		}}}
	simCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{}, 4)
	for _, run := range []func(context.Context){
		func(ctx context.Context) { olm.Run(ctx, 50*time.Millisecond) },
		func(ctx context.Context) { machines.Run(ctx, 100*time.Millisecond) },
		func(ctx context.Context) { op.Run(ctx, 200*time.Millisecond) },
		func(ctx context.Context) { (&ovn.SubnetAllocator{Kube: c.Kube}).Run(ctx, 200*time.Millisecond) },
	} {
		go func() { run(simCtx); done <- struct{}{} }()
	}
	t.Cleanup(func() {
		stop()
		for range 4 {
			<-done
		}
		machines.Close()
	})
}
