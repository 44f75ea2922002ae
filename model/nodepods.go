package model

// NodePods is what the console shows of one node's pods' resource use: their figures, the pods behind
// the node's trouble (PodPressures), and the node's capacity, which a pod without limits is drawn against.
type NodePods struct {
	Report    PodMetricsReport
	Pressures []PodPressure
	Capacity  NodeCapacity
}
