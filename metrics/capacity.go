package metrics

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/wmcon/wmcon/model"
)

// NodeCapacityOf reads a node's cores and memory out of its status.capacity as the snapshot keeps it
// (model.NodeInfo.Capacity: "4", "16Gi"); a missing or unreadable quantity is 0 (unknown).
func NodeCapacityOf(capacity map[string]string) model.NodeCapacity {
	return model.NodeCapacity{CPUCores: quantity(capacity["cpu"]), MemoryBytes: quantity(capacity["memory"])}
}

func quantity(s string) float64 {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0
	}
	return q.AsApproximateFloat64()
}
