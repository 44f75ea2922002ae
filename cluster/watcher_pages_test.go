package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wmcon/wmcon/model"
)

func pageOf(names ...string) []runtime.Object {
	out := make([]runtime.Object, len(names))
	for i, n := range names {
		out[i] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
	}
	return out
}

func snapshotNames(s *model.Snapshot) []string {
	var out []string
	for _, n := range s.Nodes {
		out = append(out, n.Name)
	}
	return out
}

func latest(w *Watcher) *model.Snapshot {
	w.publish()
	var s *model.Snapshot
	for len(w.Snapshots()) > 0 {
		s = <-w.Snapshots()
	}
	return s
}

// A list that fails half-way is started over by the informer: what the failed attempt delivered is
// replaced, not shown twice; the Windows nodes' pages come first and the others' follow; once both
// informers have synced, pages of a later re-list are not shown at all.
func TestNodePagesRestartAndStopAtSync(t *testing.T) {
	w := NewWatcher(Clients{}, Target{}, WatcherOptions{})
	w.states[model.ResNodes] = model.ResourceState{Availability: model.Syncing}

	w.nodePage(windowsPart, pageOf("a", "b"), true, 3)
	first := <-w.Snapshots() // the first page is published at once, without waiting to coalesce
	if got := snapshotNames(first); len(got) != 2 || first.Resources[model.ResNodes] != (model.ResourceState{
		Availability: model.Syncing, Partial: true, Message: "3 more Windows nodes loading, then the others…"}) {
		t.Fatalf("first page: nodes %v, state %+v", got, first.Resources[model.ResNodes])
	}
	w.nodePage(windowsPart, pageOf("c"), false, 2)
	w.nodePage(windowsPart, pageOf("a", "b"), true, 3) // the list failed and started over
	w.nodePage(windowsPart, pageOf("c", "d", "e"), false, 0)
	s := latest(w)
	if got := snapshotNames(s); len(got) != 5 || got[0] != "a" || got[4] != "e" {
		t.Fatalf("after a restarted list the rows are %v, want a..e once each", got)
	}
	if st := s.Resources[model.ResNodes]; !st.Partial || st.Message != "Windows nodes listed; the other Nodes loading…" {
		t.Fatalf("state after the Windows nodes' last page: %+v", st)
	}
	w.nodePage(othersPart, pageOf("x", "y"), true, -1) // a streamed list does not say how many are to come
	s = latest(w)
	if got := snapshotNames(s); len(got) != 7 {
		t.Fatalf("with the others' first page the rows are %v", got)
	}
	if st := s.Resources[model.ResNodes]; st.Message != "2 other Nodes so far, more loading…" {
		t.Fatalf("state while the others stream: %+v", st)
	}

	w.partSynced(windowsPart)
	w.partSynced(othersPart)
	w.nodePage(othersPart, pageOf("z"), true, 0) // a re-list after a lost watch: the cache shows the rows
	s = latest(w)
	if st := s.Resources[model.ResNodes]; st.Partial || st.Availability != model.Available || w.nodesListing() != nil {
		t.Fatalf("after sync: state %+v, listing %d", st, len(w.nodesListing()))
	}
}

// While a Nodes list is in flight snapshots are gathered longer, the longer the more rows there are (each
// is rebuilt whole by the watcher and the console), but the moments the user waits for — the last page,
// every Windows node listed, the whole list in — are published at once.
func TestListingPublishesLessButItsEndsAtOnce(t *testing.T) {
	w := NewWatcher(Clients{}, Target{}, WatcherOptions{})
	w.states[model.ResNodes] = model.ResourceState{Availability: model.Syncing}
	if got := w.publishWait(); got != w.opts.Coalesce {
		t.Fatalf("before any list the wait is %s, want %s", got, w.opts.Coalesce)
	}
	w.nodePage(windowsPart, pageOf("a", "b"), true, 1)
	<-w.Snapshots() // the first page, at once
	if got := w.publishWait(); got != listingCoalesce {
		t.Fatalf("while the Windows nodes are listed the wait is %s, want %s", got, listingCoalesce)
	}
	w.nodePage(windowsPart, pageOf("c"), false, 0)
	w.partSynced(windowsPart)
	select {
	case s := <-w.Snapshots():
		if st := s.Resources[model.ResNodes]; st.Message != "Windows nodes listed; the other Nodes loading…" {
			t.Fatalf("the snapshot published when the Windows nodes synced says %+v", st)
		}
	default:
		t.Fatal("the Windows nodes' sync was not published at once")
	}
	w.nodePage(othersPart, pageOf("x"), true, 2) // neither the first page nor a last one: gathered
	if n := len(w.Snapshots()); n != 0 {
		t.Fatalf("a page between the first and the last was published at once (%d snapshots)", n)
	}
	w.nodePage(othersPart, pageOf("y", "z"), false, 0)
	select {
	case s := <-w.Snapshots():
		// (the synced Windows part's rows come from its cache, which this watcher has none of)
		if got := snapshotNames(s); len(got) != 3 || got[2] != "z" {
			t.Fatalf("the snapshot published with the last page has rows %v, want x, y and z", got)
		}
	default:
		t.Fatal("the last page of the list was not published at once")
	}
	if got := w.publishWait(); got != listingCoalesce {
		t.Fatalf("while the other nodes are listed the wait is %s, want %s", got, listingCoalesce)
	}
	w.mu.Lock()
	w.lastRows = 5000
	w.mu.Unlock()
	if got := w.publishWait(); got != 5000*listingPerRow {
		t.Fatalf("while 5,000 rows are listed the wait is %s, want %s: in proportion to the rows", got, 5000*listingPerRow)
	}
	w.mu.Lock()
	w.lastRows = 100000
	w.mu.Unlock()
	if got := w.publishWait(); got != listingCoalesceMax {
		t.Fatalf("while 100,000 rows are listed the wait is %s, want at most %s", got, listingCoalesceMax)
	}
	w.partSynced(othersPart)
	select {
	case s := <-w.Snapshots():
		if st := s.Resources[model.ResNodes]; st.Availability != model.Available || st.Partial {
			t.Fatalf("the snapshot published when every node is in says %+v", st)
		}
	default:
		t.Fatal("the end of the Nodes list was not published at once")
	}
	if got := w.publishWait(); got != w.opts.Coalesce {
		t.Fatalf("after the list the wait is %s, want %s", got, w.opts.Coalesce)
	}
}

// A snapshot the watcher has already published (the end of a list is published at once) is not published
// again when the loop gets to the change that caused it: the console would rebuild every row for nothing.
func TestNoSnapshotRepeatsTheLast(t *testing.T) {
	w := NewWatcher(Clients{}, Target{}, WatcherOptions{})
	w.signal()
	w.publish()
	<-w.Snapshots()
	w.publishChanges()
	if n := len(w.Snapshots()); n != 0 {
		t.Fatalf("%d snapshots published with nothing changed since the last", n)
	}
	w.setState(model.ResMachines, model.ResourceState{Availability: model.Available})
	w.publishChanges()
	if n := len(w.Snapshots()); n != 1 {
		t.Fatalf("%d snapshots published after a change, want 1", n)
	}
}
