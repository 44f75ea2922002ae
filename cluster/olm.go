package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	olm "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/config"
)

// OLM's resources, read and written through the dynamic client with operator-framework/api's types (OLM ships
// no typed clientset wmcon could use).
var (
	SubscriptionResource    = schema.GroupVersionResource{Group: olm.GroupName, Version: olm.GroupVersion, Resource: "subscriptions"}
	InstallPlanResource     = schema.GroupVersionResource{Group: olm.GroupName, Version: olm.GroupVersion, Resource: "installplans"}
	CatalogSourceResource   = schema.GroupVersionResource{Group: olm.GroupName, Version: olm.GroupVersion, Resource: "catalogsources"}
	OperatorGroupResource   = schema.GroupVersionResource{Group: operatorsv1.GroupVersion.Group, Version: operatorsv1.GroupVersion.Version, Resource: "operatorgroups"}
	PackageManifestResource = schema.GroupVersionResource{Group: "packages.operators.coreos.com", Version: "v1", Resource: "packagemanifests"}
)

// Where WMCO comes from.
const (
	MarketplaceNamespace  = "openshift-marketplace"
	DefaultCatalogSource  = "redhat-operators"
	OKDCatalogSource      = "community-operators"
	DefaultChannel        = "stable"
	ClusterMonitoringKey  = "openshift.io/cluster-monitoring"
	OperatorDeploymentKey = "windows-machine-config-operator"
)

// InstallOptions say which WMCO to subscribe to.
type InstallOptions struct {
	Channel         string
	Approval        olm.Approval
	Source          string
	SourceNamespace string
}

// Defaults fills the documented defaults and checks the approval.
func (o InstallOptions) Defaults() (InstallOptions, error) {
	if o.Channel == "" {
		o.Channel = DefaultChannel
	}
	if o.Approval == "" {
		o.Approval = olm.ApprovalAutomatic
	}
	if o.Source == "" {
		o.Source = DefaultCatalogSource
	}
	if o.SourceNamespace == "" {
		o.SourceNamespace = MarketplaceNamespace
	}
	if o.Approval != olm.ApprovalAutomatic && o.Approval != olm.ApprovalManual {
		return o, fmt.Errorf("approval %q: use Automatic or Manual", o.Approval)
	}
	return o, nil
}

// OperatorState is what OLM says about WMCO in its namespace. Nil pointers mean "not there".
type OperatorState struct {
	Namespace     bool
	OperatorGroup *operatorsv1.OperatorGroup
	Subscription  *olm.Subscription
	InstallPlan   *olm.InstallPlan
	CSV           *olm.ClusterServiceVersion
	Deployment    *appsv1.Deployment
	Pods          []OperatorPod // the operator's pods and their health
	Log           []string      // the last lines of the running pod's log
	LogErr        string        // why they could not be read
}

// Installed is true when the operator's CSV succeeded.
func (s OperatorState) Installed() bool {
	return s.CSV != nil && s.CSV.Status.Phase == olm.CSVPhaseSucceeded
}

// DeploymentAvailable says whether the operator's Deployment reports the Available condition.
func (s OperatorState) DeploymentAvailable() bool {
	if s.Deployment == nil {
		return false
	}
	for _, c := range s.Deployment.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Summary is one line saying where the install stands.
func (s OperatorState) Summary() string {
	switch {
	case s.Subscription == nil && s.CSV == nil:
		return "WMCO is not installed (no Subscription in " + config.OperatorNamespace + ")"
	case s.Installed():
		return fmt.Sprintf("WMCO %s installed (CSV %s Succeeded)", s.CSV.Spec.Version.String(), s.CSV.Name)
	case s.CSV != nil:
		return fmt.Sprintf("CSV %s is %s: %s", s.CSV.Name, phaseOrPending(string(s.CSV.Status.Phase)), s.CSV.Status.Message)
	case s.InstallPlan != nil:
		return fmt.Sprintf("InstallPlan %s is %s", s.InstallPlan.Name, phaseOrPending(string(s.InstallPlan.Status.Phase)))
	default:
		return "Subscription " + s.Subscription.Name + " waits for OLM to resolve it" + subscriptionProblem(s.Subscription)
	}
}

func phaseOrPending(p string) string {
	if p == "" {
		return "pending"
	}
	return p
}

// subscriptionProblem is the message of a failing Subscription condition, prefixed with ": ", or "".
func subscriptionProblem(sub *olm.Subscription) string {
	for _, c := range sub.Status.Conditions {
		switch c.Type {
		case olm.SubscriptionResolutionFailed, olm.SubscriptionCatalogSourcesUnhealthy, olm.SubscriptionInstallPlanFailed, olm.SubscriptionBundleUnpackFailed:
			if c.Status == corev1.ConditionTrue {
				return ": " + string(c.Type) + ": " + c.Message
			}
		}
	}
	return ""
}

// OLM reads and writes WMCO's OLM objects.
type OLM struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
}

// NewOLM builds it from the session's clients.
func NewOLM(c Clients) *OLM { return &OLM{Kube: c.Kube, Dynamic: c.Dynamic} }

// get reads one object into out; found is false on NotFound.
func (o *OLM) get(ctx context.Context, res schema.GroupVersionResource, ns, name string, out any) (bool, error) {
	u, err := o.Dynamic.Resource(res).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get %s %s/%s: %w", res.Resource, ns, name, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return false, fmt.Errorf("decode %s %s/%s: %w", res.Resource, ns, name, err)
	}
	return true, nil
}

// list reads every object of a resource in ns.
func list[T any](ctx context.Context, d dynamic.Interface, res schema.GroupVersionResource, ns string) ([]T, error) {
	l, err := d.Resource(res).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", res.Resource, ns, err)
	}
	out := make([]T, 0, len(l.Items))
	for _, u := range l.Items {
		var v T
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v); err != nil {
			return nil, fmt.Errorf("decode %s %s: %w", res.Resource, u.GetName(), err)
		}
		out = append(out, v)
	}
	return out, nil
}

func (o *OLM) create(ctx context.Context, res schema.GroupVersionResource, ns string, obj runtime.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("encode %s: %w", res.Resource, err)
	}
	_, err = o.Dynamic.Resource(res).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: m}, metav1.CreateOptions{})
	return err
}

// State reads WMCO's namespace, OperatorGroup, Subscription, its InstallPlan and CSV, and the operator's
// Deployment.
func (o *OLM) State(ctx context.Context) (OperatorState, error) {
	var st OperatorState
	ns := config.OperatorNamespace
	_, err := o.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return st, nil
	case err != nil:
		return st, fmt.Errorf("get namespace %s: %w", ns, err)
	}
	st.Namespace = true
	groups, err := list[operatorsv1.OperatorGroup](ctx, o.Dynamic, OperatorGroupResource, ns)
	if err != nil {
		return st, err
	}
	if len(groups) > 0 {
		st.OperatorGroup = &groups[0]
	}
	subs, err := list[olm.Subscription](ctx, o.Dynamic, SubscriptionResource, ns)
	if err != nil {
		return st, err
	}
	for i := range subs {
		if subs[i].Spec != nil && subs[i].Spec.Package == config.OperatorName {
			st.Subscription = &subs[i]
		}
	}
	if err := o.readInstall(ctx, &st); err != nil {
		return st, err
	}
	dep, err := o.Kube.AppsV1().Deployments(ns).Get(ctx, OperatorDeploymentKey, metav1.GetOptions{})
	if err == nil {
		st.Deployment = dep
	} else if !apierrors.IsNotFound(err) {
		return st, fmt.Errorf("get deployment %s: %w", OperatorDeploymentKey, err)
	}
	return st, o.readOperatorPods(ctx, &st)
}

// readInstall follows the Subscription to its InstallPlan and CSV; without a Subscription it still finds a
// CSV of the operator (installed some other way).
func (o *OLM) readInstall(ctx context.Context, st *OperatorState) error {
	ns := config.OperatorNamespace
	if sub := st.Subscription; sub != nil {
		if ref := sub.Status.InstallPlanRef; ref != nil {
			st.InstallPlan = &olm.InstallPlan{}
			if ok, err := o.get(ctx, InstallPlanResource, ns, ref.Name, st.InstallPlan); err != nil || !ok {
				st.InstallPlan = nil
				if err != nil {
					return err
				}
			}
		}
		name := sub.Status.InstalledCSV
		if name == "" {
			name = sub.Status.CurrentCSV
		}
		if name != "" {
			st.CSV = &olm.ClusterServiceVersion{}
			if ok, err := o.get(ctx, CSVResource, ns, name, st.CSV); err != nil || !ok {
				st.CSV = nil
				return err
			}
			return nil
		}
	}
	csvs, err := list[olm.ClusterServiceVersion](ctx, o.Dynamic, CSVResource, ns)
	if err != nil {
		return err
	}
	for i := range csvs {
		if strings.HasPrefix(csvs[i].Name, config.OperatorName+".") {
			st.CSV = &csvs[i]
		}
	}
	return nil
}

// CatalogOffer is what a catalog offers for WMCO.
type CatalogOffer struct {
	Source         string
	DefaultChannel string
	Channels       []string
}

// CheckCatalog makes sure the CatalogSource exists and offers WMCO on the channel, listing what there is
// when it does not.
func (o *OLM) CheckCatalog(ctx context.Context, opts InstallOptions) (CatalogOffer, error) {
	var cs olm.CatalogSource
	ok, err := o.get(ctx, CatalogSourceResource, opts.SourceNamespace, opts.Source, &cs)
	if err != nil {
		return CatalogOffer{}, err
	}
	if !ok {
		sources, _ := list[olm.CatalogSource](ctx, o.Dynamic, CatalogSourceResource, opts.SourceNamespace)
		var names []string
		for _, s := range sources {
			names = append(names, s.Name)
		}
		return CatalogOffer{}, fmt.Errorf("no CatalogSource %q in %s (there are: %s): pass one with --source (OKD: %s)",
			opts.Source, opts.SourceNamespace, sortedOrNone(names), OKDCatalogSource)
	}
	offers, err := o.Offers(ctx, opts.SourceNamespace)
	if err != nil {
		return CatalogOffer{}, err
	}
	i := slices.IndexFunc(offers, func(c CatalogOffer) bool { return c.Source == opts.Source })
	if i < 0 {
		var where []string
		for _, c := range offers {
			where = append(where, c.Source)
		}
		return CatalogOffer{}, fmt.Errorf("catalog %s does not offer the package %s (catalogs that do: %s): pass one with --source",
			opts.Source, config.OperatorName, sortedOrNone(where))
	}
	offer := offers[i]
	if !slices.Contains(offer.Channels, opts.Channel) {
		return offer, fmt.Errorf("catalog %s offers %s on channels %s, not %q: pass one with --channel (default channel %s)",
			opts.Source, config.OperatorName, strings.Join(offer.Channels, ", "), opts.Channel, offer.DefaultChannel)
	}
	return offer, nil
}

// Offers lists the catalogs' PackageManifests for WMCO.
func (o *OLM) Offers(ctx context.Context, ns string) ([]CatalogOffer, error) {
	l, err := o.Dynamic.Resource(PackageManifestResource).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list packagemanifests in %s: %w", ns, err)
	}
	var out []CatalogOffer
	for _, u := range l.Items {
		if u.GetName() != config.OperatorName {
			continue
		}
		src, _, _ := unstructured.NestedString(u.Object, "status", "catalogSource")
		def, _, _ := unstructured.NestedString(u.Object, "status", "defaultChannel")
		chans, _, _ := unstructured.NestedSlice(u.Object, "status", "channels")
		offer := CatalogOffer{Source: src, DefaultChannel: def}
		for _, c := range chans {
			if m, ok := c.(map[string]any); ok {
				if name, ok := m["name"].(string); ok {
					offer.Channels = append(offer.Channels, name)
				}
			}
		}
		sort.Strings(offer.Channels)
		out = append(out, offer)
	}
	return out, nil
}

// sortedOrNone lists names sorted, or says none.
func sortedOrNone(names []string) string {
	sort.Strings(names)
	return listOrNone(names)
}

// OperatorNamespaceObject is WMCO's namespace as the install creates it (labelled for cluster monitoring).
func OperatorNamespaceObject() *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: config.OperatorNamespace, Labels: map[string]string{ClusterMonitoringKey: "true"}}}
}

// OperatorGroupObject is the OperatorGroup the install creates: WMCO's namespace targeting only itself.
func OperatorGroupObject() *operatorsv1.OperatorGroup {
	ns := config.OperatorNamespace
	return &operatorsv1.OperatorGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: operatorsv1.SchemeGroupVersion.String(), Kind: operatorsv1.OperatorGroupKind},
		ObjectMeta: metav1.ObjectMeta{Name: config.OperatorName, Namespace: ns},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{ns}},
	}
}

// SubscriptionObject is the Subscription the install creates for opts (with its defaults filled).
func SubscriptionObject(opts InstallOptions) *olm.Subscription {
	return &olm.Subscription{
		TypeMeta:   metav1.TypeMeta{APIVersion: olm.SchemeGroupVersion.String(), Kind: olm.SubscriptionKind},
		ObjectMeta: metav1.ObjectMeta{Name: config.OperatorName, Namespace: config.OperatorNamespace},
		Spec: &olm.SubscriptionSpec{CatalogSource: opts.Source, CatalogSourceNamespace: opts.SourceNamespace,
			Package: config.OperatorName, Channel: opts.Channel, InstallPlanApproval: opts.Approval},
	}
}

// EnsureNamespace creates WMCO's namespace with the monitoring label, or adds the label; it reports whether
// it changed anything.
func (o *OLM) EnsureNamespace(ctx context.Context) (bool, error) {
	nss := o.Kube.CoreV1().Namespaces()
	ns, err := nss.Get(ctx, config.OperatorNamespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		ns = OperatorNamespaceObject()
		if _, err := nss.Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return false, fmt.Errorf("create namespace %s: %w", config.OperatorNamespace, err)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("get namespace %s: %w", config.OperatorNamespace, err)
	}
	if ns.Labels[ClusterMonitoringKey] == "true" {
		return false, nil
	}
	ns = ns.DeepCopy()
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[ClusterMonitoringKey] = "true"
	if _, err := nss.Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		return false, fmt.Errorf("label namespace %s: %w", config.OperatorNamespace, err)
	}
	return true, nil
}

// EnsureOperatorGroup creates the OperatorGroup targeting WMCO's own namespace unless one exists (OLM allows
// one per namespace); an existing one that targets other namespaces is an error saying so.
func (o *OLM) EnsureOperatorGroup(ctx context.Context) (bool, error) {
	ns := config.OperatorNamespace
	groups, err := list[operatorsv1.OperatorGroup](ctx, o.Dynamic, OperatorGroupResource, ns)
	if err != nil {
		return false, err
	}
	if len(groups) > 0 {
		g := groups[0]
		if len(g.Spec.TargetNamespaces) != 1 || g.Spec.TargetNamespaces[0] != ns {
			return false, fmt.Errorf("OperatorGroup %s in %s targets %v, not only %s: WMCO supports OwnNamespace only; fix or delete it",
				g.Name, ns, g.Spec.TargetNamespaces, ns)
		}
		return false, nil
	}
	g := OperatorGroupObject()
	if err := o.create(ctx, OperatorGroupResource, ns, g); err != nil {
		return false, fmt.Errorf("create OperatorGroup %s: %w", g.Name, err)
	}
	return true, nil
}

// EnsureSubscription creates WMCO's Subscription unless one exists; an existing one is left as it is.
func (o *OLM) EnsureSubscription(ctx context.Context, opts InstallOptions) (*olm.Subscription, bool, error) {
	ns := config.OperatorNamespace
	var existing olm.Subscription
	ok, err := o.get(ctx, SubscriptionResource, ns, config.OperatorName, &existing)
	if err != nil {
		return nil, false, err
	}
	if ok {
		return &existing, false, nil
	}
	sub := SubscriptionObject(opts)
	if err := o.create(ctx, SubscriptionResource, ns, sub); err != nil {
		return nil, false, fmt.Errorf("create Subscription %s: %w", sub.Name, err)
	}
	return sub, true, nil
}

// ApproveInstallPlan sets spec.approved on an InstallPlan.
func (o *OLM) ApproveInstallPlan(ctx context.Context, name string) error {
	patch := []byte(`{"spec":{"approved":true}}`)
	_, err := o.Dynamic.Resource(InstallPlanResource).Namespace(config.OperatorNamespace).
		Patch(ctx, name, "application/merge-patch+json", patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("approve InstallPlan %s: %w", name, err)
	}
	return nil
}

// Uninstall deletes WMCO's Subscription and CSV (OLM then removes the operator's Deployment). Nodes, secrets
// and the namespace stay. It returns what it deleted.
func (o *OLM) Uninstall(ctx context.Context, st OperatorState) ([]string, error) {
	var deleted []string
	ns := config.OperatorNamespace
	del := func(res schema.GroupVersionResource, name, what string) error {
		err := o.Dynamic.Resource(res).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s %s: %w", what, name, err)
		}
		if err == nil {
			deleted = append(deleted, what+" "+name)
		}
		return nil
	}
	if st.Subscription != nil {
		if err := del(SubscriptionResource, st.Subscription.Name, "Subscription"); err != nil {
			return deleted, err
		}
	}
	if st.CSV != nil {
		if err := del(CSVResource, st.CSV.Name, "ClusterServiceVersion"); err != nil {
			return deleted, err
		}
	}
	if len(deleted) == 0 {
		return nil, errors.New("nothing to uninstall: no WMCO Subscription or CSV in " + ns)
	}
	return deleted, nil
}
