package cluster

import (
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wmcon/wmcon/config"
)

// trim is the informers' transform: it keeps of each object only what the snapshot builder reads, before
// the object enters the cache. A Node becomes its row (nodeRow): a real Node is mostly managedFields and
// status.images, neither of which wmcon shows; a Machine is mostly its providerSpec and providerStatus. Trimmed objects are new, small
// values, so the decoded list they came from is not kept alive by the cache. Objects of other kinds keep
// everything but managedFields. Whatever build.go, secrets.go and their callers read must be kept here:
// TestTrimKeepsWhatWmconReads compares snapshots of trimmed and untrimmed realistic objects.
func trim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Node:
		return rowOf(o), nil
	case *nodeRow: // the Nodes lists hand the informer rows already (nodeLister)
		return o, nil
	case *machinev1beta1.Machine:
		return trimMachine(o), nil
	case *corev1.Secret:
		return trimSecret(o), nil
	}
	return stripManagedFields(obj)
}

// keptMeta is the object metadata every trimmed object keeps: identity, labels, annotations, age.
func keptMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
		Labels: m.Labels, Annotations: m.Annotations,
	}
}

// trimNode keeps what nodeInfo reads (all labels and annotations, which the detail view lists); the
// detail view's YAML is read from the API server when it opens, not from the cache. The strings a fleet
// repeats on every node (label and annotation keys, most label values, condition texts, OS and versions)
// are shared between nodes instead of held once per node as decoded.
func trimNode(n *corev1.Node) *corev1.Node {
	meta := keptMeta(n.ObjectMeta)
	meta.Labels = nodeStrings.stringMap(n.Labels, internMaxLen)
	meta.Annotations = nodeStrings.stringMap(n.Annotations, internMaxValue)
	return &corev1.Node{
		TypeMeta:   n.TypeMeta,
		ObjectMeta: meta,
		Spec:       corev1.NodeSpec{Unschedulable: n.Spec.Unschedulable, Taints: n.Spec.Taints},
		Status: corev1.NodeStatus{
			Capacity:    n.Status.Capacity,
			Allocatable: n.Status.Allocatable,
			Conditions:  nodeStrings.conditions(n.Status.Conditions),
			Addresses:   n.Status.Addresses,
			NodeInfo:    nodeStrings.systemInfo(n.Status.NodeInfo),
		},
	}
}

// trimMachine keeps what machineInfo reads: labels (MachineSet, OS), provider ID, phase, node reference,
// addresses and the error the machine controller reported.
func trimMachine(m *machinev1beta1.Machine) *machinev1beta1.Machine {
	meta := keptMeta(m.ObjectMeta)
	meta.Annotations = nil
	return &machinev1beta1.Machine{
		TypeMeta:   m.TypeMeta,
		ObjectMeta: meta,
		Spec:       machinev1beta1.MachineSpec{ProviderID: m.Spec.ProviderID},
		Status: machinev1beta1.MachineStatus{Phase: m.Status.Phase, NodeRef: m.Status.NodeRef, Addresses: m.Status.Addresses,
			ErrorReason: m.Status.ErrorReason, ErrorMessage: m.Status.ErrorMessage},
	}
}

// secretKeys are the only secret values wmcon reads, by secret name (secretsInfo). Annotations are dropped
// too: kubectl apply leaves a copy of the whole secret in last-applied-configuration.
var secretKeys = map[string]string{
	config.PrivateKeySecret: config.PrivateKeySecretKey,
	config.UserDataSecret:   config.UserDataSecretKey,
	config.PullSecret:       config.PullSecretKey,
}

// trimSecret keeps a secret's name and type, and its value only under the one key wmcon reads from it;
// every other secret in the watched namespaces keeps no data at all.
func trimSecret(s *corev1.Secret) *corev1.Secret {
	meta := keptMeta(s.ObjectMeta)
	meta.Annotations = nil
	out := &corev1.Secret{TypeMeta: s.TypeMeta, ObjectMeta: meta, Type: s.Type}
	if key, ok := secretKeys[s.Name]; ok {
		if v, ok := s.Data[key]; ok {
			out.Data = map[string][]byte{key: v}
		}
	}
	return out
}

// stripManagedFields only drops server-side-apply bookkeeping (WatcherOptions.Untrimmed, and kinds trim
// does not know). The object may be shared with whoever delivered it (the demo's fake clientsets hand their
// stored object to watchers), so it is copied before it is changed, and only when there is something to drop.
func stripManagedFields(obj any) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil || len(m.GetManagedFields()) == 0 {
		return obj, nil
	}
	o, ok := obj.(runtime.Object)
	if !ok {
		return obj, nil
	}
	c := o.DeepCopyObject()
	if m, err = meta.Accessor(c); err != nil {
		return obj, nil
	}
	m.SetManagedFields(nil)
	return c, nil
}
