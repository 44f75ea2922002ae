package cluster

import (
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wmcon/wmcon/model"
)

// nodeRow is what the Nodes informers cache of a Node: the console's row for it, built once as the node
// arrives, instead of the object it was built from. A fleet of 10,000 nodes then holds each node once,
// in the form the snapshot copies, and no snapshot rebuilds a row. The row keeps every label and
// annotation (the detail view lists them, host-key pins and key checks read them); their repeated
// strings, and the capacity a fleet's nodes share, are held once (nodeStrings).
type nodeRow struct {
	resourceVersion string
	info            model.NodeInfo // without what depends on the operator's version: see withOperator
}

// rowOf is n's row.
func rowOf(n *corev1.Node) *nodeRow {
	info := nodeInfo(trimNode(n))
	info.Capacity = nodeStrings.shareMap(info.Capacity)
	info.Allocatable = nodeStrings.shareMap(info.Allocatable)
	info.Taints = nodeStrings.strings(info.Taints)
	info.Roles = nodeStrings.strings(info.Roles)
	return &nodeRow{resourceVersion: n.ResourceVersion, info: info}
}

// GetObjectMeta gives the informer what it keys and tracks a row by (the node's name) as metadata made on
// demand: a row holds no ObjectMeta of its own.
func (r *nodeRow) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: r.info.Name, UID: types.UID(r.info.UID), ResourceVersion: r.resourceVersion}
}

// GetObjectKind and DeepCopyObject make a row a runtime.Object, which the lists handed to the informer
// hold.
func (r *nodeRow) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (r *nodeRow) DeepCopyObject() runtime.Object {
	c := *r
	c.info.Roles = slices.Clone(r.info.Roles)
	c.info.Conditions = slices.Clone(r.info.Conditions)
	c.info.Taints = slices.Clone(r.info.Taints)
	c.info.Capacity = maps.Clone(r.info.Capacity)
	c.info.Allocatable = maps.Clone(r.info.Allocatable)
	c.info.Labels = maps.Clone(r.info.Labels)
	c.info.Annotations = maps.Clone(r.info.Annotations)
	return &c
}

// rowInfo is the row of a cached Nodes object: a row, or a whole Node (WatcherOptions.Untrimmed, and
// lists of clients that deliver Nodes untransformed).
func rowInfo(o any) (model.NodeInfo, bool) {
	switch n := o.(type) {
	case *nodeRow:
		return n.info, true
	case *corev1.Node:
		return nodeInfo(n), true
	}
	return model.NodeInfo{}, false
}

// sortedRows are the Nodes rows, Windows first, then by name, with what depends on the operator's version.
// rows is sorted in place.
func sortedRows(rows []model.NodeInfo, operatorVersion string) []model.NodeInfo {
	for i := range rows {
		withOperator(&rows[i], operatorVersion)
	}
	sort.Slice(rows, func(a, b int) bool {
		x, y := &rows[a], &rows[b]
		if x.Windows != y.Windows {
			return x.Windows
		}
		return x.Name < y.Name
	})
	return rows
}

// shareMap returns the one held copy of a small string map equal to m (a node's capacity or allocatable:
// nodes of one instance type report the same), remembering m when there is room. Nil stays nil.
func (in *interner) shareMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	key := b.String()
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.maps == nil {
		in.maps = map[string]map[string]string{}
	}
	if c, ok := in.maps[key]; ok {
		return c
	}
	if len(in.maps) >= internLimit {
		return m
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[in.get(k, internMaxLen)] = in.get(v, internMaxLen)
	}
	in.maps[key] = c
	return c
}

// strings shares the strings of ss (taints, roles) in place.
func (in *interner) strings(ss []string) []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	for i, s := range ss {
		ss[i] = in.get(s, internMaxLen)
	}
	return ss
}
