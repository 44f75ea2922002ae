package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	policyv1client "k8s.io/client-go/kubernetes/typed/policy/v1"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/kubectl/pkg/drain"
)

// Ops performs the node writes of wmcon's actions (cordon, uncordon, drain) and the reads they wait on,
// over the same clients the watcher uses, so real clusters and the demo behave alike.
type Ops struct {
	c Clients
	// DrainRetryDelay is the pause between evictions that a PodDisruptionBudget refused (default 2s).
	DrainRetryDelay time.Duration
}

// NewOps returns the node operations of a cluster.
func NewOps(c Clients) *Ops { return &Ops{c: c} }

func (o *Ops) retryDelay() time.Duration {
	if o.DrainRetryDelay <= 0 {
		return 2 * time.Second
	}
	return o.DrainRetryDelay
}

// NodeNotFoundError says a node named on the command line or in an action does not exist.
type NodeNotFoundError struct{ Name string }

func (e *NodeNotFoundError) Error() string {
	return fmt.Sprintf("node %q not found: check the name with 'oc get nodes' (or the console's node list)", e.Name)
}

func (o *Ops) getNode(ctx context.Context, name string) (*corev1.Node, error) {
	n, err := o.c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, &NodeNotFoundError{Name: name}
	}
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", name, err)
	}
	return n, nil
}

// Node reads one node as the console shows it.
func (o *Ops) Node(ctx context.Context, name string) (model.NodeInfo, error) {
	n, err := o.getNode(ctx, name)
	if err != nil {
		return model.NodeInfo{}, err
	}
	return NodeInfoFrom(n, ""), nil
}

// Cordon marks the node unschedulable; it reports whether it changed anything (false: already cordoned).
func (o *Ops) Cordon(ctx context.Context, name string) (bool, error) {
	return o.setCordon(ctx, name, true)
}

// Uncordon makes the node schedulable again; it reports whether it changed anything. It also removes
// configure's mark of its own cordon (config.CordonedByAnnotation): once lifted, by whoever, a later cordon
// is not that configuration's.
func (o *Ops) Uncordon(ctx context.Context, name string) (bool, error) {
	n, err := o.getNode(ctx, name)
	if err != nil {
		return false, err
	}
	_, marked := n.Annotations[config.CordonedByAnnotation] // read before the cordon helper changes n
	changed, err := o.cordonNode(ctx, n, false)
	if err != nil || !marked {
		return changed, err
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{config.CordonedByAnnotation: nil}}})
	if _, err := o.c.Kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return changed, fmt.Errorf("remove %s from node %s: %w", config.CordonedByAnnotation, name, err)
	}
	return true, nil
}

func (o *Ops) setCordon(ctx context.Context, name string, desired bool) (bool, error) {
	n, err := o.getNode(ctx, name)
	if err != nil {
		return false, err
	}
	return o.cordonNode(ctx, n, desired)
}

// cordonNode sets n's cordon to desired, read from n as last fetched.
func (o *Ops) cordonNode(ctx context.Context, n *corev1.Node, desired bool) (bool, error) {
	h := drain.NewCordonHelper(n)
	if !h.UpdateIfRequired(desired) {
		return false, nil
	}
	err, patchErr := h.PatchOrReplaceWithContext(ctx, o.c.Kube, false)
	verb := "cordon"
	if !desired {
		verb = "uncordon"
	}
	if err != nil {
		if patchErr != nil {
			return false, fmt.Errorf("%s %s: %w (merge patch: %v)", verb, n.Name, err, patchErr)
		}
		return false, fmt.Errorf("%s %s: %w", verb, n.Name, err)
	}
	return true, nil
}

// WaitNode waits, watching the node (no polling), until ok accepts it, and returns it. It fails when the
// node is deleted, and with ctx's error (wrapped with the node's last state) when ctx ends first.
func (o *Ops) WaitNode(ctx context.Context, name string, ok func(model.NodeInfo) bool) (model.NodeInfo, error) {
	nodes := o.c.Kube.CoreV1().Nodes()
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = sel
			return nodes.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = sel
			return nodes.Watch(ctx, opts)
		},
	}
	var last model.NodeInfo
	seen := false
	_, err := watchtools.UntilWithSync(ctx, cache.ToListWatcherWithWatchListSemantics(lw, o.c.Kube), &corev1.Node{}, nil,
		func(ev watch.Event) (bool, error) {
			n, isNode := ev.Object.(*corev1.Node)
			if !isNode || n.Name != name { // fake clientsets ignore field selectors
				return false, nil
			}
			if ev.Type == watch.Deleted {
				return false, fmt.Errorf("node %s was deleted while waiting for it", name)
			}
			last, seen = NodeInfoFrom(n, ""), true
			return ok(last), nil
		})
	if err == nil {
		return last, nil
	}
	if ctx.Err() != nil {
		if !seen {
			return last, fmt.Errorf("node %s never appeared: %w", name, ctx.Err())
		}
		return last, fmt.Errorf("node %s is still %s: %w", name, last.State(), ctx.Err())
	}
	return last, err
}

// Platform is the cluster's platform type from the Infrastructure object "cluster" ("AWS", "Azure", ...),
// "" on clusters without it (plain Kubernetes).
func (o *Ops) Platform(ctx context.Context) (string, error) {
	if o.c.Config == nil {
		return "", nil
	}
	inf, err := o.c.Config.ConfigV1().Infrastructures().Get(ctx, "cluster", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || isNoAPI(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read the cluster's platform (infrastructures.config.openshift.io/cluster): %w", err)
	case inf.Status.PlatformStatus != nil && inf.Status.PlatformStatus.Type != "":
		return string(inf.Status.PlatformStatus.Type), nil
	default:
		return string(inf.Status.Platform), nil //nolint:staticcheck // older clusters fill only the deprecated field
	}
}

func isNoAPI(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == 404
}

// WhoAmI is the user the API server authenticates the clients as (SelfSubjectReview), "" when it cannot
// tell (old servers, the demo).
func (o *Ops) WhoAmI(ctx context.Context) string {
	if o.c.REST == nil {
		return ""
	}
	r, err := o.c.Kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || r == nil {
		return ""
	}
	return r.Status.UserInfo.Username
}

// DrainChoices are what the user chose about a drain, as `oc adm drain`'s flags. They match the actions'
// request.DrainOptions field for field, so the actions convert one to the other (cluster.DrainChoices(o))
// and the compiler keeps the two in step; cluster imports nothing above it.
type DrainChoices struct {
	// GracePeriodSeconds given to each pod; -1 uses each pod's terminationGracePeriodSeconds, 0 deletes at once.
	GracePeriodSeconds int
	Timeout            time.Duration // for the whole drain of one node; 0 = no limit
	IgnoreDaemonSets   bool          // skip DaemonSet-managed pods (they would only come back)
	DeleteEmptyDirData bool          // drain pods with emptyDir volumes (their data is lost)
	Force              bool          // also delete pods no controller manages
	DisableEviction    bool          // delete pods instead of evicting them: bypasses PodDisruptionBudgets
}

// DrainOptions are a drain's options: what the user chose and how the drain behaves while
// PodDisruptionBudgets block it.
type DrainOptions struct {
	DrainChoices
	// OnBlocked decides what to do when PodDisruptionBudgets refuse evictions. It is called from the drain's
	// goroutine, once for each new set of blocked pods, while evictions keep being retried; its ctx ends when
	// the question becomes moot (the pods went after all, or the drain ended). nil waits.
	OnBlocked func(ctx context.Context, b PDBBlock) (BlockDecision, error)
}

// BlockDecision is the answer to a PodDisruptionBudget block.
type BlockDecision int

const (
	BlockWait            BlockDecision = iota // keep retrying the evictions (until the drain's timeout)
	BlockAbort                                // stop draining: the node stays cordoned
	BlockDisableEviction                      // delete the remaining pods instead, bypassing the budgets
)

// Budget is a PodDisruptionBudget that refuses an eviction.
type Budget struct {
	Namespace          string
	Name               string
	DisruptionsAllowed int32
	CurrentHealthy     int32
	DesiredHealthy     int32
	Pods               []string // namespace/name of the blocked pods it selects
}

// String is "ns/name (0 disruptions allowed, 2/2 healthy)".
func (b Budget) String() string {
	return fmt.Sprintf("%s/%s (%d disruptions allowed, %d healthy, %d required)", b.Namespace, b.Name,
		b.DisruptionsAllowed, b.CurrentHealthy, b.DesiredHealthy)
}

// PDBBlock is a set of pods whose eviction PodDisruptionBudgets refuse.
type PDBBlock struct {
	Budgets []Budget
	Pods    []string // namespace/name, sorted
	Reason  string   // the API server's refusal, for pods no budget could be matched to
}

// BudgetNames lists the budgets as namespace/name.
func (b PDBBlock) BudgetNames() []string {
	out := make([]string, 0, len(b.Budgets))
	for _, bu := range b.Budgets {
		out = append(out, bu.Namespace+"/"+bu.Name)
	}
	return out
}

// DrainBlockedError is a drain stopped because PodDisruptionBudgets refused evictions and the answer was abort.
// It says which pods were evicted before the abort and which are still on the node.
type DrainBlockedError struct {
	Node      string
	Block     PDBBlock
	Evicted   []string // namespace/name, eviction accepted
	Remaining []string // namespace/name, still on the node
}

func (e *DrainBlockedError) Error() string {
	budgets := strings.Join(e.Block.BudgetNames(), ", ")
	if budgets == "" {
		budgets = "a PodDisruptionBudget"
	}
	msg := fmt.Sprintf("drain of %s aborted: %s refuses the eviction of %s", e.Node, budgets, strings.Join(e.Block.Pods, ", "))
	return msg + "; evicted: " + listOrNone(e.Evicted) + "; still on the node: " + listOrNone(e.Remaining)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// DrainEventKind says what a DrainEvent reports.
type DrainEventKind string

const (
	DrainPlanned     DrainEventKind = "planned"      // the pods to go were listed: Of is their number
	DrainWarning     DrainEventKind = "warning"      // pods skipped (DaemonSets, ...) or deleted without a controller
	DrainStarted     DrainEventKind = "pod-started"  // the eviction (or deletion) of Pod was requested
	DrainPodGone     DrainEventKind = "pod-gone"     // Pod is gone: N of Of done
	DrainPodFailed   DrainEventKind = "pod-failed"   // waiting for Pod failed: Err
	DrainBlocked     DrainEventKind = "blocked"      // PodDisruptionBudgets refuse evictions: Block
	DrainUnblocked   DrainEventKind = "unblocked"    // the budgets let the blocked pods go after all
	DrainEvictionOff DrainEventKind = "eviction-off" // switching to deletion, bypassing the budgets
)

// DrainEvent is one report from Drain.
type DrainEvent struct {
	Kind     DrainEventKind
	Pod      string // namespace/name
	Eviction bool   // evicted (true) or deleted
	N, Of    int
	Message  string
	Err      error
	Block    *PDBBlock
}

// Drain evicts (or deletes) the pods of a node with kubectl's drain helper, reporting each pod to ev. It
// does not cordon: callers cordon first, as `oc adm drain` does. PodDisruptionBudgets that refuse
// evictions are reported as DrainBlocked and decided by opts.OnBlocked; an abort returns
// *DrainBlockedError. When ctx ends the drain stops and returns an error wrapping ctx's.
func (o *Ops) Drain(ctx context.Context, node string, opts DrainOptions, ev func(DrainEvent)) error {
	if ev == nil {
		ev = func(DrainEvent) {}
	}
	if _, err := o.getNode(ctx, node); err != nil {
		return err
	}
	var deadline time.Time
	if opts.Timeout > 0 {
		deadline = time.Now().Add(opts.Timeout)
	}
	for {
		if !deadline.IsZero() {
			opts.Timeout = time.Until(deadline)
			if opts.Timeout <= 0 {
				return fmt.Errorf("drain of %s timed out", node)
			}
		}
		switchToDelete, err := o.drainOnce(ctx, node, opts, ev)
		if !switchToDelete {
			return err
		}
		opts.DisableEviction = true
		ev(DrainEvent{Kind: DrainEvictionOff, Message: "eviction disabled: deleting the remaining pods directly, bypassing their PodDisruptionBudgets"})
	}
}

// drainOnce runs one pass of the helper; it reports whether the caller should run again with deletion.
func (o *Ops) drainOnce(ctx context.Context, node string, opts DrainOptions, ev func(DrainEvent)) (bool, error) {
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	blocks := newBlockTracker()
	var mu sync.Mutex
	started := map[string]bool{}
	evicted := map[string]bool{}
	done, total := 0, 0
	// stop is set the moment the user's answer ends this pass (abort, or switch to deleting): from then on
	// no eviction request is sent, even by the helper's retry loops that have not seen the cancel yet.
	var stop atomic.Bool
	observe := func(pod string, err error) {
		if err == nil {
			mu.Lock()
			evicted[pod] = true
			mu.Unlock()
		}
		blocks.observe(pod, err)
	}
	h := &drain.Helper{
		Ctx:                  dctx,
		Client:               evictionObserver{Interface: o.c.Kube, observe: observe, stopped: stop.Load, requests: ctx},
		Force:                opts.Force,
		GracePeriodSeconds:   opts.GracePeriodSeconds,
		IgnoreAllDaemonSets:  opts.IgnoreDaemonSets,
		Timeout:              opts.Timeout,
		DeleteEmptyDirData:   opts.DeleteEmptyDirData,
		DisableEviction:      opts.DisableEviction,
		EvictErrorRetryDelay: o.retryDelay(),
		Out:                  io.Discard, // every line it prints is reported through the callbacks
		ErrOut:               io.Discard,
		OnPodDeletionOrEvictionStarted: func(p *corev1.Pod, eviction bool) {
			if stop.Load() {
				return // the eviction will be refused by the observer: nothing starts
			}
			key := p.Namespace + "/" + p.Name
			mu.Lock()
			first := !started[key]
			started[key] = true
			mu.Unlock()
			if first { // the helper calls this again before every retried eviction
				ev(DrainEvent{Kind: DrainStarted, Pod: key, Eviction: eviction})
			}
		},
		OnPodDeletionOrEvictionFinished: func(p *corev1.Pod, eviction bool, err error) {
			key := p.Namespace + "/" + p.Name
			if errors.Is(err, errDrainStopped) || (err != nil && dctx.Err() != nil && ctx.Err() == nil) {
				return // the pass was ended on purpose: the final report says where each pod stands
			}
			if err != nil {
				ev(DrainEvent{Kind: DrainPodFailed, Pod: key, Eviction: eviction, Err: err})
				return
			}
			mu.Lock()
			done++
			n := done
			mu.Unlock()
			ev(DrainEvent{Kind: DrainPodGone, Pod: key, Eviction: eviction, N: n, Of: total})
		},
	}
	list, errs := h.GetPodsForDeletion(node)
	if len(errs) > 0 {
		return false, fmt.Errorf("cannot drain %s: %w", node, errors.Join(errs...))
	}
	if w := list.Warnings(); w != "" {
		ev(DrainEvent{Kind: DrainWarning, Message: w})
	}
	pods := list.Pods()
	total = len(pods)
	names := make([]string, 0, len(pods))
	byKey := map[string]corev1.Pod{}
	for _, p := range pods {
		k := p.Namespace + "/" + p.Name
		names = append(names, k)
		byKey[k] = p
	}
	ev(DrainEvent{Kind: DrainPlanned, Of: total, Message: strings.Join(names, ", ")})
	if total == 0 {
		return false, nil
	}

	result := make(chan error, 1)
	go func() { result <- h.DeleteOrEvictPods(pods) }()
	finish := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("drain of %s stopped: %w", node, ctx.Err())
		}
		if err != nil {
			return fmt.Errorf("drain of %s: %w", node, err)
		}
		return nil
	}
	asked := map[string]bool{} // pods the user already decided about
	reported := false
	for {
		select {
		case err := <-result:
			return false, finish(err)
		case <-blocks.changed:
		}
		blocked, reason := blocks.current()
		if len(blocked) == 0 {
			if reported {
				reported = false
				ev(DrainEvent{Kind: DrainUnblocked, Message: "the PodDisruptionBudgets now allow the evictions"})
			}
			continue
		}
		fresh := false
		for _, p := range blocked {
			fresh = fresh || !asked[p]
		}
		if !fresh {
			continue
		}
		block := o.describeBlock(ctx, blocked, byKey, reason)
		reported = true
		ev(DrainEvent{Kind: DrainBlocked, Block: &block, Message: blockMessage(block)})
		for _, p := range blocked {
			asked[p] = true
		}
		if opts.OnBlocked == nil {
			continue
		}
		decision, err, finished := askWhileDraining(ctx, stopOn(opts.OnBlocked, &stop), block, result)
		if finished != nil {
			return false, finish(*finished) // the pods went while the question was open
		}
		if err != nil {
			cancel()
			<-result
			return false, finish(err)
		}
		switch decision {
		case BlockAbort:
			cancel()
			<-result
			if ctx.Err() != nil {
				return false, finish(nil)
			}
			mu.Lock()
			defer mu.Unlock()
			e := &DrainBlockedError{Node: node, Block: block}
			for _, k := range names {
				if evicted[k] {
					e.Evicted = append(e.Evicted, k)
				} else {
					e.Remaining = append(e.Remaining, k)
				}
			}
			return false, e
		case BlockDisableEviction:
			cancel()
			<-result
			if ctx.Err() != nil {
				return false, finish(nil)
			}
			return true, nil
		}
	}
}

// stopOn sets stop as soon as an answer ends the eviction pass, before the drain loop even sees it.
func stopOn(ask func(context.Context, PDBBlock) (BlockDecision, error), stop *atomic.Bool) func(context.Context, PDBBlock) (BlockDecision, error) {
	return func(ctx context.Context, b PDBBlock) (BlockDecision, error) {
		d, err := ask(ctx, b)
		if err != nil || d != BlockWait {
			stop.Store(true)
		}
		return d, err
	}
}

// errDrainStopped refuses an eviction after the user stopped the pass.
var errDrainStopped = errors.New("the drain was stopped: no further eviction")

// askWhileDraining asks the question while the drain goes on; if the drain ends first the question is
// withdrawn (its ctx cancelled) and the drain's result returned instead.
func askWhileDraining(ctx context.Context, ask func(context.Context, PDBBlock) (BlockDecision, error), b PDBBlock,
	result <-chan error) (BlockDecision, error, *error) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		d   BlockDecision
		err error
	}
	answers := make(chan answer, 1)
	go func() {
		d, err := ask(actx, b)
		answers <- answer{d, err}
	}()
	select {
	case a := <-answers:
		return a.d, a.err, nil
	case err := <-result:
		cancel()
		<-answers
		return 0, nil, &err
	}
}

func blockMessage(b PDBBlock) string {
	if len(b.Budgets) == 0 {
		return fmt.Sprintf("eviction of %s refused: %s", strings.Join(b.Pods, ", "), b.Reason)
	}
	var parts []string
	for _, bu := range b.Budgets {
		parts = append(parts, fmt.Sprintf("PodDisruptionBudget %s blocks %s", bu, strings.Join(bu.Pods, ", ")))
	}
	return strings.Join(parts, "; ")
}

// describeBlock finds the PodDisruptionBudgets that select the blocked pods.
func (o *Ops) describeBlock(ctx context.Context, pods []string, byKey map[string]corev1.Pod, reason string) PDBBlock {
	return PDBBlock{Pods: pods, Reason: reason, Budgets: o.budgetsSelecting(ctx, pods, byKey)}
}

// budgetsSelecting lists the PodDisruptionBudgets that select any of pods (namespace/name, looked up in
// byKey), each with the pods it selects, by namespace/name. A namespace whose budgets cannot be listed
// contributes none.
func (o *Ops) budgetsSelecting(ctx context.Context, pods []string, byKey map[string]corev1.Pod) []Budget {
	budgets := map[string]*Budget{}
	lists := map[string][]policyv1.PodDisruptionBudget{}
	for _, key := range pods {
		pod, ok := byKey[key]
		if !ok {
			continue
		}
		pdbs, listed := lists[pod.Namespace]
		if !listed {
			l, err := o.c.Kube.PolicyV1().PodDisruptionBudgets(pod.Namespace).List(ctx, metav1.ListOptions{})
			if err == nil {
				pdbs = l.Items
			}
			lists[pod.Namespace] = pdbs
		}
		for _, pdb := range pdbs {
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
				continue
			}
			id := pdb.Namespace + "/" + pdb.Name
			bu := budgets[id]
			if bu == nil {
				bu = &Budget{Namespace: pdb.Namespace, Name: pdb.Name, DisruptionsAllowed: pdb.Status.DisruptionsAllowed,
					CurrentHealthy: pdb.Status.CurrentHealthy, DesiredHealthy: pdb.Status.DesiredHealthy}
				budgets[id] = bu
			}
			bu.Pods = append(bu.Pods, key)
		}
	}
	var out []Budget
	for _, bu := range budgets {
		out = append(out, *bu)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out
}

// blockTracker follows which pods' evictions are currently refused with 429 Too Many Requests.
type blockTracker struct {
	mu      sync.Mutex
	blocked map[string]string // namespace/name → the refusal
	changed chan struct{}     // a wake-up, never closed
}

func newBlockTracker() *blockTracker {
	return &blockTracker{blocked: map[string]string{}, changed: make(chan struct{}, 1)}
}

func (t *blockTracker) observe(key string, err error) {
	t.mu.Lock()
	_, was := t.blocked[key]
	switch {
	case apierrors.IsTooManyRequests(err):
		t.blocked[key] = refusal(err)
	case err == nil || apierrors.IsNotFound(err):
		delete(t.blocked, key)
	}
	_, is := t.blocked[key]
	t.mu.Unlock()
	if was != is {
		select {
		case t.changed <- struct{}{}:
		default:
		}
	}
}

// current is the blocked pods, sorted, and one refusal message.
func (t *blockTracker) current() ([]string, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pods := make([]string, 0, len(t.blocked))
	reason := ""
	for k, r := range t.blocked {
		pods = append(pods, k)
		reason = r
	}
	sort.Strings(pods)
	return pods, reason
}

// refusal is the API server's explanation, with the budget's own cause when it gives one.
func refusal(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		if s.Details != nil {
			for _, c := range s.Details.Causes {
				if c.Type == policyv1.DisruptionBudgetCause {
					return c.Message
				}
			}
		}
		return s.Message
	}
	return err.Error()
}

// evictionObserver passes every call through and reports each eviction's result, so that refusals by
// PodDisruptionBudgets (which the drain helper retries silently) can be shown and decided on.
// Once stopped reports true it refuses evictions without sending them.
type evictionObserver struct {
	kubernetes.Interface
	observe func(pod string, err error)
	stopped func() bool
	// requests is the context eviction requests run under: the drain's, not the helper's pass. Ending a pass
	// (abort, switch to deletion) must not cut off an eviction already sent, or the server may evict the
	// pod while the report, never told, lists it as still on the node.
	requests context.Context
}

func (e evictionObserver) PolicyV1() policyv1client.PolicyV1Interface {
	return policyObserver{PolicyV1Interface: e.Interface.PolicyV1(), observe: e.observe, stopped: e.stopped, requests: e.requests}
}

type policyObserver struct {
	policyv1client.PolicyV1Interface
	observe  func(pod string, err error)
	stopped  func() bool
	requests context.Context
}

func (p policyObserver) Evictions(ns string) policyv1client.EvictionInterface {
	return evictionsObserver{EvictionInterface: p.PolicyV1Interface.Evictions(ns), ns: ns, observe: p.observe, stopped: p.stopped, requests: p.requests}
}

type evictionsObserver struct {
	policyv1client.EvictionInterface
	ns       string
	observe  func(pod string, err error)
	stopped  func() bool
	requests context.Context
}

func (e evictionsObserver) Evict(ctx context.Context, ev *policyv1.Eviction) error {
	if e.stopped != nil && e.stopped() {
		return errDrainStopped
	}
	if e.requests != nil {
		ctx = e.requests
	}
	err := e.EvictionInterface.Evict(ctx, ev)
	e.observe(e.ns+"/"+ev.Name, err)
	return err
}
