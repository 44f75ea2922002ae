package cluster

import (
	"context"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/wmcon/wmcon/config"
)

// informerFor builds a shared informer from a typed client's List and Watch. openshift/client-go's
// generated informers predate client-go's watch-list negotiation, so a client that cannot stream lists
// (the demo's fake clientsets) would wait forever for the end-of-list bookmark; wrapping the list-watch
// with the client lets the reflector fall back to a plain list for such clients.
func informerFor[L runtime.Object](client any, obj runtime.Object,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return list(ctx, o) },
		WatchFuncWithContext: watchFn,
	}
	return cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, client), obj, 0, cache.Indexers{})
}

// openshiftInformers creates the informers of the OpenShift APIs wmcon reads.
type openshiftInformers struct {
	machineSets, machines, idms, itms, infra, network, proxy, cv cache.SharedIndexInformer
}

func newOpenShiftInformers(c Clients) openshiftInformers {
	var o openshiftInformers
	if c.Machine != nil {
		ms := c.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace)
		m := c.Machine.MachineV1beta1().Machines(config.MachineAPINamespace)
		o.machineSets = informerFor(c.Machine, &machinev1beta1.MachineSet{}, ms.List, ms.Watch)
		o.machines = informerFor(c.Machine, &machinev1beta1.Machine{}, m.List, m.Watch)
	}
	if c.Config != nil {
		v1 := c.Config.ConfigV1()
		o.idms = informerFor(c.Config, &configv1.ImageDigestMirrorSet{}, v1.ImageDigestMirrorSets().List, v1.ImageDigestMirrorSets().Watch)
		o.itms = informerFor(c.Config, &configv1.ImageTagMirrorSet{}, v1.ImageTagMirrorSets().List, v1.ImageTagMirrorSets().Watch)
		o.infra = informerFor(c.Config, &configv1.Infrastructure{}, v1.Infrastructures().List, v1.Infrastructures().Watch)
		o.network = informerFor(c.Config, &configv1.Network{}, v1.Networks().List, v1.Networks().Watch)
		o.proxy = informerFor(c.Config, &configv1.Proxy{}, v1.Proxies().List, v1.Proxies().Watch)
		o.cv = informerFor(c.Config, &configv1.ClusterVersion{}, v1.ClusterVersions().List, v1.ClusterVersions().Watch)
	}
	return o
}

// nodePageSize is how many Nodes the first request of the first list asks for: few enough that the first
// rows arrive and decode within tens of milliseconds even while the console itself starts (50 realistic
// nodes are 0.75 MB of protobuf). Later requests ask for nodePageGrowth times as many: on the test tier a
// 10,000-node list in pages of 500 took 3.3 s and in pages of 50 6.8 s, and a page is the most the client
// holds decoded at once, so larger pages would cost memory for little time.
const (
	nodePageSize   = 50
	nodePageGrowth = 10
)

// nodePage reports one page of the Nodes list as it arrives: got is the page's nodes as the informer caches
// them (rows, or whole Nodes with WatcherOptions.Untrimmed), start says
// that a new list began (a retried list starts over, so what an earlier attempt delivered is replaced),
// remaining is how many more the server says are to come (-1 when it does not say).
type nodePage func(got []runtime.Object, start bool, remaining int64)

// noWatchList marks a list-watch that must not be streamed: a streamed list delivers nothing to the
// informer until its end-of-list bookmark, while paged lists can be shown page by page.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
