package cluster

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/drain"

	"github.com/wmcon/wmcon/model"
)

// PlanDrain reads what draining node with opts would do, changing nothing: the pods kubectl's drain
// library would evict (the same selection a real drain makes), what it would skip, and the
// PodDisruptionBudgets selecting those pods with how many disruptions each allows now. A drain that could
// not start with these options (pods without a controller and no force, …) is a plan with a Blocker, not
// an error; a node that cannot be read is an error.
func (o *Ops) PlanDrain(ctx context.Context, node string, opts DrainChoices) (model.DrainPlan, error) {
	n, err := o.getNode(ctx, node)
	if err != nil {
		return model.DrainPlan{}, err
	}
	plan := model.DrainPlan{Node: node, Cordoned: n.Spec.Unschedulable, Pods: []string{}}
	h := &drain.Helper{Ctx: ctx, Client: o.c.Kube, Force: opts.Force, IgnoreAllDaemonSets: opts.IgnoreDaemonSets,
		DeleteEmptyDirData: opts.DeleteEmptyDirData, GracePeriodSeconds: opts.GracePeriodSeconds}
	list, errs := h.GetPodsForDeletion(node)
	if len(errs) > 0 {
		if ctx.Err() != nil {
			return plan, ctx.Err()
		}
		plan.Blocker = fmt.Sprintf("the drain could not start: %v", errors.Join(errs...))
		return plan, nil
	}
	plan.Skipped = list.Warnings()
	byKey := map[string]corev1.Pod{}
	for _, p := range list.Pods() {
		k := p.Namespace + "/" + p.Name
		plan.Pods = append(plan.Pods, k)
		byKey[k] = p
	}
	for _, b := range o.budgetsSelecting(ctx, plan.Pods, byKey) {
		plan.Budgets = append(plan.Budgets, model.PlanBudget{Name: b.Namespace + "/" + b.Name, DisruptionsAllowed: b.DisruptionsAllowed,
			CurrentHealthy: b.CurrentHealthy, DesiredHealthy: b.DesiredHealthy, Pods: b.Pods})
	}
	return plan, nil
}
