package model

import "time"

// NodeDetail is what the node details view reads when it opens, beyond the snapshot's NodeInfo: the pods
// on the node, its recent events and the Node as YAML. Each part is read on its own, so a part the user
// may not read says why (its Err) and the others are still shown.
type NodeDetail struct {
	Node      string
	Read      time.Time   // when it was read
	Pods      []PodInfo   // by namespace and name
	PodsErr   string      // why the pods could not be listed
	Events    []EventInfo // newest first
	EventsErr string
	YAML      string // the Node, without managedFields, sensitive values masked
	YAMLErr   string
}

// PodInfo is one pod on a node, as `oc get pods -o wide` shows it.
type PodInfo struct {
	Namespace string
	Name      string
	Phase     string // Running, Pending, Succeeded, Failed, Unknown
	Reason    string // a waiting or terminated container's reason (CrashLoopBackOff, ...) or the pod's
	Ready     int    // containers ready
	Total     int    // containers
	Restarts  int32
	Owner     string // the controller's kind ("DaemonSet", "ReplicaSet"), "" for a bare pod
	Created   time.Time
}

// EventInfo is one core/v1 event about a node or its Machine.
type EventInfo struct {
	Time    time.Time `json:"time"`             // when it was last seen
	Type    string    `json:"type"`             // Normal or Warning
	Reason  string    `json:"reason"`           // NodeNotReady, Rebooted, FailedCreate, ...
	Message string    `json:"message"`          // the event's own text
	Object  string    `json:"object"`           // "Node/<name>" or "Machine/<namespace>/<name>"
	Count   int32     `json:"count,omitempty"`  // how often it happened (deduplicated events)
	Source  string    `json:"source,omitempty"` // the component that reported it
}
