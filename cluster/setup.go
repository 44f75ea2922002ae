package cluster

import (
	"context"
	"fmt"
	"sort"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

// SetupFacts are what the guided setup's detection reads from the cluster. A resource that is not served
// (plain Kubernetes) or that the user may not read is left empty, and Unreadable says so.
type SetupFacts struct {
	Platform       configv1.PlatformType // "" on plain Kubernetes
	MachineSets    []WindowsMachineSet
	Machines       []WindowsMachine
	BYOH           map[string]string // windows-instances data (address → "username=…")
	Nodes          []model.NodeInfo  // Windows nodes
	RuntimeClasses []nodev1.RuntimeClass
	Unreadable     []string // "machinesets: forbidden", ...
}

// WindowsMachineSet is a MachineSet whose Machines are Windows (machine.openshift.io/os-id: Windows).
type WindowsMachineSet struct {
	Name     string
	Replicas int32
}

// WindowsMachine is a Windows Machine and how far it got.
type WindowsMachine struct {
	Name       string // namespace/name
	MachineSet string
	Phase      string
	Node       string
	Addresses  []string
}

// SetupOps reads the setup's state and makes the workload objects (RuntimeClass, smoke-test pod).
type SetupOps struct{ c Clients }

// NewSetupOps returns the setup operations over c.
func NewSetupOps(c Clients) *SetupOps { return &SetupOps{c: c} }

// SetupFacts reads everything the setup's detection needs, each read once.
func (s *SetupOps) SetupFacts(ctx context.Context) (SetupFacts, error) {
	var f SetupFacts
	absent := func(what string, err error) (bool, error) {
		switch {
		case err == nil:
			return false, nil
		case apierrors.IsNotFound(err) || isNoAPI(err):
			return true, nil
		case apierrors.IsForbidden(err):
			f.Unreadable = append(f.Unreadable, what+": forbidden")
			return true, nil
		}
		return true, fmt.Errorf("read %s: %w", what, err)
	}
	if s.c.Config != nil {
		infra, err := s.c.Config.ConfigV1().Infrastructures().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
		if skip, err := absent("infrastructures", err); err != nil {
			return f, err
		} else if !skip {
			f.Platform = PlatformOf(infra)
		}
	}
	if err := s.machines(ctx, &f, absent); err != nil {
		return f, err
	}
	cm, err := s.c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
	if skip, err := absent("configmaps", err); err != nil {
		return f, err
	} else if !skip {
		f.BYOH = cm.Data
	}
	nodes, err := s.c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: config.OSLabel + "=windows"})
	if err != nil {
		return f, fmt.Errorf("list Windows nodes: %w", err)
	}
	for i := range nodes.Items {
		f.Nodes = append(f.Nodes, NodeInfoFrom(&nodes.Items[i], ""))
	}
	sort.Slice(f.Nodes, func(i, j int) bool { return f.Nodes[i].Created.Before(f.Nodes[j].Created) })
	rcs, err := s.c.Kube.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
	if skip, err := absent("runtimeclasses", err); err != nil {
		return f, err
	} else if !skip {
		f.RuntimeClasses = rcs.Items
	}
	return f, nil
}

func (s *SetupOps) machines(ctx context.Context, f *SetupFacts, absent func(string, error) (bool, error)) error {
	if s.c.Machine == nil {
		return nil
	}
	api := s.c.Machine.MachineV1beta1()
	sets, err := api.MachineSets(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
	if skip, err := absent("machinesets", err); err != nil || skip {
		return err
	}
	for _, ms := range sets.Items {
		if ms.Spec.Template.Labels[config.MachineOSIDLabel] != config.WindowsOSID {
			continue
		}
		w := WindowsMachineSet{Name: ms.Name}
		if ms.Spec.Replicas != nil {
			w.Replicas = *ms.Spec.Replicas
		}
		f.MachineSets = append(f.MachineSets, w)
	}
	ms, err := api.Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{LabelSelector: config.MachineOSIDLabel + "=" + config.WindowsOSID})
	if skip, err := absent("machines", err); err != nil || skip {
		return err
	}
	for _, m := range ms.Items {
		w := WindowsMachine{Name: m.Namespace + "/" + m.Name, MachineSet: m.Labels[config.MachineSetLabel]}
		if m.Status.Phase != nil {
			w.Phase = *m.Status.Phase
		}
		if m.Status.NodeRef != nil {
			w.Node = m.Status.NodeRef.Name
		}
		for _, a := range m.Status.Addresses {
			w.Addresses = append(w.Addresses, a.Address)
		}
		f.Machines = append(f.Machines, w)
	}
	return nil
}

// RuntimeClass reads a RuntimeClass; nil when there is none of that name.
func (s *SetupOps) RuntimeClass(ctx context.Context, name string) (*nodev1.RuntimeClass, error) {
	rc, err := s.c.Kube.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read RuntimeClass %s: %w", name, err)
	}
	return rc, nil
}

// CreateRuntimeClass creates rc.
func (s *SetupOps) CreateRuntimeClass(ctx context.Context, rc *nodev1.RuntimeClass) error {
	if _, err := s.c.Kube.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create RuntimeClass %s: %w", rc.Name, err)
	}
	return nil
}

// CreatePod creates a pod.
func (s *SetupOps) CreatePod(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	created, err := s.c.Kube.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return created, nil
}

// Pod reads a pod; nil when it is gone.
func (s *SetupOps) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	p, err := s.c.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read pod %s/%s: %w", ns, name, err)
	}
	return p, nil
}

// DeletePod deletes a pod at once (grace period 0); a pod already gone is not an error.
func (s *SetupOps) DeletePod(ctx context.Context, ns, name string) error {
	err := s.c.Kube.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s/%s: %w", ns, name, err)
	}
	return nil
}

// PodEvents are the events of a pod, oldest first.
func (s *SetupOps) PodEvents(ctx context.Context, ns, name string) ([]EventInfo, error) {
	l, err := s.c.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + name})
	if err != nil {
		return nil, fmt.Errorf("list the events of pod %s/%s: %w", ns, name, err)
	}
	var out []EventInfo
	for _, e := range l.Items {
		if e.InvolvedObject.Name != name { // the demo's fake clientset ignores field selectors
			continue
		}
		t := e.LastTimestamp.Time
		if t.IsZero() {
			t = e.EventTime.Time
		}
		out = append(out, EventInfo{Object: "pod/" + name, Type: e.Type, Reason: e.Reason, Message: e.Message, Time: t})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}
