package cluster_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig/contract"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// installedOperator makes WMCO of version installed on the test API server: its namespace and a Succeeded
// ClusterServiceVersion, removed when the test ends.
func installedOperator(t *testing.T, version string) {
	t.Helper()
	installOperatorOn(t, srv, version)
}

// installOperatorOn is installedOperator on another test API server.
func installOperatorOn(t *testing.T, srv *kubeapi.Server, version string) {
	t.Helper()
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.OperatorNamespace}}, metav1.CreateOptions{})
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
	dyn := dynamic.NewForConfigOrDie(srv.AdminConfig()).Resource(cluster.CSVResource).Namespace(config.OperatorNamespace)
	created, err := dyn.Create(ctx, csv, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dyn.Delete(context.Background(), csv.GetName(), metav1.DeleteOptions{}) })
	require.NoError(t, unstructured.SetNestedField(created.Object, "Succeeded", "status", "phase"))
	_, err = dyn.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// wmcoServicesData is WMCO 11's AWS services ConfigMap data (testdata/wmco-11), each value a JSON string.
func wmcoServicesData(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "wmco-11", "services", "services-aws.json"))
	require.NoError(t, err)
	var data map[string]string
	require.NoError(t, json.Unmarshal(b, &data))
	return data
}

func putConfigMap(t *testing.T, kube kubernetes.Interface, name string, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	cms := kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	_ = cms.Delete(ctx, name, metav1.DeleteOptions{})
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cms.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// With WMCO installed, its windows-services-<CSV version> ConfigMap is the contract, exactly as it stands
// (here one whose csi-proxy command differs from wmcon's own); missing or malformed, the error names it.
func TestOperatorServicesContract(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clients, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ops := cluster.NewOps(clients)

	_, _, err = ops.OperatorServicesContract(ctx)
	require.ErrorIs(t, err, cluster.ErrNoOperator)

	installedOperator(t, "11.0.7")
	_, _, err = ops.OperatorServicesContract(ctx)
	assert.ErrorContains(t, err, "ConfigMap openshift-windows-machine-config-operator/windows-services-11.0.7 not found")

	data := wmcoServicesData(t)
	data["services"] = strings.Replace(data["services"], "csi-proxy.exe -log_file", "csi-proxy.exe --from-wmco -log_file", 1)
	putConfigMap(t, clients.Kube, "windows-services-11.0.7", data)
	d, version, err := ops.OperatorServicesContract(ctx)
	require.NoError(t, err)
	assert.Equal(t, "11.0.7", version)
	csi, ok := d.Service("csi-proxy")
	require.True(t, ok)
	assert.Contains(t, csi.Command, "--from-wmco", "the cluster's contract, not wmcon's")

	nf, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{OperatorContract: true})
	require.NoError(t, err)
	require.NotNil(t, nf.Facts.Contract)
	assert.Equal(t, d, *nf.Facts.Contract)
	assert.Equal(t, "11.0.7", nf.Facts.Version, "the version annotation is the operator's")
	nf, err = ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	assert.Nil(t, nf.Facts.Contract, "not asked for: wmcon's own")

	data["services"] = `[{"name":"kubelet","path":"C:\\k\\kubelet.exe","bootstrap":true,"priority":0,"unknownField":1}]`
	putConfigMap(t, clients.Kube, "windows-services-11.0.7", data)
	_, err = ops.ReadServicesContract(ctx, "11.0.7")
	assert.ErrorContains(t, err, `services ConfigMap windows-services-11.0.7, key "services"`)
	_, err = ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{OperatorContract: true})
	assert.ErrorContains(t, err, "windows-services-11.0.7", "configure stops, naming it")
}

// The operator's TLS secret is windows_exporter's certificate when the cluster has it (without it, wmcon's
// own: TestExporterCertificateWithoutWMCO).
func TestExporterTLSSecret(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clients, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ops := cluster.NewOps(clients)
	installedOperator(t, "11.0.8") // the namespace

	_, _, ok, err := ops.ExporterTLS(ctx)
	require.NoError(t, err)
	assert.False(t, ok)
	secrets := clients.Kube.CoreV1().Secrets(config.OperatorNamespace)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cluster.ExporterTLSSecret}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("CERT"), "tls.key": []byte("KEY")}}
	_, err = secrets.Create(ctx, s, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = secrets.Delete(context.Background(), s.Name, metav1.DeleteOptions{}) })
	cert, key, ok, err := ops.ExporterTLS(ctx)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "CERT", string(cert))
	assert.Equal(t, "KEY", string(key))
	nf, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{})
	require.NoError(t, err)
	assert.Equal(t, "CERT", string(nf.Facts.ExporterTLSCert))

	broken := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cluster.ExporterTLSSecret}, Data: map[string][]byte{"tls.crt": []byte("CERT")}}
	require.NoError(t, secrets.Delete(ctx, s.Name, metav1.DeleteOptions{}))
	_, err = secrets.Create(ctx, broken, metav1.CreateOptions{})
	require.NoError(t, err)
	_, _, _, err = ops.ExporterTLS(ctx)
	assert.ErrorContains(t, err, "secret openshift-windows-machine-config-operator/windows-machine-config-operator-tls lacks tls.crt or tls.key")
}

// kube-proxy's pre-script needs the node's hybrid overlay subnet: WaitNodeSubnet waits for the annotation,
// and says what is missing when it does not come.
func TestWaitNodeSubnet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clients, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ops := cluster.NewOps(clients)
	nodes := clients.Kube.CoreV1().Nodes()
	_, err = nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-subnet"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = nodes.Delete(context.Background(), "win-subnet", metav1.DeleteOptions{}) })

	short, stop := context.WithTimeout(ctx, 1500*time.Millisecond)
	_, err = ops.WaitNodeSubnet(short, "win-subnet")
	stop()
	assert.ErrorContains(t, err, "node win-subnet has no hybrid overlay subnet (annotation k8s.ovn.org/hybrid-overlay-node-subnet)")

	go func() {
		time.Sleep(300 * time.Millisecond)
		patch := []byte(`{"metadata":{"annotations":{"k8s.ovn.org/hybrid-overlay-node-subnet":"127.9.64.0/24"}}}`)
		_, _ = nodes.Patch(context.Background(), "win-subnet", "application/merge-patch+json", patch, metav1.PatchOptions{})
	}()
	n, err := ops.WaitNodeSubnet(ctx, "win-subnet")
	require.NoError(t, err)
	v, err := contract.NodeValue(contract.NodeVariable{Name: "NODE_SUBNET", NodeObjectJSONPath: `{.metadata.annotations.k8s\.ovn\.org/hybrid-overlay-node-subnet}`}, n)
	require.NoError(t, err)
	assert.Equal(t, "127.9.64.0/24", v, "what kube-proxy's pre-script reads")
}

// WMCO names its services ConfigMap after its full build version (the nodes' version annotations hold it),
// the CSV only its release: the release finds its build's ConfigMap, and a node's desired-version picks
// its own, saying so.
func TestServicesContractOfABuildAndOfANode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clients, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ops := cluster.NewOps(clients)
	installedOperator(t, "11.0.8")

	data := wmcoServicesData(t)
	putConfigMap(t, clients.Kube, "windows-services-11.0.8-3f9d0e2", data)
	putConfigMap(t, clients.Kube, "windows-services-11.0.80-0000000", map[string]string{"services": "not JSON"}) // another release
	d, src, err := ops.NodeServicesContract(ctx, nil)
	require.NoError(t, err)
	assert.NotEmpty(t, d.Services)
	assert.Equal(t, cluster.ContractSource{Version: "11.0.8", ConfigMap: config.OperatorNamespace + "/windows-services-11.0.8-3f9d0e2"}, src)
	assert.Equal(t, "ConfigMap "+config.OperatorNamespace+"/windows-services-11.0.8-3f9d0e2 (the installed operator's version)", src.String())
	nf, err := ops.ReadNodeFacts(ctx, cluster.NodeFactsOptions{DryRun: true, Version: "11.0.8", OperatorContract: true})
	require.NoError(t, err)
	assert.Equal(t, "11.0.8-3f9d0e2", nf.Facts.Version, "a node configured under this operator carries its build version, as WMCO annotates")

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{config.DesiredVersionAnnotation: "11.0.7-0f6ea4b"}}}
	_, src, err = ops.NodeServicesContract(ctx, node)
	assert.ErrorContains(t, err, "ConfigMap "+config.OperatorNamespace+"/windows-services-11.0.7-0f6ea4b not found")
	assert.True(t, src.FromNode)
	assert.Equal(t, config.OperatorNamespace+"/windows-services-11.0.7-0f6ea4b", src.ConfigMap)
}
