package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/wmcon/wmcon/model"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/wmcon/wmcon/config"
)

// CSVResource is OLM's ClusterServiceVersion, read through the dynamic client because OLM's types are not
// part of openshift/api.
var CSVResource = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}

// WatcherOptions tune the watcher; the zero value is fine.
type WatcherOptions struct {
	// Coalesce is how long the watcher waits after a change for more changes before publishing, so that a
	// burst (the initial sync of thousands of nodes) becomes one snapshot. Default 50ms.
	Coalesce time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// NodePageSize is how many Nodes the first request of the first list asks for (default 100; later
	// requests ask for ten times as many). The console shows each page as it arrives.
	NodePageSize int64
	// Untrimmed keeps whole objects (less managedFields) in the informer caches instead of only what
	// wmcon reads; for the benchmarks that measure what trimming saves.
	Untrimmed bool
	// NodeList is how the Nodes' first list is asked for: streamed where the server allows it (default),
	// or in pages; the benchmarks measure both.
	NodeList NodeListMode
}

// Watcher follows the cluster with shared informers (list once, then watch) and publishes a new Snapshot
// after every change. It never polls the API while connected.
type Watcher struct {
	clients Clients
	target  Target
	opts    WatcherOptions

	out     chan *model.Snapshot
	changed chan struct{}

	mu      sync.Mutex
	states  map[model.Resource]model.ResourceState
	conn    model.Connection
	k8sVer  string
	probing bool
	listers listers
	seq     uint64
	last    *model.Snapshot
	// parts are the two Nodes informers' progress (Windows nodes, the others): the nodes of a first list
	// that have arrived so far are shown until every part has synced (then the caches have them all).
	parts    [nodeParts]nodePartState
	lastRows int // the node rows of the last snapshot (publishWait)

	pubMu sync.Mutex // one publisher at a time, so snapshots reach the reader in order
	// dirty: something changed since the last snapshot was built. A console rebuilds every row of each
	// snapshot (tens of milliseconds at 10,000 nodes), so one that repeats the last is not published.
	dirty atomic.Bool

	firstPage chan struct{} // closed once the Nodes list has answered (nodesAnswered)
	firstOnce sync.Once

	windowsListed chan struct{} // closed once the Windows nodes' informer has synced
	windowsOnce   sync.Once
}

// NewWatcher prepares a watcher; Run starts it.
func NewWatcher(c Clients, t Target, opts WatcherOptions) *Watcher {
	if opts.Coalesce == 0 {
		opts.Coalesce = 50 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NodePageSize == 0 {
		opts.NodePageSize = nodePageSize
	}
	w := &Watcher{
		clients: c, target: t, opts: opts,
		out:     make(chan *model.Snapshot, 1),
		changed: make(chan struct{}, 1),
		states:  map[model.Resource]model.ResourceState{},

		firstPage: make(chan struct{}), windowsListed: make(chan struct{}),
	}
	w.conn = model.Connection{Connected: true, Since: opts.Now()}
	return w
}

// Snapshots delivers the newest snapshot; an unread older one is replaced, so a slow reader never blocks
// the watcher and never sees stale data.
func (w *Watcher) Snapshots() <-chan *model.Snapshot { return w.out }

// Current returns the last published snapshot (nil before the first).
func (w *Watcher) Current() *model.Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// Run starts the informers and publishes snapshots until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	if w.clients.Conn != nil {
		w.clients.Conn.Notify(func(ok bool, err error) {
			if ok {
				w.connected()
			} else {
				w.disconnected(ctx, err)
			}
		})
	}
	// The Nodes list goes first: it is what the first screen shows and, on a large fleet, by far the
	// largest. The server version, discovery and the other informers follow once its first page is in
	// (or it failed, or firstPageWait passed), so that they do not compete with that page for the server.
	w.startNodes(ctx)
	w.publish() // the first snapshot says "loading" at once
	select {
	case <-w.firstPage:
	case <-time.After(firstPageWait):
	case <-ctx.Done():
		return
	}
	ver := w.serverVersion()
	w.mu.Lock()
	w.k8sVer = ver
	w.mu.Unlock()
	w.startInformers(ctx, w.discover(ctx))
	w.signal()
	w.loop(ctx)
}

// firstPageWait bounds how long the other informers wait for the Nodes list's first page.
const firstPageWait = time.Second

// nodesAnswered releases the rest of the start-up: the Nodes list's first page arrived or its list failed.
func (w *Watcher) nodesAnswered() { w.firstOnce.Do(func() { close(w.firstPage) }) }

// loop coalesces change signals into published snapshots.
func (w *Watcher) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.changed:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(w.publishWait()):
		}
		w.publishChanges()
	}
}

// While a Nodes list is in flight the watcher gathers changes longer before publishing: listingCoalesce,
// and listingPerRow for each row the last snapshot had, up to listingCoalesceMax. Each snapshot is rebuilt
// whole, by the watcher and then by the console (at 10,000 nodes tens of milliseconds each): published
// every 50 ms, a 10,000-node list kept a core busy redrawing rows that the next page replaced, on the cores
// that decode the list; a pause that grows with the rows keeps that work in proportion to the list rather
// than to its square. The first and last pages and each part's end are published at once whatever this says.
const (
	listingCoalesce    = 250 * time.Millisecond
	listingPerRow      = 100 * time.Microsecond
	listingCoalesceMax = time.Second
)

// publishWait is how long to gather changes before the next snapshot: longer while the Nodes are listed.
func (w *Watcher) publishWait() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.parts {
		if p.listing && !p.synced {
			wait := min(max(listingCoalesce, time.Duration(w.lastRows)*listingPerRow), listingCoalesceMax)
			return max(w.opts.Coalesce, wait)
		}
	}
	return w.opts.Coalesce
}

// publishChanges publishes a snapshot unless one published since the last change (nodePage, partSynced)
// has every change already.
func (w *Watcher) publishChanges() {
	if w.dirty.Load() {
		w.publish()
	}
}

// signal says something changed: the loop publishes a snapshot after gathering more changes.
func (w *Watcher) signal() {
	w.dirty.Store(true)
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *Watcher) publish() {
	w.pubMu.Lock()
	defer w.pubMu.Unlock()
	w.dirty.Store(false) // before reading: a change from now on is published again
	w.mu.Lock()
	w.seq++
	l := w.listers
	partial := w.nodesListing()
	if partial != nil {
		l.nodes = nil // the pages that arrived are the rows until the caches have synced
	}
	snap := build(l, buildInput{
		seq: w.seq, now: w.opts.Now(), target: w.target, k8sVersion: w.k8sVer,
		conn: w.conn, states: copyStates(w.states),
	})
	if partial != nil {
		snap.Nodes = sortedRows(partial, snap.Cluster.WMCOVersion)
	}
	w.last, w.lastRows = snap, len(snap.Nodes)
	w.mu.Unlock()
	select {
	case <-w.out:
	default:
	}
	w.out <- snap
}

func copyStates(in map[model.Resource]model.ResourceState) map[model.Resource]model.ResourceState {
	out := make(map[model.Resource]model.ResourceState, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func (w *Watcher) setState(r model.Resource, s model.ResourceState) {
	w.mu.Lock()
	changed := w.states[r] != s
	w.states[r] = s
	w.mu.Unlock()
	if changed {
		w.signal()
	}
}

func (w *Watcher) serverVersion() string {
	v, err := w.clients.Discovery.ServerVersion()
	if err != nil {
		return ""
	}
	return v.GitVersion
}

// apiGroups lists, per resource, the group/version that serves it, to ask discovery whether it exists.
var apiGroups = map[model.Resource]schema.GroupVersionResource{
	model.ResMachineSets:    {Group: "machine.openshift.io", Version: "v1beta1", Resource: "machinesets"},
	model.ResMachines:       {Group: "machine.openshift.io", Version: "v1beta1", Resource: "machines"},
	model.ResIDMS:           {Group: "config.openshift.io", Version: "v1", Resource: "imagedigestmirrorsets"},
	model.ResITMS:           {Group: "config.openshift.io", Version: "v1", Resource: "imagetagmirrorsets"},
	model.ResInfrastructure: {Group: "config.openshift.io", Version: "v1", Resource: "infrastructures"},
	model.ResNetwork:        {Group: "config.openshift.io", Version: "v1", Resource: "networks"},
	model.ResProxy:          {Group: "config.openshift.io", Version: "v1", Resource: "proxies"},
	model.ResClusterVersion: {Group: "config.openshift.io", Version: "v1", Resource: "clusterversions"},
	model.ResCSV:            CSVResource,
}

// discover asks which optional APIs exist. Core resources always do. Resources whose API is absent are
// marked NotInstalled and get no informer (an informer on a missing API would retry forever).
func (w *Watcher) discover(ctx context.Context) map[model.Resource]bool {
	present := map[model.Resource]bool{model.ResNodes: true, model.ResSecrets: true, model.ResConfigMaps: true}
	cache := map[string]map[string]bool{}
	for res, gvr := range apiGroups {
		gv := gvr.GroupVersion().String()
		names, ok := cache[gv]
		if !ok {
			names = w.groupResources(ctx, gv)
			cache[gv] = names
		}
		if names == nil || names[gvr.Resource] {
			present[res] = true // unknown (discovery failed): try the informer, which reports its own errors
			continue
		}
		w.mu.Lock()
		w.states[res] = model.ResourceState{Availability: model.NotInstalled, Message: fmt.Sprintf("%s is not available on this cluster (API %s not installed)", res, gv)}
		w.mu.Unlock()
	}
	return present
}

// groupResources returns the resource names of a group version, an empty set when the group version does
// not exist, and nil when discovery itself failed.
func (w *Watcher) groupResources(ctx context.Context, gv string) map[string]bool {
	list, err := w.clients.Discovery.ServerResourcesForGroupVersion(gv)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return map[string]bool{}
		}
		return nil
	}
	names := map[string]bool{}
	for _, r := range list.APIResources {
		names[r.Name] = true
	}
	return names
}

// listers are the read side of the informers; nil for resources that are not watched.
type listers struct {
	nodes       []cache.Indexer // the Windows nodes' informer's and the others'
	machineSets cache.Indexer
	machines    cache.Indexer
	secrets     cache.Indexer // WMCO namespace
	configMaps  cache.Indexer // WMCO namespace
	userData    cache.Indexer // openshift-machine-api/windows-user-data
	pullSecret  cache.Indexer // openshift-config/pull-secret
	idms        cache.Indexer
	itms        cache.Indexer
	infra       cache.Indexer
	network     cache.Indexer
	proxy       cache.Indexer
	cv          cache.Indexer
	csv         cache.Indexer
}

// startNodes starts the Windows nodes' informer alone and marks every other resource as loading until its
// informer starts (startInformers). The other nodes' informer starts once the Windows nodes are listed (or
// their list failed, or othersWait passed), so every Windows node is on screen before the others arrive.
func (w *Watcher) startNodes(ctx context.Context) {
	var infs [nodeParts]cache.SharedIndexInformer
	var idx []cache.Indexer
	for part := range nodeParts {
		infs[part] = nodePartInformer(w.clients.Kube, part, w.opts.NodeList, w.opts.NodePageSize, w.transform(),
			func(got []runtime.Object, start bool, remaining int64) { w.nodePage(part, got, start, remaining) })
		i, synced := w.wire(ctx, model.ResNodes, infs[part])
		idx = append(idx, i)
		go func() {
			select {
			case <-synced:
				w.partSynced(part)
			case <-ctx.Done():
			}
		}()
	}
	w.mu.Lock()
	w.listers.nodes = idx
	for _, r := range []model.Resource{model.ResSecrets, model.ResConfigMaps, model.ResUserData, model.ResPullSecret} {
		w.states[r] = model.ResourceState{Availability: model.Syncing, Message: "loading…"}
	}
	for r := range apiGroups {
		w.states[r] = model.ResourceState{Availability: model.Syncing, Message: "loading…"}
	}
	w.mu.Unlock()
	go infs[windowsPart].RunWithContext(ctx)
	go func() {
		select {
		case <-w.windowsListed:
		case <-time.After(othersWait):
		case <-ctx.Done():
			return
		}
		infs[othersPart].RunWithContext(ctx)
	}()
}

// othersWait bounds how long the other nodes' list waits for the Windows nodes' list.
const othersWait = 10 * time.Second

// nodePartState is one Nodes informer's first list: what has arrived, how much the server says is still to
// come (-1: it does not say), whether it has begun, and whether its informer has synced.
type nodePartState struct {
	nodes     []runtime.Object
	remaining int64
	listing   bool
	synced    bool
}

// nodesListing is the rows to show while some part has not synced (the synced parts' caches and the
// arrived pages of the others), nil once all have. Called with w.mu held.
func (w *Watcher) nodesListing() []model.NodeInfo {
	all := true
	for _, p := range w.parts {
		all = all && p.synced
	}
	if all {
		return nil
	}
	out := []model.NodeInfo{}
	for part, p := range w.parts {
		if p.synced && part < len(w.listers.nodes) {
			out = appendRows(out, w.listers.nodes[part].List())
			continue
		}
		for _, n := range p.nodes {
			if info, ok := rowInfo(n); ok {
				out = append(out, info)
			}
		}
	}
	return out
}

// partSynced marks one Nodes informer synced; the Nodes are Available once both are. Either is published
// at once: it is what the user waits for (every Windows node listed, the whole list), and no more pages
// of that part will come to be gathered with it.
func (w *Watcher) partSynced(part int) {
	w.mu.Lock()
	w.parts[part].synced, w.parts[part].nodes = true, nil
	all := w.parts[windowsPart].synced && w.parts[othersPart].synced
	if all {
		w.states[model.ResNodes] = model.ResourceState{Availability: model.Available}
	} else {
		w.states[model.ResNodes] = model.ResourceState{Availability: model.Syncing, Partial: true, Message: w.loadingMessage()}
	}
	w.mu.Unlock()
	if part == windowsPart {
		w.windowsOnce.Do(func() { close(w.windowsListed) })
	}
	if all {
		w.connected() // the list arrived, which proves the server is reachable (as markSynced)
	}
	w.publish()
}

// startInformers creates one informer per present resource besides the Nodes, wires change and error
// handlers, and starts them. Namespaced informers are limited to the namespaces WMCO uses, and single
// secrets outside the WMCO namespace are watched by name, so wmcon needs no cluster-wide secret access.
func (w *Watcher) startInformers(ctx context.Context, present map[model.Resource]bool) {
	c := w.clients
	wmco := informers.NewSharedInformerFactoryWithOptions(c.Kube, 0, informers.WithNamespace(config.OperatorNamespace))
	userData := byName(c, config.MachineAPINamespace, config.UserDataSecret)
	pull := byName(c, config.OpenShiftConfigNS, config.PullSecret)

	var l listers // set under the lock below: the Nodes informer already publishes snapshots that read them
	var started []cache.SharedIndexInformer
	l.secrets = w.add(ctx, model.ResSecrets, wmco.Core().V1().Secrets().Informer())
	l.configMaps = w.add(ctx, model.ResConfigMaps, wmco.Core().V1().ConfigMaps().Informer())
	l.userData = w.add(ctx, model.ResUserData, userData.Core().V1().Secrets().Informer())
	l.pullSecret = w.add(ctx, model.ResPullSecret, pull.Core().V1().Secrets().Informer())

	oi := newOpenShiftInformers(c)
	l.machineSets = w.addIf(ctx, present, &started, model.ResMachineSets, oi.machineSets)
	l.machines = w.addIf(ctx, present, &started, model.ResMachines, oi.machines)
	l.idms = w.addIf(ctx, present, &started, model.ResIDMS, oi.idms)
	l.itms = w.addIf(ctx, present, &started, model.ResITMS, oi.itms)
	l.infra = w.addIf(ctx, present, &started, model.ResInfrastructure, oi.infra)
	l.network = w.addIf(ctx, present, &started, model.ResNetwork, oi.network)
	l.proxy = w.addIf(ctx, present, &started, model.ResProxy, oi.proxy)
	l.cv = w.addIf(ctx, present, &started, model.ResClusterVersion, oi.cv)
	if c.Dynamic != nil {
		d := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.Dynamic, 0, config.OperatorNamespace, nil)
		l.csv = w.addIf(ctx, present, &started, model.ResCSV, d.ForResource(CSVResource).Informer())
	}
	w.mu.Lock()
	l.nodes = w.listers.nodes
	w.listers = l
	w.mu.Unlock()
	for _, inf := range started {
		go inf.RunWithContext(ctx)
	}
	for _, f := range []informers.SharedInformerFactory{wmco, userData, pull} {
		f.Start(ctx.Done())
	}
}

func byName(c Clients, ns, name string) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(c.Kube, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name }))
}

// addIf adds an informer for a resource whose API exists, to be started (in started) once the listers are set.
func (w *Watcher) addIf(ctx context.Context, present map[model.Resource]bool, started *[]cache.SharedIndexInformer,
	r model.Resource, inf cache.SharedIndexInformer) cache.Indexer {
	if inf == nil || !present[r] {
		return nil
	}
	*started = append(*started, inf)
	return w.add(ctx, r, inf)
}

// add wires one informer (wire) and marks its resource Available once its first list has arrived.
func (w *Watcher) add(ctx context.Context, r model.Resource, inf cache.SharedIndexInformer) cache.Indexer {
	idx, synced := w.wire(ctx, r, inf)
	go func() {
		select {
		case <-synced:
			w.markSynced(r)
		case <-ctx.Done():
		}
	}()
	return idx
}

// wire connects one informer: changes signal a new snapshot, list/watch errors update the resource and
// connection state; synced is closed once its first list is in the store and its handler has seen it.
func (w *Watcher) wire(ctx context.Context, r model.Resource, inf cache.SharedIndexInformer) (idx cache.Indexer, synced <-chan struct{}) {
	_ = inf.SetTransform(w.transform())
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.signal() },
		UpdateFunc: func(any, any) { w.signal() },
		DeleteFunc: func(any) { w.signal() },
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *cache.Reflector, err error) {
		w.watchError(ctx, r, err)
	})
	w.mu.Lock()
	if _, known := w.states[r]; !known {
		w.states[r] = model.ResourceState{Availability: model.Syncing, Message: "loading…"}
	}
	w.mu.Unlock()
	if err != nil { // only an informer that has already stopped refuses a handler
		return inf.GetIndexer(), nil
	}
	// The registration's checker closes its channel once the first list is in the store and this handler
	// has seen every object of it: no polling (cache.WaitForCacheSync looks every 100 ms, which the
	// first screen of a large cluster would wait for).
	return inf.GetIndexer(), reg.HasSyncedChecker().Done()
}

// transform is what the informers apply to every object before it enters their caches.
func (w *Watcher) transform() cache.TransformFunc {
	if w.opts.Untrimmed {
		return stripManagedFields
	}
	return trim
}

// nodePage takes one page of a part's first Nodes list: the rows that have arrived are published at once
// after the first page (the first screen does not wait for the rest) and the last, the pages between with
// the usual coalescing. Pages of a list an informer repeats after it has synced are not shown: its cache already has
// every row.
func (w *Watcher) nodePage(part int, got []runtime.Object, start bool, remaining int64) {
	defer w.nodesAnswered()
	w.mu.Lock()
	p := &w.parts[part]
	if p.synced {
		w.mu.Unlock()
		return
	}
	if start {
		p.nodes = nil // a retried list starts over: nothing from the failed attempt is shown twice
	}
	first := !w.parts[windowsPart].listing && !w.parts[othersPart].listing
	p.listing, p.remaining = true, remaining
	p.nodes = append(p.nodes, got...)
	w.states[model.ResNodes] = model.ResourceState{Availability: model.Syncing, Partial: true, Message: w.loadingMessage()}
	w.mu.Unlock()
	if first || remaining == 0 { // the first rows, and the last: what the user waits for is not held back
		w.publish()
	} else {
		w.signal()
	}
}

// loadingMessage says how much of the Nodes list is still to come. Called with w.mu held.
func (w *Watcher) loadingMessage() string {
	win, others := &w.parts[windowsPart], &w.parts[othersPart]
	switch {
	case !win.synced && win.remaining > 0:
		return fmt.Sprintf("%d more Windows nodes loading, then the others…", win.remaining)
	case !win.synced && win.remaining < 0:
		return fmt.Sprintf("%d Windows nodes so far, more loading, then the others…", len(win.nodes))
	case !others.listing:
		return "Windows nodes listed; the other Nodes loading…"
	case others.synced || others.remaining == 0:
		return "all Nodes listed, loading…"
	case others.remaining > 0:
		return fmt.Sprintf("%d more Nodes loading…", others.remaining)
	}
	return fmt.Sprintf("%d other Nodes so far, more loading…", len(others.nodes))
}

// markSynced marks r Available: its first list arrived, which also proves the server is reachable.
func (w *Watcher) markSynced(r model.Resource) {
	w.setState(r, model.ResourceState{Availability: model.Available})
	w.connected()
}

// watchError classifies a list/watch failure: RBAC denial belongs to the resource (its pane explains it,
// the others keep working); anything else means the API server is unreachable or failing, which the header
// shows until a probe sees the server again.
func (w *Watcher) watchError(ctx context.Context, r model.Resource, err error) {
	if r == model.ResNodes {
		defer w.nodesAnswered() // the rest of the start-up need not wait for a list that failed
	}
	switch {
	case apierrors.IsForbidden(err):
		w.setState(r, model.ResourceState{Availability: model.Forbidden, Message: forbiddenMessage(err)})
	case apierrors.IsNotFound(err):
		w.setState(r, model.ResourceState{Availability: model.NotInstalled, Message: fmt.Sprintf("%s is not available on this cluster", r)})
	case errors.Is(err, context.Canceled):
	default:
		w.disconnected(ctx, err)
	}
}

func forbiddenMessage(err error) string {
	return fmt.Sprintf("access denied: %v — ask a cluster admin to grant list and watch", apierrors.ReasonForError(err)) + ": " + err.Error()
}

func (w *Watcher) disconnected(ctx context.Context, err error) {
	w.mu.Lock()
	if w.conn.Connected {
		w.conn = model.Connection{Connected: false, Since: w.opts.Now(), LastError: err.Error()}
	} else {
		w.conn.LastError = err.Error()
	}
	startProbe := !w.probing
	w.probing = true
	w.mu.Unlock()
	w.signal()
	if startProbe {
		go w.probe(ctx)
	}
}

// probe asks for the server version with growing pauses until it answers. It runs only while the
// connection is lost: the informers reconnect by themselves, but a cluster with nothing changing would
// otherwise never tell us it is back.
func (w *Watcher) probe(ctx context.Context) {
	delay := 500 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		if err := Ping(ctx, w.clients, 5*time.Second); err == nil {
			ver := w.serverVersion()
			w.mu.Lock()
			w.probing = false
			if ver != "" {
				w.k8sVer = ver
			}
			w.mu.Unlock()
			w.connected()
			return
		}
		delay = min(delay*2, 5*time.Second)
	}
}

func (w *Watcher) connected() {
	w.mu.Lock()
	was := w.conn.Connected
	if !was {
		w.conn = model.Connection{Connected: true, Since: w.opts.Now()}
	}
	w.mu.Unlock()
	if !was {
		w.signal()
	}
}
