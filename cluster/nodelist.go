package cluster

import (
	"context"
	"errors"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/wmcon/wmcon/config"
)

// NodeListMode is how the Nodes informers take their first list.
type NodeListMode int

const (
	// NodeListStream asks the API server to stream the list as watch events from its watch cache
	// (sendInitialEvents, Kubernetes' WatchList), where the server allows it, and falls back to pages
	// otherwise. Each node is decoded and trimmed as it arrives while the server sends the next, and the
	// answer is not compressed.
	NodeListStream NodeListMode = iota
	// NodeListPages asks for pages (limit/continue): gzip-compressed, one page decoded at a time.
	NodeListPages
)

// The Nodes are watched by two informers: the Windows nodes, whose list goes first (a Windows console's
// useful screen), and the others, listed once the Windows nodes are in. A node whose kubernetes.io/os
// label changes moves from one to the other (the label-selected watches say DELETED and ADDED).
const (
	windowsPart = iota
	othersPart
	nodeParts
)

var nodeSelectors = [nodeParts]string{
	windowsPart: config.OSLabel + "=windows",
	othersPart:  config.OSLabel + "!=windows",
}

// initialEventsEnd is the annotation of the bookmark that ends a streamed list.
const initialEventsEnd = "k8s.io/initial-events-end"

// errStreamCut is a streamed list that ended before its closing bookmark.
var errStreamCut = errors.New("the streamed Nodes list ended before its end-of-list bookmark")

// nodeLister lists one part of the Nodes for its informer, handing each batch to onPage as it arrives.
type nodeLister struct {
	nodes    corev1client.NodeInterface
	selector string
	pageSize int64
	trim     cache.TransformFunc
	onPage   nodePage
	// stream is whether to try streaming; refused records that the server would not stream (an older or
	// configured-off API server), so later lists go straight to pages.
	stream  bool
	refused atomic.Bool
}

// nodePartInformer is the informer of one part of the Nodes: its list streams or pages as mode says, and
// its watch starts where that list ended.
func nodePartInformer(c kubernetes.Interface, part int, mode NodeListMode, pageSize int64, trim cache.TransformFunc,
	onPage nodePage) cache.SharedIndexInformer {
	l := &nodeLister{nodes: c.CoreV1().Nodes(), selector: nodeSelectors[part], pageSize: pageSize, trim: trim,
		onPage: onPage, stream: mode == NodeListStream && restBacked(c)}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) { return l.list(ctx) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = l.selector
			w, err := l.nodes.Watch(ctx, o)
			if err != nil {
				return nil, err
			}
			return watch.Filter(w, inPart(part)), nil
		},
	}
	// The reflector's own streaming is off (noWatchList): it hands the informer nothing until the end of the
	// list, while l.list shows every batch as it comes.
	return cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, noWatchList{}),
		&corev1.Node{}, 0, cache.Indexers{})
}

// inPart keeps a watch to the part's nodes. The API server already does (a node that leaves the part
// arrives as DELETED); the demo's fake clientsets send every node to every watch, so a node of the other
// part is dropped, and one that changed part is deleted from this one.
func inPart(part int) watch.FilterFunc {
	return func(ev watch.Event) (watch.Event, bool) {
		n, ok := ev.Object.(*corev1.Node)
		if !ok || ev.Type != watch.Added && ev.Type != watch.Modified || (n.Labels[config.OSLabel] == "windows") == (part == windowsPart) {
			return ev, true // bookmarks, deletions and errors pass
		}
		if ev.Type == watch.Modified {
			return watch.Event{Type: watch.Deleted, Object: ev.Object}, true
		}
		return ev, false
	}
}

// restBacked says the clientset talks to an API server (the demo's fake clientsets do not stream lists).
func restBacked(c kubernetes.Interface) bool {
	rc, ok := c.CoreV1().RESTClient().(*rest.RESTClient)
	return ok && rc != nil
}

func (l *nodeLister) list(ctx context.Context) (runtime.Object, error) {
	if l.stream && !l.refused.Load() {
		out, err := l.listStream(ctx)
		if err == nil || !streamRefused(err) {
			return out, err
		}
		l.refused.Store(true)
	}
	return l.listPages(ctx)
}

// streamRefused says a streamed list failed because the server does not stream lists: it rejected the
// request (WatchList off), or it answered as a plain watch without the closing bookmark (too old).
func streamRefused(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) || errors.Is(err, errStreamCut)
}

// listStream lists the part as the server's stream of initial events, consistent with the newest state
// (resourceVersionMatch=NotOlderThan with no version), up to the bookmark that closes it.
func (l *nodeLister) listStream(ctx context.Context) (runtime.Object, error) {
	send := true
	w, err := l.nodes.Watch(ctx, metav1.ListOptions{LabelSelector: l.selector, SendInitialEvents: &send,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	out := &metav1.List{}
	batch, size, start := []runtime.Object(nil), l.pageSize, true
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added: // a list's initial events are all ADDED
			n, err := l.trimmed(ev.Object)
			if err != nil {
				return nil, err
			}
			out.Items = append(out.Items, runtime.RawExtension{Object: n})
			if batch = append(batch, n); int64(len(batch)) >= size {
				l.onPage(batch, start, -1)
				batch, size, start = nil, l.pageSize*nodePageGrowth, false
			}
		case watch.Bookmark:
			m, err := meta.Accessor(ev.Object)
			if err != nil || m.GetAnnotations()[initialEventsEnd] != "true" {
				continue
			}
			out.ResourceVersion = m.GetResourceVersion()
			l.onPage(batch, start, 0)
			return out, nil
		case watch.Error:
			return nil, apierrors.FromObject(ev.Object)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, errStreamCut
}

// trimmed is a listed node as the informer caches it (its transform).
func (l *nodeLister) trimmed(obj runtime.Object) (runtime.Object, error) {
	if _, ok := obj.(*corev1.Node); !ok {
		return nil, errors.New("the Nodes list returned something other than a Node")
	}
	t, err := l.trim(obj)
	if err != nil {
		return nil, err
	}
	n, ok := t.(runtime.Object)
	if !ok {
		return nil, errors.New("the Nodes transform returned something other than an object")
	}
	return n, nil
}

// listPages lists the part page by page. The reflector's own options are not used: its first list asks
// for resourceVersion 0, which the API server answers from its watch cache in one piece whatever the
// limit; the newest state is never older than what the reflector asks for.
func (l *nodeLister) listPages(ctx context.Context) (runtime.Object, error) {
	out := &metav1.List{}
	opts := metav1.ListOptions{LabelSelector: l.selector, Limit: l.pageSize}
	for {
		page, err := l.nodes.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		start := opts.Continue == ""
		if start {
			out.ResourceVersion = page.ResourceVersion
		}
		got := make([]runtime.Object, 0, len(page.Items))
		for i := range page.Items {
			n, err := l.trimmed(&page.Items[i])
			if err != nil {
				return nil, err
			}
			got = append(got, n)
			out.Items = append(out.Items, runtime.RawExtension{Object: n})
		}
		remaining := int64(-1)
		if page.RemainingItemCount != nil {
			remaining = *page.RemainingItemCount
		}
		if page.Continue == "" {
			remaining = 0
		}
		l.onPage(got, start, remaining)
		if page.Continue == "" {
			return out, nil
		}
		opts.Continue = page.Continue
		opts.Limit = l.pageSize * nodePageGrowth
	}
}
