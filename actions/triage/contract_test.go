package triage_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/contract"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/sim/windows"
)

// simAPIServer is the API server URL the simulator's configured hosts were configured for.
const simAPIServer = "https://api-int.winsim.example:6443"

// installWMCO makes WMCO of version installed on the test's API server (its namespace and a Succeeded
// ClusterServiceVersion), removed when the test ends. Tests using it do not run in parallel: every node of
// the shared server is held to the operator's contract meanwhile.
func (te *triageEnv) installWMCO(version string) {
	t := te.T
	t.Helper()
	_, err := te.Kube.CoreV1().Namespaces().Create(te.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.OperatorNamespace}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	csv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": config.OperatorName + ".v" + version, "namespace": config.OperatorNamespace},
		"spec": map[string]any{"displayName": "Windows Machine Config Operator", "version": version,
			"installModes": []any{map[string]any{"type": "OwnNamespace", "supported": true}},
			"install":      map[string]any{"strategy": "deployment", "spec": map[string]any{"deployments": []any{}}}},
	}}
	csvs := te.Clients.Dynamic.Resource(cluster.CSVResource).Namespace(config.OperatorNamespace)
	created, err := csvs.Create(te.Ctx, csv, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = csvs.Delete(context.Background(), csv.GetName(), metav1.DeleteOptions{}) })
	require.NoError(t, unstructured.SetNestedField(created.Object, "Succeeded", "status", "phase"))
	_, err = csvs.UpdateStatus(te.Ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// servicesConfigMap publishes a services ConfigMap for version, removed when the test ends.
func (te *triageEnv) servicesConfigMap(version string, data map[string]string) {
	te.T.Helper()
	cms := te.Kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	name := contract.ConfigMapName(version)
	_ = cms.Delete(te.Ctx, name, metav1.DeleteOptions{})
	_, err := cms.Create(te.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
	require.NoError(te.T, err)
	te.T.Cleanup(func() { _ = cms.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// builtIn is wmcon's own contract for the simulator's configured hosts (platform None).
func builtIn(t *testing.T) contract.Data {
	t.Helper()
	d, err := nodeconfig.Contract(nodeconfig.ContractInputs{Platform: "None", APIServerURL: simAPIServer})
	require.NoError(t, err)
	return d
}

func render(t *testing.T, d contract.Data) map[string]string {
	t.Helper()
	out, err := contract.Render(d)
	require.NoError(t, err)
	return out
}

// With WMCO installed, triage holds a host to the operator's services ConfigMap, not to wmcon's built-in
// contract: here one whose csi-proxy runs at --v=4 (wmcon's: --v=2). A host configured per the ConfigMap has
// no drift; one configured with wmcon's built-in command lines drifts, naming csi-proxy and the flag. A node's
// desired-version annotation picks the ConfigMap, as WMCO's node daemon reads it; a missing or malformed
// ConfigMap is a finding naming it.
func TestTriageHoldsTheHostToWMCOsServicesConfigMap(t *testing.T) {
	te := newTriageEnv(t)
	const asCM, asBuiltIn = "win-tr-cm", "win-tr-builtin"
	te.windowsNode(asCM, "127.0.0.61", nil)
	te.windowsNode(asBuiltIn, "127.0.0.62", nil)
	te.h.Add(asCM, "127.0.0.61", windows.Options{Hostname: strings.ToUpper(asCM)})
	te.h.Add(asBuiltIn, "127.0.0.62", windows.Options{Hostname: strings.ToUpper(asBuiltIn)})

	// Standalone, wmcon's own services are checked by name as before: no contract check.
	r := te.triage(asBuiltIn)
	_, held := r.Check("service-commands")
	assert.False(t, held, "no operator, no ConfigMap to hold the host to:\n%s", describeReport(r))

	te.installWMCO("11.0.1")
	r = te.triage(asBuiltIn)
	c := requireCheck(t, r, "services-contract", diagnosis.CheckFail)
	assert.Contains(t, c.Detail, "ConfigMap "+config.OperatorNamespace+"/windows-services-11.0.1 not found")
	assert.Contains(t, c.Fix, "wmcon operator status")

	wmco := builtIn(t)
	for i, s := range wmco.Services {
		if s.Name == "csi-proxy" {
			require.Contains(t, s.Command, " --v=2")
			wmco.Services[i].Command = strings.Replace(s.Command, " --v=2", " --v=4", 1)
		}
	}
	te.servicesConfigMap("11.0.1", render(t, wmco))

	// The host configured per the ConfigMap: its csi-proxy registered (over SSH) with the ConfigMap's command.
	csi, _ := wmco.Service("csi-proxy")
	h, err := te.h.Resolver.Host(te.Ctx, te.NodeInfo(asCM))
	require.NoError(t, err)
	require.NoError(t, h.StopService(te.Ctx, "csi-proxy"))
	require.NoError(t, h.DeleteService(te.Ctx, "csi-proxy"))
	require.NoError(t, h.CreateService(te.Ctx, remote.ServiceSpec{Name: "csi-proxy", BinPath: csi.Command, Recovery: true}))
	require.NoError(t, h.StartService(te.Ctx, "csi-proxy"))

	r = te.triage(asCM)
	c = requireCheck(t, r, "service-commands", diagnosis.CheckOK)
	assert.Contains(t, c.Evidence, "contract: ConfigMap "+config.OperatorNamespace+"/windows-services-11.0.1 (the installed operator's version)")
	_, problem := r.Check("services-contract")
	assert.False(t, problem)

	r = te.triage(asBuiltIn)
	c = requireCheck(t, r, "service-commands", diagnosis.CheckWarn)
	assert.Contains(t, c.Detail, "csi-proxy run another command line than the ConfigMap says")
	assert.Contains(t, c.Evidence, "csi-proxy: --v: the contract has --v=4, the host runs --v=2")
	assert.Len(t, c.Evidence, 2, "only csi-proxy's flag differs: %q", c.Evidence)
	assert.Equal(t, "csi-proxy", c.Service, "its log is a key away")

	// The node's desired-version names the ConfigMap WMCO's daemon follows: wmcon's own commands there.
	te.servicesConfigMap("11.0.2", render(t, builtIn(t)))
	te.PatchNode(asBuiltIn, `{"metadata":{"annotations":{"`+config.DesiredVersionAnnotation+`":"11.0.2"}}}`)
	r = te.triage(asBuiltIn)
	c = requireCheck(t, r, "service-commands", diagnosis.CheckOK)
	assert.Contains(t, c.Evidence, "contract: ConfigMap "+config.OperatorNamespace+"/windows-services-11.0.2 (the node's "+config.DesiredVersionAnnotation+" annotation)")

	// A malformed ConfigMap is a finding naming it and the field, not a crash and not wmcon's own contract.
	bad := render(t, builtIn(t))
	bad["services"] = strings.Replace(bad["services"], `"bootstrap":`, `"unknownField":1,"bootstrap":`, 1)
	te.servicesConfigMap("11.0.2", bad)
	r = te.triage(asBuiltIn)
	c = requireCheck(t, r, "services-contract", diagnosis.CheckFail)
	assert.Contains(t, c.Detail, `services ConfigMap windows-services-11.0.2, key "services"`)
	_, held = r.Check("service-commands")
	assert.False(t, held)
}

// The files WMCO's ConfigMap lists with their checksums are held to the host's copies (read over SSH with
// Get-FileHash): a file that differs is named with both checksums; the others are fine.
func TestTriageReportsAHostFileThatDiffersFromTheManifest(t *testing.T) {
	te := newTriageEnv(t)
	const node = "win-tr-files"
	te.windowsNode(node, "127.0.0.63", nil)
	sim := te.h.Add(node, "127.0.0.63", windows.Options{Hostname: strings.ToUpper(node)})
	te.installWMCO("11.0.1")

	kubelet, err := sim.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	sum := sha256.Sum256(kubelet)
	kubeletSum, wrong := hex.EncodeToString(sum[:]), strings.Repeat("cd", 32)
	wmco := builtIn(t)
	wmco.Files = []contract.File{{Path: `C:\k\kubelet.exe`, Checksum: kubeletSum}, {Path: `C:\k\kube-proxy.exe`, Checksum: wrong},
		{Path: `C:\k\absent.exe`, Checksum: kubeletSum}}
	te.servicesConfigMap("11.0.1", render(t, wmco))

	r := te.triage(node)
	requireCheck(t, r, "service-commands", diagnosis.CheckOK)
	c := requireCheck(t, r, "payload-files", diagnosis.CheckWarn)
	assert.Contains(t, c.Detail, `C:\k\kube-proxy.exe`)
	assert.NotContains(t, c.Detail, `kubelet.exe`)
	proxy, err := sim.ReadFile(`C:\k\kube-proxy.exe`)
	require.NoError(t, err)
	sum = sha256.Sum256(proxy)
	assert.Contains(t, c.Evidence, `C:\k\kube-proxy.exe: the manifest has sha256 `+wrong+", the host's file "+hex.EncodeToString(sum[:]))
	assert.Contains(t, c.Evidence, `C:\k\absent.exe: missing on the host (the manifest has sha256 `+kubeletSum+")")

	// With the manifest right, nothing drifts.
	wmco.Files[1].Checksum = hex.EncodeToString(sum[:])
	wmco.Files = wmco.Files[:2]
	te.servicesConfigMap("11.0.1", render(t, wmco))
	r = te.triage(node)
	c = requireCheck(t, r, "payload-files", diagnosis.CheckOK)
	assert.Equal(t, "the 2 files the ConfigMap lists match their checksums", c.Detail)
}
