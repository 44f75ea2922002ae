package machineapi

import (
	"context"
	"errors"
	"fmt"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	machineclient "github.com/openshift/client-go/machine/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/config"
)

// SyncStatuses reports every MachineSet's replicas as the MachineSet controller does: its live Machines,
// and of those the ready ones, whose Node is Ready. The demo runs it on its own MachineSets (whose Machines
// no simulated cloud provisions), so the counts follow a Machine that provisions or a node that fails.
func SyncStatuses(ctx context.Context, kube kubernetes.Interface, machine machineclient.Interface) error {
	sets, err := machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("machinesim: list MachineSets: %w", err)
	}
	var errs []error
	for i := range sets.Items {
		errs = append(errs, syncStatus(ctx, kube, machine, &sets.Items[i]))
	}
	return errors.Join(errs...)
}

// syncStatus writes one MachineSet's status when it differs.
func syncStatus(ctx context.Context, kube kubernetes.Interface, machine machineclient.Interface, ms *machinev1beta1.MachineSet) error {
	owned, err := ownedMachines(ctx, machine, ms)
	if err != nil {
		return err
	}
	ready := 0
	for _, m := range owned {
		if machineReady(ctx, kube, &m) {
			ready++
		}
	}
	st := machinev1beta1.MachineSetStatus{Replicas: int32(len(owned)), FullyLabeledReplicas: int32(len(owned)),
		ReadyReplicas: int32(ready), AvailableReplicas: int32(ready), ObservedGeneration: ms.Generation}
	if ms.Status.Replicas == st.Replicas && ms.Status.ReadyReplicas == st.ReadyReplicas && ms.Status.AvailableReplicas == st.AvailableReplicas &&
		ms.Status.FullyLabeledReplicas == st.FullyLabeledReplicas && ms.Status.ObservedGeneration == st.ObservedGeneration {
		return nil
	}
	sets := machine.MachineV1beta1().MachineSets(ms.Namespace)
	fresh, err := sets.Get(ctx, ms.Name, metav1.GetOptions{})
	if err != nil {
		return nil // gone meanwhile
	}
	fresh.Status.Replicas, fresh.Status.FullyLabeledReplicas = st.Replicas, st.FullyLabeledReplicas
	fresh.Status.ReadyReplicas, fresh.Status.AvailableReplicas, fresh.Status.ObservedGeneration = st.ReadyReplicas, st.AvailableReplicas, st.ObservedGeneration
	if _, err := sets.UpdateStatus(ctx, fresh, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("machinesim: status of MachineSet %s: %w", ms.Name, err)
	}
	return nil
}

// machineReady: the Machine runs and its Node is Ready.
func machineReady(ctx context.Context, kube kubernetes.Interface, m *machinev1beta1.Machine) bool {
	if m.Status.Phase == nil || *m.Status.Phase != "Running" || m.Status.NodeRef == nil {
		return false
	}
	n, err := kube.CoreV1().Nodes().Get(ctx, m.Status.NodeRef.Name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ownedMachines are the MachineSet's live Machines: selected by its selector and owned by it (or by
// nothing, as the demo's seeded Machines).
func ownedMachines(ctx context.Context, machine machineclient.Interface, ms *machinev1beta1.MachineSet) ([]machinev1beta1.Machine, error) {
	sel, err := metav1.LabelSelectorAsSelector(&ms.Spec.Selector)
	if err != nil || sel.Empty() {
		return nil, nil // an invalid or empty selector: the real controller refuses to act too
	}
	l, err := machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("machinesim: list Machines of %s: %w", ms.Name, err)
	}
	var out []machinev1beta1.Machine
	for _, m := range l.Items {
		if m.DeletionTimestamp != nil || !sel.Matches(labels.Set(m.Labels)) {
			continue
		}
		if ref := metav1.GetControllerOf(&m); ref != nil && ref.UID != ms.UID {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}
