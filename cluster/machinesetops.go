package cluster

import (
	"context"
	"fmt"
	"sort"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

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

// Apply creates the MachineSet, or replaces the spec of an existing one; it says whether it existed.
func (m *MachineSets) Apply(ctx context.Context, ms *machinev1beta1.MachineSet) (bool, error) {
	sets := m.c.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace)
	_, err := sets.Create(ctx, ms, metav1.CreateOptions{})
	if err == nil {
		return false, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("create MachineSet %s: %w", ms.Name, err)
	}
	cur, err := sets.Get(ctx, ms.Name, metav1.GetOptions{})
	if err != nil {
		return true, fmt.Errorf("read MachineSet %s: %w", ms.Name, err)
	}
	cur = cur.DeepCopy()
	cur.Spec = ms.Spec
	if _, err := sets.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return true, fmt.Errorf("update MachineSet %s: %w", ms.Name, err)
	}
	return true, nil
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
