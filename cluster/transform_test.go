package cluster

import (
	"crypto/ed25519"
	"encoding/pem"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/fleet"
)

// realisticObjects is what a Windows cluster's informers receive: realistic Linux and Windows nodes, the
// AWS Windows node fixture, a cordoned node, Machines with provider specs and statuses, and WMCO's secrets
// next to unrelated ones.
func realisticObjects(t *testing.T) (nodes, machines, wmcoSecrets, userData, pull []runtime.Object) {
	t.Helper()
	for i := range 8 {
		nodes = append(nodes, fleet.Node(i, fmt.Sprintf("node-%d", i), fmt.Sprintf("127.0.0.%d", i+1)))
	}
	nodes[1].(*corev1.Node).Spec.Unschedulable = true
	nodes[1].(*corev1.Node).Spec.Taints = append(nodes[1].(*corev1.Node).Spec.Taints,
		corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	b, err := os.ReadFile("../testdata/cluster/aws-windows-node.yaml")
	require.NoError(t, err)
	var fixture corev1.Node
	require.NoError(t, yaml.Unmarshal(b, &fixture))
	nodes = append(nodes, &fixture)

	for i, phase := range []string{"Running", "Provisioning", "Failed"} {
		m := &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("win-%d", i), Namespace: config.MachineAPINamespace,
			CreationTimestamp: metav1.NewTime(fleet.Epoch),
			Labels:            map[string]string{config.MachineSetLabel: "winworker", config.MachineOSIDLabel: config.WindowsOSID},
			Annotations:       map[string]string{"machine.openshift.io/instance-state": "running"}}}
		m.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(`{"kind":"AWSMachineProviderConfig","instanceType":"m5a.large"}`)}
		m.Status.Phase = ptr.To(phase)
		m.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(`{"instanceState":"running"}`)}
		m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.1.1"}}
		m.Spec.ProviderID = ptr.To(fmt.Sprintf("aws:///us-east-2a/i-0%016x", i))
		if phase == "Failed" {
			m.Status.ErrorReason = ptr.To(machinev1beta1.InvalidConfigurationMachineError)
			m.Status.ErrorMessage = ptr.To("the instance type is not offered in this zone")
		}
		if phase == "Running" {
			m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "node-0"}
		}
		machines = append(machines, m)
	}

	_, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	secret := func(ns, name string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"}}, Data: data}
	}
	wmcoSecrets = []runtime.Object{
		secret(config.OperatorNamespace, config.PrivateKeySecret, map[string][]byte{config.PrivateKeySecretKey: pem.EncodeToMemory(block)}),
		secret(config.OperatorNamespace, "windows-machine-config-operator-tls", map[string][]byte{"tls.crt": []byte("cert"), "tls.key": []byte("key")}),
	}
	script := "<powershell>\nAdd-Content -Value '" + string(ssh.MarshalAuthorizedKey(signer.PublicKey())) + "' -Path keys\n</powershell>"
	userData = []runtime.Object{secret(config.MachineAPINamespace, config.UserDataSecret, map[string][]byte{config.UserDataSecretKey: []byte(script)})}
	pull = []runtime.Object{secret(config.OpenShiftConfigNS, config.PullSecret, map[string][]byte{config.PullSecretKey: []byte(`{"auths":{}}`)})}
	return nodes, machines, wmcoSecrets, userData, pull
}

// snapshotOf builds a snapshot from caches filled through transform, as the informers fill them.
func snapshotOf(t *testing.T, transform cache.TransformFunc, nodes, machines, wmcoSecrets, userData, pull []runtime.Object) *model.Snapshot {
	t.Helper()
	fill := func(objs []runtime.Object) cache.Indexer {
		idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		for _, o := range objs {
			out, err := transform(o.DeepCopyObject())
			require.NoError(t, err)
			require.NoError(t, idx.Add(out))
		}
		return idx
	}
	l := listers{nodes: []cache.Indexer{fill(nodes)}, machines: fill(machines), secrets: fill(wmcoSecrets), userData: fill(userData), pullSecret: fill(pull)}
	ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "winworker", Namespace: config.MachineAPINamespace}}
	l.machineSets = fill([]runtime.Object{ms})
	return build(l, buildInput{now: time.Unix(0, 0), states: map[model.Resource]model.ResourceState{}})
}

// TestTrimKeepsWhatWmconReads: the snapshot built from trimmed caches (everything panes, detail views,
// triage and actions read comes from the snapshot) equals the one built from whole objects, for realistic
// nodes, Machines and secrets.
func TestTrimKeepsWhatWmconReads(t *testing.T) {
	nodes, machines, wmcoSecrets, userData, pull := realisticObjects(t)
	whole := snapshotOf(t, func(o any) (any, error) { return o, nil }, nodes, machines, wmcoSecrets, userData, pull)
	trimmed := snapshotOf(t, trim, nodes, machines, wmcoSecrets, userData, pull)
	assert.Equal(t, whole, trimmed)

	// The comparison is not vacuous: the objects say something in every field the snapshot carries.
	require.Len(t, whole.Nodes, 9)
	assert.True(t, whole.Secrets.UserData.MatchesKey, "the user data holds the private key's public key")
	assert.NotEmpty(t, whole.Secrets.PrivateKey.Fingerprint)
	assert.True(t, whole.Secrets.PullSecret)
	require.Len(t, whole.MachineSets, 1)
	assert.Len(t, whole.MachineSets[0].Machines, 3)
	assert.Equal(t, "node-0", whole.MachineSets[0].Machines[0].NodeName)
	for _, n := range whole.Nodes {
		assert.NotEmpty(t, n.Conditions, n.Name)
		assert.NotEmpty(t, n.InternalIP, n.Name)
		assert.NotEmpty(t, n.OSImage, n.Name)
		assert.NotEmpty(t, n.Annotations, n.Name)
		if n.Name != "ip-127-0-143-7.us-east-2.compute.internal" { // the fixture has no capacity
			assert.NotEmpty(t, n.Capacity, n.Name)
		}
	}
}

// TestTrimDropsWhatWmconDoesNotRead: the bulk of real objects (managedFields, images, provider specs,
// secret values wmcon never reads, last-applied copies of secrets) does not reach the cache.
func TestTrimDropsWhatWmconDoesNotRead(t *testing.T) {
	nodes, machines, wmcoSecrets, _, _ := realisticObjects(t)
	raw := nodes[0].(*corev1.Node)
	require.NotEmpty(t, raw.ManagedFields)
	require.GreaterOrEqual(t, len(raw.Status.Images), 40)
	row, ok := mustTrim(t, raw).(*nodeRow)
	require.True(t, ok, "a Node is cached as its row")
	assert.Equal(t, raw.Name, row.info.Name)
	assert.Equal(t, raw.Annotations, row.info.Annotations)
	n := trimNode(raw) // what the row is built from
	assert.Empty(t, n.ManagedFields)
	assert.Empty(t, n.Status.Images)
	assert.Zero(t, n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	assert.Empty(t, n.Spec.ProviderID)

	m := mustTrim(t, machines[0]).(*machinev1beta1.Machine)
	assert.Nil(t, m.Spec.ProviderSpec.Value)
	assert.Nil(t, m.Status.ProviderStatus)
	assert.Empty(t, m.Annotations)

	key := mustTrim(t, wmcoSecrets[0]).(*corev1.Secret)
	assert.Len(t, key.Data, 1)
	assert.Empty(t, key.Annotations, "last-applied-configuration would hold the secret's value")
	other := mustTrim(t, wmcoSecrets[1]).(*corev1.Secret)
	assert.Empty(t, other.Data, "wmcon reads no value of other secrets")
	assert.Equal(t, "windows-machine-config-operator-tls", other.Name)

	// Other kinds only lose managedFields; a tombstone passes through.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "windows-instances",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "oc"}}}, Data: map[string]string{"127.0.0.1": "username=Administrator"}}
	got := mustTrim(t, cm).(*corev1.ConfigMap)
	assert.Empty(t, got.ManagedFields)
	assert.Equal(t, cm.Data, got.Data)
	tomb := cache.DeletedFinalStateUnknown{Key: "x"}
	assert.Equal(t, tomb, mustTrim(t, tomb))
}

func mustTrim(t *testing.T, o any) any {
	t.Helper()
	out, err := trim(o)
	require.NoError(t, err)
	return out
}

// TestStripManagedFieldsLeavesTheDeliveredObjectAlone: the demo's fake clientsets hand watchers the object
// they store, so the transform must not write to it (a data race under -race otherwise).
func TestStripManagedFieldsLeavesTheDeliveredObjectAlone(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}}}
	out, err := stripManagedFields(cm)
	require.NoError(t, err)
	assert.Empty(t, out.(*corev1.ConfigMap).ManagedFields, "the cached copy has none")
	assert.Len(t, cm.ManagedFields, 1, "the delivered object is untouched")

	bare := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "y"}}
	out, err = stripManagedFields(bare)
	require.NoError(t, err)
	assert.Same(t, bare, out, "nothing to drop: no copy")
}

// TestRowsShareWhatNodesRepeat: nodes of one kind report the same capacity and allocatable, which their
// cached rows hold once; a node that reports other figures keeps its own.
func TestRowsShareWhatNodesRepeat(t *testing.T) {
	a := rowOf(fleet.Node(0, "a", "127.0.0.1"))
	b := rowOf(fleet.Node(4, "b", "127.0.0.2"))
	require.NotEmpty(t, a.info.Capacity)
	assert.Equal(t, reflect.ValueOf(a.info.Capacity).Pointer(), reflect.ValueOf(b.info.Capacity).Pointer(), "one capacity map for both")
	assert.Equal(t, reflect.ValueOf(a.info.Allocatable).Pointer(), reflect.ValueOf(b.info.Allocatable).Pointer(), "one allocatable map for both")

	big := fleet.Node(8, "c", "127.0.0.3")
	big.Status.Capacity[corev1.ResourceCPU] = resource.MustParse("16")
	c := rowOf(big)
	assert.NotEqual(t, reflect.ValueOf(a.info.Capacity).Pointer(), reflect.ValueOf(c.info.Capacity).Pointer())
	assert.Equal(t, "16", c.info.Capacity["cpu"])
	assert.Equal(t, "4", a.info.Capacity["cpu"], "the shared map is not changed by another node's figures")
}
