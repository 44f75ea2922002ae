package model

import "fmt"

// DrainPlan is what draining a node would do, read from the cluster without changing anything: the pods
// that would be evicted and the PodDisruptionBudgets that cover them (wmcon reboot|drain --dry-run and the
// console's reboot and drain confirmations).
type DrainPlan struct {
	Node     string       `json:"node"`
	Cordoned bool         `json:"cordoned"`          // already unschedulable
	Pods     []string     `json:"pods"`              // namespace/name, the pods that would go
	Skipped  string       `json:"skipped,omitempty"` // what the drain leaves or deletes without eviction (DaemonSet pods, …)
	Blocker  string       `json:"blocker,omitempty"` // why the drain could not start with these options
	Budgets  []PlanBudget `json:"budgets,omitempty"` // the budgets selecting any of Pods, by namespace/name
}

// PlanBudget is a PodDisruptionBudget selecting pods a drain would evict.
type PlanBudget struct {
	Name               string   `json:"name"` // namespace/name
	DisruptionsAllowed int32    `json:"disruptionsAllowed"`
	CurrentHealthy     int32    `json:"currentHealthy"`
	DesiredHealthy     int32    `json:"desiredHealthy"`
	Pods               []string `json:"pods"` // namespace/name of the pods on the node it selects
}

// Blocks says whether the budget would refuse some of its pods' evictions as things stand: it allows
// fewer disruptions than it has pods on the node.
func (b PlanBudget) Blocks() bool { return int32(len(b.Pods)) > b.DisruptionsAllowed }

// String is "ns/name: 0 disruptions allowed (2/2 healthy) for ns/a, ns/b".
func (b PlanBudget) String() string {
	return fmt.Sprintf("%s: %d disruption(s) allowed (%d healthy, %d required) for %d pod(s) here", b.Name,
		b.DisruptionsAllowed, b.CurrentHealthy, b.DesiredHealthy, len(b.Pods))
}

// WouldBlock lists the budgets that would hold the drain up.
func (p DrainPlan) WouldBlock() []PlanBudget {
	var out []PlanBudget
	for _, b := range p.Budgets {
		if b.Blocks() {
			out = append(out, b)
		}
	}
	return out
}
