package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wmcon/wmcon/config"
)

// MachineSets applies, scales and deletes MachineSets in openshift-machine-api.
type MachineSets struct{ c Clients }

// NewMachineSets builds it from the session's clients.
func NewMachineSets(c Clients) *MachineSets { return &MachineSets{c: c} }

// Inputs reads what GenerateMachineSet needs from the cluster: the Infrastructure object and the Machines.
func (m *MachineSets) Inputs(ctx context.Context) (*configv1.Infrastructure, []machinev1beta1.Machine, error) {
	infra, err := m.c.Config.ConfigV1().Infrastructures().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("read infrastructure/cluster (is this an OpenShift cluster?): %w", err)
	}
	machines, err := m.c.Machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list Machines in %s: %w", config.MachineAPINamespace, err)
	}
	return infra, machines.Items, nil
}

// Get reads a MachineSet; nil (and no error) when there is none of that name.
func (m *MachineSets) Get(ctx context.Context, name string) (*machinev1beta1.MachineSet, error) {
	ms, err := m.c.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read MachineSet %s: %w", name, err)
	}
	return ms, nil
}

// Create creates the MachineSet; one of that name made meanwhile is an error, never replaced.
func (m *MachineSets) Create(ctx context.Context, ms *machinev1beta1.MachineSet) error {
	_, err := m.c.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).Create(ctx, ms, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create MachineSet %s: one of that name appeared meanwhile; run again to see what replacing it would change", ms.Name)
	}
	if err != nil {
		return fmt.Errorf("create MachineSet %s: %w", ms.Name, err)
	}
	return nil
}

// Replace gives cur (as read by Get) the spec of ms. The update carries cur's resourceVersion, so a
// MachineSet changed since it was read (and so since its difference was shown) is not overwritten.
func (m *MachineSets) Replace(ctx context.Context, cur, ms *machinev1beta1.MachineSet) error {
	next := cur.DeepCopy()
	next.Spec = ms.Spec
	_, err := m.c.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).Update(ctx, next, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("replace MachineSet %s: it changed since wmcon read it; run again to see the new difference", ms.Name)
	}
	if err != nil {
		return fmt.Errorf("replace MachineSet %s: %w", ms.Name, err)
	}
	return nil
}

// IsWindowsMachineSet says whether a MachineSet makes Windows Machines (its template carries
// machine.openshift.io/os-id: Windows), the only kind wmcon replaces.
func IsWindowsMachineSet(ms *machinev1beta1.MachineSet) bool {
	return ms.Spec.Template.Labels[config.MachineOSIDLabel] == config.WindowsOSID
}

// MachineSetChanges lists what giving cur the spec of next changes, as lines a user reads before
// confirming: replicas, image, instance type and zone by value, then whether anything else in the spec
// differs.
// Empty when the specs are the same.
func MachineSetChanges(cur, next *machinev1beta1.MachineSet) []string {
	rest := func(s machinev1beta1.MachineSetSpec) machinev1beta1.MachineSetSpec {
		s = *s.DeepCopy()
		s.Replicas = nil
		s.Template.Spec.ProviderSpec = machinev1beta1.ProviderSpec{}
		return s
	}
	sameRest := equality.Semantic.DeepEqual(rest(cur.Spec), rest(next.Spec))
	sameProvider := sameJSON(cur.Spec.Template.Spec.ProviderSpec.Value, next.Spec.Template.Spec.ProviderSpec.Value)
	if sameRest && sameProvider && replicasText(cur.Spec.Replicas) == replicasText(next.Spec.Replicas) {
		return nil
	}
	var out []string
	change := func(what, from, to string) {
		if from != to {
			out = append(out, fmt.Sprintf("%s: %s → %s", what, orNone(from), orNone(to)))
		}
	}
	change("replicas", replicasText(cur.Spec.Replicas), replicasText(next.Spec.Replicas))
	was, will := providerSummary(cur.Spec.Template.Spec.ProviderSpec), providerSummary(next.Spec.Template.Spec.ProviderSpec)
	change("image", was.Image, will.Image)
	change("instance type", was.InstanceType, will.InstanceType)
	change("zone", was.Zone, will.Zone)
	if !sameRest || len(out) == 0 {
		out = append(out, "other fields of the spec change too: compare oc get machineset "+cur.Name+" -n "+config.MachineAPINamespace+" -o yaml with wmcon machineset generate")
	}
	return out
}

// sameJSON compares two providerSpecs as JSON values: the API server stores them with its own key order.
func sameJSON(a, b *runtime.RawExtension) bool {
	raw := func(r *runtime.RawExtension) []byte {
		if r == nil {
			return nil
		}
		return r.Raw
	}
	var va, vb any
	if json.Unmarshal(raw(a), &va) != nil || json.Unmarshal(raw(b), &vb) != nil {
		return bytes.Equal(raw(a), raw(b))
	}
	return reflect.DeepEqual(va, vb)
}

func replicasText(n *int32) string {
	if n == nil {
		return "1 (unset)"
	}
	return fmt.Sprint(*n)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Scale sets spec.replicas and returns the previous count.
func (m *MachineSets) Scale(ctx context.Context, name string, replicas int32) (int32, error) {
	sets := m.c.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace)
	cur, err := sets.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("read MachineSet %s: %w", name, err)
	}
	was := int32(0)
	if cur.Spec.Replicas != nil {
		was = *cur.Spec.Replicas
	}
	cur = cur.DeepCopy()
	cur.Spec.Replicas = &replicas
	if _, err := sets.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return was, fmt.Errorf("scale MachineSet %s: %w", name, err)
	}
	return was, nil
}

// Delete deletes the MachineSet.
func (m *MachineSets) Delete(ctx context.Context, name string) error {
	err := m.c.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil {
		return fmt.Errorf("delete MachineSet %s: %w", name, err)
	}
	return nil
}

// NodesOf names the nodes of the MachineSet's Machines (their status.nodeRef).
func (m *MachineSets) NodesOf(ctx context.Context, name string) ([]string, error) {
	sel := labels.Set{config.MachineSetLabel: name}.String()
	machines, err := m.c.Machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list the Machines of %s: %w", name, err)
	}
	var nodes []string
	for _, mc := range machines.Items {
		if mc.Status.NodeRef != nil {
			nodes = append(nodes, mc.Status.NodeRef.Name)
		}
	}
	sort.Strings(nodes)
	return nodes, nil
}
