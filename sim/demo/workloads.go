package demo

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

const appsNamespace = "windows-apps"

// workloads are the pods running on the Windows nodes, so a drain has something to evict. The SQL pod on
// 127.0.0.4 is guarded by a PodDisruptionBudget that allows no disruption, to show a blocked drain.
func workloads(nodes []WindowsNode, now time.Time) []runtime.Object {
	objs := []runtime.Object{&corev1.Namespace{ObjectMeta: meta(appsNamespace, "", 20*24*time.Hour, now)}}
	for _, w := range nodes {
		if w.Joining {
			continue
		}
		node := NodeName(w.IP)
		suffix := dashed(w.IP)[8:]
		objs = append(objs,
			pod("iis-frontend-"+suffix, "iis-frontend", node, now),
			pod("dotnet-api-"+suffix, "dotnet-api", node, now))
	}
	objs = append(objs, pod("sql-0", "sql", NodeName("127.0.0.4"), now))
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: meta("sql-pdb", appsNamespace, 20*24*time.Hour, now)}
	one := intstr.FromInt32(1)
	pdb.Spec.MinAvailable = &one
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sql"}}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1, DisruptionsAllowed: 0}
	return append(objs, pdb)
}

func pod(name, app, node string, now time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: meta(name, appsNamespace, 3*24*time.Hour, now)}
	p.Labels = map[string]string{"app": app}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-7d9f8", UID: uidFor(app),
		Controller: ptrTrue()}}
	p.Spec.NodeName = node
	p.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "windows"}
	p.Spec.Containers = []corev1.Container{{Name: app, Image: "mcr.microsoft.com/windows/servercore:ltsc2022"}}
	p.Status.Phase = corev1.PodRunning
	started := metav1.NewTime(now.Add(-3 * 24 * time.Hour))
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: app, Image: p.Spec.Containers[0].Image, Ready: true, Started: ptrTrue(),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}
	withContainers(p) // resources and container IDs (podload.go)
	return p
}

func ptrTrue() *bool { t := true; return &t }

// addAPIServerBehaviour teaches the fake clientset what a drain and a Windows pod rely on that client-go's
// fake lacks: discovery of the Eviction subresource, field selectors on pod lists (spec.nodeName), the
// Eviction API honouring disruption budgets, the RuntimeClass admission plugin and the pods/binding
// subresource the scheduler binds with.
func addAPIServerBehaviour(kube *kubefake.Clientset) {
	// kubectl's drain asks discovery whether the Eviction subresource exists before evicting.
	kube.Resources = []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "nodes", Kind: "Node"},
		{Name: "pods", Namespaced: true, Kind: "Pod"},
		{Name: "pods/eviction", Namespaced: true, Kind: "Eviction", Group: "policy", Version: "v1"},
	}}}
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	podGVK := corev1.SchemeGroupVersion.WithKind("Pod")
	kube.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		fs := a.(k8stesting.ListAction).GetListRestrictions().Fields
		if fs == nil || fs.Empty() {
			return false, nil, nil
		}
		obj, err := kube.Tracker().List(podsGVR, podGVK, a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		list := obj.(*corev1.PodList)
		kept := list.Items[:0]
		for _, p := range list.Items {
			if fs.Matches(fields.Set{"spec.nodeName": p.Spec.NodeName, "metadata.name": p.Name,
				"metadata.namespace": p.Namespace, "status.phase": string(p.Status.Phase)}) {
				kept = append(kept, p)
			}
		}
		list.Items = kept
		return true, list, nil
	})
	kube.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		switch a.GetSubresource() {
		case "":
			err := admitRuntimeClass(kube, a.(k8stesting.CreateAction).GetObject().(*corev1.Pod))
			return err != nil, nil, err // admitted: the tracker stores the pod
		case "binding":
			return true, nil, bind(kube, a.(k8stesting.CreateAction).GetObject().(*corev1.Binding))
		case "eviction":
		default:
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		return true, nil, evict(kube, ev.Namespace, ev.Name)
	})
}

// evict deletes a pod unless a budget that selects it allows no disruption, answering as the API server
// does: 429 Too Many Requests naming the budget.
func evict(kube *kubefake.Clientset, ns, name string) error {
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	obj, err := kube.Tracker().Get(podsGVR, ns, name)
	if err != nil {
		return err
	}
	p := obj.(*corev1.Pod)
	pdbs, err := kube.Tracker().List(policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"),
		policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), ns)
	if err != nil {
		return err
	}
	for _, pdb := range pdbs.(*policyv1.PodDisruptionBudgetList).Items {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(p.Labels)) || pdb.Status.DisruptionsAllowed > 0 {
			continue
		}
		e := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		if e.ErrStatus.Details == nil {
			e.ErrStatus.Details = &metav1.StatusDetails{}
		}
		e.ErrStatus.Details.Causes = append(e.ErrStatus.Details.Causes, metav1.StatusCause{Type: "DisruptionBudget",
			Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)})
		return e
	}
	return kube.Tracker().Delete(podsGVR, ns, name)
}

// admitRuntimeClass is the API server's RuntimeClass admission: a pod naming a RuntimeClass that does not
// exist is refused, and the RuntimeClass's scheduling (node selector, tolerations) is merged into the pod.
func admitRuntimeClass(kube *kubefake.Clientset, p *corev1.Pod) error {
	if p.Spec.RuntimeClassName == nil || *p.Spec.RuntimeClassName == "" {
		return nil
	}
	obj, err := kube.Tracker().Get(nodev1.SchemeGroupVersion.WithResource("runtimeclasses"), "", *p.Spec.RuntimeClassName)
	if apierrors.IsNotFound(err) {
		return apierrors.NewForbidden(corev1.Resource("pods"), p.Name, fmt.Errorf("pod rejected: RuntimeClass %q not found", *p.Spec.RuntimeClassName))
	}
	if err != nil {
		return err
	}
	rc := obj.(*nodev1.RuntimeClass)
	if rc.Scheduling == nil {
		return nil
	}
	for k, v := range rc.Scheduling.NodeSelector {
		if old, ok := p.Spec.NodeSelector[k]; ok && old != v {
			return apierrors.NewForbidden(corev1.Resource("pods"), p.Name, fmt.Errorf("pod rejected: conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, old))
		}
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		p.Spec.NodeSelector[k] = v
	}
	p.Spec.Tolerations = append(p.Spec.Tolerations, rc.Scheduling.Tolerations...)
	return nil
}

// bind is the pods/binding subresource: the pod is assigned to the node, once.
func bind(kube *kubefake.Clientset, b *corev1.Binding) error {
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	obj, err := kube.Tracker().Get(podsGVR, b.Namespace, b.Name)
	if err != nil {
		return err
	}
	p := obj.(*corev1.Pod).DeepCopy()
	if p.Spec.NodeName != "" {
		return apierrors.NewConflict(corev1.Resource("pods/binding"), p.Name, fmt.Errorf("pod %s is already assigned to node %q", p.Name, p.Spec.NodeName))
	}
	p.Spec.NodeName = b.Target.Name
	p.Status.Conditions = append([]corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}},
		withoutScheduled(p.Status.Conditions)...)
	return kube.Tracker().Update(podsGVR, p, b.Namespace)
}

func withoutScheduled(cs []corev1.PodCondition) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range cs {
		if c.Type != corev1.PodScheduled {
			out = append(out, c)
		}
	}
	return out
}
