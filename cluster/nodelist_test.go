package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/wmcon/wmcon/config"
)

// A watch that sends every node (the demo's fake clientsets ignore label selectors) reaches each Nodes
// informer with its own part only; a node that changed part leaves the other; bookmarks pass.
func TestNodeWatchKeepsItsPart(t *testing.T) {
	node := func(os string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{config.OSLabel: os}}}
	}
	win, others := inPart(windowsPart), inPart(othersPart)
	for _, c := range []struct {
		filter watch.FilterFunc
		in     watch.Event
		keep   bool
		as     watch.EventType
	}{
		{win, watch.Event{Type: watch.Added, Object: node("windows")}, true, watch.Added},
		{win, watch.Event{Type: watch.Added, Object: node("linux")}, false, ""},
		{others, watch.Event{Type: watch.Added, Object: node("linux")}, true, watch.Added},
		{others, watch.Event{Type: watch.Added, Object: node("windows")}, false, ""},
		{win, watch.Event{Type: watch.Modified, Object: node("linux")}, true, watch.Deleted},
		{win, watch.Event{Type: watch.Deleted, Object: node("linux")}, true, watch.Deleted},
		{win, watch.Event{Type: watch.Bookmark, Object: &corev1.Node{}}, true, watch.Bookmark},
	} {
		got, keep := c.filter(c.in)
		if keep != c.keep || keep && got.Type != c.as {
			t.Errorf("%s of a %s node: kept %v as %s, want %v as %s", c.in.Type, c.in.Object.(*corev1.Node).Labels[config.OSLabel], keep, got.Type, c.keep, c.as)
		}
	}
}
