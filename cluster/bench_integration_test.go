package cluster_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	machineclient "github.com/openshift/client-go/machine/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/fleet"
	"github.com/wmcon/wmcon/ui"
)

// benchLabel marks the objects the benchmarks create, so that they find what an earlier benchmark left and
// remove only their own objects.
const benchLabel = "wmcon.test/bench"

// benchNodeName is the name of the i-th benchmark node; every fourth one is a Windows node.
func benchNodeName(i int) string { return fmt.Sprintf("bench-node-%05d", i) }

// benchNode is a node shaped like a real cluster's (fleetsim): managedFields of several managers, 40–60
// cached images, OpenShift's labels and annotations; every fourth one is a Windows node.
func benchNode(i int) *corev1.Node {
	n := fleet.Node(i, benchNodeName(i), fmt.Sprintf("127.%d.%d.%d", 10+i/65536, i/256%256, i%256))
	n.Labels[benchLabel] = "true"
	return n
}

// inParallel runs do(0..n-1) on a few goroutines and returns the first error.
func inParallel(n int, do func(i int) error) error {
	const workers = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int)
	)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := do(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return firstErr
}

// ensureBenchObjects makes sure benchmark nodes 0..nodes-1 and MachineSets 0..machineSets-1 exist, creating
// the missing ones; the ones it created are deleted when the benchmark ends. It returns how many nodes and
// MachineSets the server holds in all, which is what a complete snapshot shows.
func ensureBenchObjects(b *testing.B, nodes, machineSets int) (totalNodes, totalMachineSets int) {
	b.Helper()
	ctx := context.Background()
	cfg := srv.AdminConfig()
	kube := kubernetes.NewForConfigOrDie(cfg)
	machines := machineclient.NewForConfigOrDie(cfg)
	msets := machines.MachineV1beta1().MachineSets(config.MachineAPINamespace)

	existing := map[string]bool{}
	nl, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: benchLabel})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range nl.Items {
		existing[n.Name] = true
	}
	msl, err := msets.List(ctx, metav1.ListOptions{LabelSelector: benchLabel})
	if err != nil {
		b.Fatal(err)
	}
	for _, ms := range msl.Items {
		existing["ms/"+ms.Name] = true
	}

	var missingNodes []int
	var missingSets []string
	for i := range nodes {
		if !existing[benchNodeName(i)] {
			missingNodes = append(missingNodes, i)
		}
	}
	for i := range machineSets {
		if name := fmt.Sprintf("bench-winworker-%03d", i); !existing["ms/"+name] {
			missingSets = append(missingSets, name)
		}
	}
	// Registered before creating, so that a failure half-way still removes what was made.
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		err := inParallel(len(missingNodes), func(i int) error {
			err := kube.CoreV1().Nodes().Delete(ctx, benchNodeName(missingNodes[i]), metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
		err2 := inParallel(len(missingSets), func(i int) error {
			err := msets.Delete(ctx, missingSets[i], metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
		if err != nil || err2 != nil {
			b.Errorf("remove benchmark objects: %v %v", err, err2)
		}
	})
	err = inParallel(len(missingNodes), func(i int) error {
		_, err := kube.CoreV1().Nodes().Create(ctx, benchNode(missingNodes[i]), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	err = inParallel(len(missingSets), func(i int) error {
		ms := windowsMachineSet(missingSets[i])
		ms.Labels = map[string]string{benchLabel: "true"}
		_, err := msets.Create(ctx, ms, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}

	// Other tests or benchmarks may have left objects of their own: a complete snapshot shows them too.
	all, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	allSets, err := msets.List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return len(all.Items), len(allSets.Items)
}

// benchWatcher runs a watcher configured like the console's (default coalescing) on the admin identity;
// stop cancels it and waits for Run to return.
func benchWatcher(b *testing.B, opts cluster.WatcherOptions) (w *cluster.Watcher, stop func()) {
	b.Helper()
	cfg := srv.AdminConfig()
	clients, err := cluster.NewClients(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w = cluster.NewWatcher(clients, cluster.Target{Server: cfg.Host, Context: "bench"}, opts)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	return w, func() {
		cancel()
		<-done
	}
}

// waitSnapshot is waitFor for benchmarks, with a wait long enough for thousands of nodes on a busy machine.
func waitSnapshot(b *testing.B, w *cluster.Watcher, what string, ok func(*model.Snapshot) bool) *model.Snapshot {
	b.Helper()
	return waitWithin(b, w, 3*time.Minute, what, ok)
}

// hasAll accepts a snapshot with every node and MachineSet in it and both resources marked synced (the
// informers fill their stores before they report synced; until then the console still says "loading").
func hasAll(nodes, machineSets int) func(*model.Snapshot) bool {
	synced := available(model.ResNodes, model.ResMachineSets)
	return func(s *model.Snapshot) bool {
		return len(s.Nodes) == nodes && len(s.MachineSets) == machineSets && synced(s)
	}
}

// BenchmarkInitialSyncAndFirstRender measures what a user waits for when the console starts against a
// 2,000-node cluster (500 Windows nodes, 200 MachineSets): the watcher's lists and first complete snapshot,
// then the first full screen. sync-ms and render-ms split the time between the two.
func BenchmarkInitialSyncAndFirstRender(b *testing.B) {
	nodes, sets := ensureBenchObjects(b, 2000, 200)
	var syncTime, renderTime time.Duration
	iterations := 0
	for b.Loop() {
		start := time.Now()
		w, stop := benchWatcher(b, cluster.WatcherOptions{})
		snap := waitSnapshot(b, w, fmt.Sprintf("%d nodes and %d MachineSets are listed", nodes, sets), hasAll(nodes, sets))
		synced := time.Now()

		ch := make(chan *model.Snapshot, 1)
		ch <- snap
		var m tea.Model = ui.New(ui.NewProgramContext(ui.Options{NoColor: true}), ch)
		m, _ = m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
		m, _ = m.Update(m.Init()())
		v := m.(ui.Model).View()
		renderTime += time.Since(synced)
		syncTime += synced.Sub(start)
		iterations++

		stop()
		if !strings.Contains(v.Content, benchNodeName(0)) {
			b.Fatalf("the first screen does not show the first Windows node: the benchmark measures the wrong thing:\n%s", v.Content)
		}
	}
	b.ReportMetric(float64(syncTime.Milliseconds())/float64(iterations), "sync-ms")
	b.ReportMetric(float64(renderTime.Microseconds())/1000/float64(iterations), "render-ms")
}

// settledHeap is HeapInuse after a collection once the previous watcher's informer goroutines, which stop
// shortly after their context, have let go of their caches: it collects until the figure stops falling
// (bounded).
func settledHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	last := ms.HeapInuse
	for range 20 {
		time.Sleep(50 * time.Millisecond)
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse >= last-last/100 {
			return min(ms.HeapInuse, last)
		}
		last = ms.HeapInuse
	}
	return last
}

// BenchmarkHeapPerNode2000 and BenchmarkHeapPerNode10000 measure the heap in use once a watcher has synced
// a cluster of realistic nodes: KiB/node is the growth since just before the watcher started (informer
// caches, the published snapshot, clients) divided by the nodes, MiB-heap-watcher that growth, MiB-heap the
// whole test process. "trimmed" is the console's watcher; "untrimmed" keeps whole objects less
// managedFields, as wmcon did before its informers trimmed what they cache. WMCON_HEAPPROF=file writes the
// trimmed watcher's heap profile at that moment (run with -test.memprofilerate 4096 for a fine one).
func BenchmarkHeapPerNode2000(b *testing.B)  { benchmarkHeapPerNode(b, 2000) }
func BenchmarkHeapPerNode10000(b *testing.B) { benchmarkHeapPerNode(b, 10000) }

func benchmarkHeapPerNode(b *testing.B, size int) {
	nodes, sets := ensureBenchObjects(b, size, 0)
	for _, mode := range []struct {
		name string
		opts cluster.WatcherOptions
	}{{"trimmed", cluster.WatcherOptions{}}, {"untrimmed", cluster.WatcherOptions{Untrimmed: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			var ms runtime.MemStats
			var heap, growth float64
			iterations := 0
			for b.Loop() {
				b.StopTimer()
				baseline := settledHeap()
				b.StartTimer()

				w, stop := benchWatcher(b, mode.opts)
				snap := waitSnapshot(b, w, fmt.Sprintf("%d nodes are listed", nodes), hasAll(nodes, sets))
				runtime.GC()
				runtime.ReadMemStats(&ms)
				if f := os.Getenv("WMCON_HEAPPROF"); f != "" && mode.name == "trimmed" {
					out, _ := os.Create(f)
					_ = pprof.WriteHeapProfile(out)
					out.Close()
				}
				heap += float64(ms.HeapInuse)
				growth += float64(ms.HeapInuse) - float64(baseline)
				iterations++
				runtime.KeepAlive(snap)
				runtime.KeepAlive(w)
				stop()
			}
			b.ReportMetric(growth/float64(iterations)/float64(nodes)/1024, "KiB/node")
			b.ReportMetric(growth/float64(iterations)/(1<<20), "MiB-heap-watcher")
			b.ReportMetric(heap/float64(iterations)/(1<<20), "MiB-heap")
		})
	}
}

// realisticSnapshot is what the console shows of a cluster of size realistic nodes (sim/fleet,
// every fourth one Windows), built by the watcher's own NodeInfoFrom, with the nodes listed.
func realisticSnapshot(size int) *model.Snapshot {
	s := &model.Snapshot{Taken: fleet.Epoch, Connection: model.Connection{Connected: true},
		Cluster:   model.ClusterInfo{Platform: "AWS", WMCOVersion: "10.20.1-8c2f1a3"},
		Resources: map[model.Resource]model.ResourceState{model.ResNodes: {Availability: model.Available}}}
	for i := range size {
		n := fleet.Node(i, fmt.Sprintf("ip-127-%d-%d-%d.us-east-2.compute.internal", i/65536, i/256%256, i%256),
			fmt.Sprintf("127.%d.%d.%d", i/65536, i/256%256, i%256))
		s.Nodes = append(s.Nodes, cluster.NodeInfoFrom(n, s.Cluster.WMCOVersion))
	}
	return s
}

// BenchmarkFilterKeystroke10000 measures one filter keystroke (Update + View, at 200×50) over 10,000
// realistic nodes; it must stay under a 16 ms frame. Keystrokes alternate between typing and deleting a
// character so that every iteration really refilters.
func BenchmarkFilterKeystroke10000(b *testing.B) {
	ch := make(chan *model.Snapshot, 1)
	ch <- realisticSnapshot(10000)
	var m tea.Model = ui.New(ui.NewProgramContext(ui.Options{NoColor: true}), ch)
	m, _ = m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	m, _ = m.Update(m.Init()())
	for _, r := range "/ip-127-0-1" {
		m, _ = m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	keys := []tea.Msg{tea.KeyPressMsg{Code: '2', Text: "2"}, tea.KeyPressMsg{Code: tea.KeyBackspace}}
	b.ReportAllocs()
	i := 0
	var v tea.View
	for b.Loop() {
		m, _ = m.Update(keys[i%2])
		v = m.(ui.Model).View()
		i++
	}
	if !strings.Contains(v.Content, "ip-127-0-1") || !strings.Contains(v.Content, ".compute.internal") {
		b.Fatalf("the filtered pane shows no matching node: the benchmark measures the wrong thing:\n%s", v.Content)
	}
}

// BenchmarkFirstRows10000 measures the time to the first useful screen at 10,000 realistic nodes (2,500
// Windows), with the Nodes' first lists streamed from the API server's watch cache and in pages: from the
// watcher's start to the first screen that shows node rows (first-rows-ms: the first batch, rendered at
// 200×50, with what is still loading), to every Windows node listed (windows-ms), and to the complete,
// synced list (full-ms); peak-heap-MiB is the most heap (live objects and garbage not yet swept) the test
// process held meanwhile, sampled every 5 ms: what a list holds decoded at once shows there.
func BenchmarkFirstRows10000(b *testing.B) {
	nodes, sets := ensureBenchObjects(b, 10000, 0)
	windows := 0
	for i := range 10000 {
		if fleet.Windows(i) {
			windows++
		}
	}
	for _, mode := range []struct {
		name string
		list cluster.NodeListMode
	}{{"stream", cluster.NodeListStream}, {"pages", cluster.NodeListPages}} {
		b.Run(mode.name, func(b *testing.B) {
			var firstTime, winTime, fullTime time.Duration
			var peak float64
			iterations := 0
			for b.Loop() {
				b.StopTimer()
				settledHeap() // the previous iteration's garbage is not this one's peak
				b.StartTimer()
				stopSampling := samplePeakHeap()
				start := time.Now()
				w, stop := benchWatcher(b, cluster.WatcherOptions{NodeList: mode.list})
				snap := waitSnapshot(b, w, "the first nodes arrived", func(s *model.Snapshot) bool { return len(s.Nodes) > 0 })
				ch := make(chan *model.Snapshot, 1)
				ch <- snap
				var m tea.Model = ui.New(ui.NewProgramContext(ui.Options{NoColor: true}), ch)
				m, _ = m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
				m, _ = m.Update(m.Init()())
				v := m.(ui.Model).View()
				firstTime += time.Since(start)
				waitSnapshot(b, w, "every Windows node is listed", func(s *model.Snapshot) bool { return len(s.WindowsNodes()) >= windows })
				winTime += time.Since(start)
				waitSnapshot(b, w, fmt.Sprintf("%d nodes are listed", nodes), hasAll(nodes, sets))
				fullTime += time.Since(start)
				peak += stopSampling()
				iterations++
				stop()
				if len(snap.Nodes) >= nodes || !strings.Contains(v.Content, "loading") || !strings.Contains(v.Content, snap.Nodes[0].Name) {
					b.Fatalf("the first screen (%d of %d nodes) does not show the first rows and what is still loading:\n%s",
						len(snap.Nodes), nodes, v.Content)
				}
			}
			b.ReportMetric(float64(firstTime.Microseconds())/1000/float64(iterations), "first-rows-ms")
			b.ReportMetric(float64(winTime.Milliseconds())/float64(iterations), "windows-ms")
			b.ReportMetric(float64(fullTime.Milliseconds())/float64(iterations), "full-ms")
			b.ReportMetric(peak/float64(iterations)/(1<<20), "peak-heap-MiB")
		})
	}
}

// samplePeakHeap samples the heap's objects (live and not yet swept) every 5 ms until the returned stop is
// called, which returns the highest sample in bytes. runtime/metrics does not stop the world, as
// ReadMemStats would.
func samplePeakHeap() (stop func() float64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	result := make(chan float64, 1)
	go func() {
		var peak uint64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				result <- float64(peak)
				return
			case <-tick.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		return <-result
	}
}
