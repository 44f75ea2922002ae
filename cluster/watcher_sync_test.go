package cluster

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/fleet"
)

// TestSyncIsNoticedWithoutPolling runs the watcher in a synctest bubble, where time moves only when every
// goroutine waits: the snapshot that says the nodes are listed must be published at most one coalescing
// interval after the list arrived, not after a poll period (cache.WaitForCacheSync looks every 100 ms), and once
// everything is synced nothing may wake up again (no poll, no re-list) for as long as the cluster is quiet.
func TestSyncIsNoticedWithoutPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var objs []runtime.Object
		for i := range 20 {
			objs = append(objs, fleet.Node(i, fmt.Sprintf("node-%02d", i), fmt.Sprintf("127.0.0.%d", i+1)))
		}
		kube := kubefake.NewClientset(objs...)
		const coalesce = 30 * time.Millisecond
		w := NewWatcher(Clients{Kube: kube, Discovery: kube.Discovery()}, Target{}, WatcherOptions{Coalesce: coalesce})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		start := time.Now()
		go func() {
			defer close(done)
			w.Run(ctx)
		}()
		defer func() {
			cancel()
			<-done
		}()

		var listed *model.Snapshot
		var at time.Duration
		for listed == nil {
			s := <-w.Snapshots()
			if s.Resources[model.ResNodes].Availability == model.Available {
				listed, at = s, time.Since(start)
			}
		}
		assert.Len(t, listed.Nodes, 20, "the snapshot that says the nodes are listed shows them")
		// At most one coalescing interval after the list (the first page of nodes is published at once,
		// and may already find them synced), never a poll period later.
		assert.LessOrEqual(t, at, coalesce, "the list was noticed as it arrived")

		// Idle: once the last change is published, a quiet cluster publishes nothing more and lists nothing
		// again, whatever time passes.
		time.Sleep(time.Second)
		synctest.Wait()
		seq, lists := w.Current().Seq, listCalls(kube)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, seq, w.Current().Seq, "nothing was published while the cluster was quiet")
		assert.Equal(t, lists, listCalls(kube), "nothing was listed again while the cluster was quiet")
		assert.Positive(t, lists)
	})
}

// listCalls counts the list requests the fake clientset has served.
func listCalls(kube *kubefake.Clientset) int {
	n := 0
	for _, a := range kube.Actions() {
		if a.GetVerb() == "list" {
			n++
		}
	}
	return n
}
