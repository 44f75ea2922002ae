// Package olm plays Operator Lifecycle Manager's part for tests and the demo: it serves catalogs
// (CatalogSources and PackageManifests) and moves WMCO's Subscription through an InstallPlan (waiting for
// approval when it is Manual) to a ClusterServiceVersion that goes Pending → InstallReady → Installing →
// Succeeded (or Failed, when told to), and finally the operator's Deployment. It works on the real
// kube-apiserver (with OLM's CRDs) and on the demo's fake clients alike, one reconcile pass at a time.
package olm

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
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

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

// ListKinds are OLM's list kinds, for fake dynamic clients (the demo's).
var ListKinds = map[schema.GroupVersionResource]string{
	cluster.SubscriptionResource:    "SubscriptionList",
	cluster.InstallPlanResource:     "InstallPlanList",
	cluster.CatalogSourceResource:   "CatalogSourceList",
	cluster.OperatorGroupResource:   "OperatorGroupList",
	cluster.PackageManifestResource: "PackageManifestList",
	cluster.CSVResource:             "ClusterServiceVersionList",
}

// Catalog is one CatalogSource offering WMCO.
type Catalog struct {
	Name           string   // e.g. redhat-operators
	Channels       []string // e.g. stable
	DefaultChannel string
	Version        string // the CSV version it installs, e.g. 11.0.1
}

// Options say what the stand-in offers and how the install goes.
type Options struct {
	Catalogs []Catalog
	// FailReason and FailMessage, when set, make the CSV fail at Installing, as a real one does when its
	// Deployment cannot come up.
	FailReason  olm.ConditionReason
	FailMessage string
}

// Sim is the OLM stand-in.
type Sim struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	Opts    Options
	// OnError, when set, is told about each failed reconcile pass (tests log them).
	OnError func(error)
}

// New builds a stand-in over the clients.
func New(c cluster.Clients, opts Options) *Sim {
	return &Sim{Kube: c.Kube, Dynamic: c.Dynamic, Opts: opts}
}

// Seed creates the catalogs (namespace openshift-marketplace, CatalogSources, PackageManifests).
func (s *Sim) Seed(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster.MarketplaceNamespace}}
	if _, err := s.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns.Name, err)
	}
	for _, c := range s.Opts.Catalogs {
		cs := &olm.CatalogSource{
			TypeMeta:   metav1.TypeMeta{APIVersion: olm.SchemeGroupVersion.String(), Kind: olm.CatalogSourceKind},
			ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: cluster.MarketplaceNamespace},
			Spec:       olm.CatalogSourceSpec{SourceType: olm.SourceTypeGrpc, DisplayName: c.Name},
		}
		if err := s.create(ctx, cluster.CatalogSourceResource, cs); err != nil {
			return err
		}
		if err := s.create(ctx, cluster.PackageManifestResource, packageManifest(c)); err != nil {
			return err
		}
	}
	return nil
}

func packageManifest(c Catalog) *unstructured.Unstructured {
	var chans []any
	for _, ch := range c.Channels {
		chans = append(chans, map[string]any{"name": ch, "currentCSV": csvName(c.Version)})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "packages.operators.coreos.com/v1", "kind": "PackageManifest",
		"metadata": map[string]any{"name": config.OperatorName, "namespace": cluster.MarketplaceNamespace,
			"labels": map[string]any{"catalog": c.Name}},
		"status": map[string]any{"catalogSource": c.Name, "catalogSourceNamespace": cluster.MarketplaceNamespace,
			"packageName": config.OperatorName, "defaultChannel": c.DefaultChannel, "channels": chans},
	}}
	// PackageManifests of different catalogs share the package's name on a real cluster (the package server
	// merges them); stored as objects they need distinct names.
	if c.Name != cluster.DefaultCatalogSource {
		u.SetName(config.OperatorName + "-" + c.Name)
	}
	return u
}

func csvName(v string) string { return config.OperatorName + ".v" + v }

func (s *Sim) create(ctx context.Context, res schema.GroupVersionResource, obj runtime.Object) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		u = &unstructured.Unstructured{Object: m}
	}
	created, err := s.Dynamic.Resource(res).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("olmsim: create %s %s: %w", res.Resource, u.GetName(), err)
	}
	// The status of a resource with a status subresource is dropped on create; write it separately.
	if st, ok := u.Object["status"]; ok {
		created.Object["status"] = st
		if _, err := s.Dynamic.Resource(res).Namespace(u.GetNamespace()).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("olmsim: status of %s %s: %w", res.Resource, u.GetName(), err)
		}
	}
	return nil
}

// Run reconciles every interval until ctx ends.
func (s *Sim) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := s.Reconcile(ctx); err != nil && s.OnError != nil && ctx.Err() == nil {
			s.OnError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Reconcile moves every WMCO Subscription one stage on.
func (s *Sim) Reconcile(ctx context.Context) error {
	ns := config.OperatorNamespace
	l, err := s.Dynamic.Resource(cluster.SubscriptionResource).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, u := range l.Items {
		var sub olm.Subscription
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sub); err != nil {
			return err
		}
		if err := s.reconcile(ctx, &sub); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sim) catalog(spec *olm.SubscriptionSpec) (Catalog, string) {
	for _, c := range s.Opts.Catalogs {
		if c.Name != spec.CatalogSource {
			continue
		}
		if !slices.Contains(c.Channels, spec.Channel) {
			return c, fmt.Sprintf("no operators found in channel %s of package %s in the catalog referenced by subscription %s",
				spec.Channel, spec.Package, config.OperatorName)
		}
		return c, ""
	}
	return Catalog{}, fmt.Sprintf("failed to populate resolver cache from source %s/%s: catalog source not found",
		spec.CatalogSourceNamespace, spec.CatalogSource)
}

func (s *Sim) reconcile(ctx context.Context, sub *olm.Subscription) error {
	c, problem := s.catalog(sub.Spec)
	if problem != "" {
		sub.Status.Conditions = []olm.SubscriptionCondition{{Type: olm.SubscriptionResolutionFailed, Status: corev1.ConditionTrue,
			Reason: "ConstraintsNotSatisfiable", Message: problem}}
		return s.updateStatus(ctx, cluster.SubscriptionResource, sub)
	}
	if sub.Status.InstallPlanRef == nil {
		return s.plan(ctx, sub, c)
	}
	var plan olm.InstallPlan
	if err := s.get(ctx, cluster.InstallPlanResource, sub.Status.InstallPlanRef.Name, &plan); err != nil {
		return err
	}
	if !plan.Spec.Approved {
		return nil // a Manual plan waits for someone to approve it
	}
	if plan.Status.Phase != olm.InstallPlanPhaseComplete {
		return s.executePlan(ctx, &plan, c)
	}
	return s.advanceCSV(ctx, sub, csvName(c.Version))
}

// plan creates the InstallPlan and points the Subscription at it.
func (s *Sim) plan(ctx context.Context, sub *olm.Subscription, c Catalog) error {
	name := "install-" + fmt.Sprintf("%05x", time.Now().UnixNano()&0xfffff)
	approved := sub.Spec.InstallPlanApproval != olm.ApprovalManual
	phase := olm.InstallPlanPhaseInstalling
	if !approved {
		phase = olm.InstallPlanPhaseRequiresApproval
	}
	approval := sub.Spec.InstallPlanApproval
	if approval == "" {
		approval = olm.ApprovalAutomatic
	}
	plan := &olm.InstallPlan{
		TypeMeta:   metav1.TypeMeta{APIVersion: olm.SchemeGroupVersion.String(), Kind: olm.InstallPlanKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: config.OperatorNamespace},
		Spec: olm.InstallPlanSpec{CatalogSource: c.Name, CatalogSourceNamespace: cluster.MarketplaceNamespace,
			ClusterServiceVersionNames: []string{csvName(c.Version)}, Approval: approval, Approved: approved},
		Status: olm.InstallPlanStatus{Phase: phase, CatalogSources: []string{c.Name}},
	}
	if err := s.create(ctx, cluster.InstallPlanResource, plan); err != nil {
		return err
	}
	sub.Status.InstallPlanRef = &corev1.ObjectReference{Kind: olm.InstallPlanKind, Namespace: config.OperatorNamespace, Name: name,
		APIVersion: olm.SchemeGroupVersion.String()}
	sub.Status.Install = &olm.InstallPlanReference{Kind: olm.InstallPlanKind, Name: name, APIVersion: olm.SchemeGroupVersion.String()}
	sub.Status.CurrentCSV = csvName(c.Version)
	sub.Status.State = olm.SubscriptionStateUpgradePending
	sub.Status.Conditions = nil
	return s.updateStatus(ctx, cluster.SubscriptionResource, sub)
}

// executePlan creates the CSV and completes the plan.
func (s *Sim) executePlan(ctx context.Context, plan *olm.InstallPlan, c Catalog) error {
	v, err := semver.Parse(c.Version)
	if err != nil {
		return fmt.Errorf("olmsim: catalog %s version %q: %w", c.Name, c.Version, err)
	}
	csv := &olm.ClusterServiceVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: olm.SchemeGroupVersion.String(), Kind: olm.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{Name: csvName(c.Version), Namespace: config.OperatorNamespace},
		Spec: olm.ClusterServiceVersionSpec{DisplayName: "Windows Machine Config Operator", Version: version.OperatorVersion{Version: v},
			InstallStrategy: olm.NamedInstallStrategy{StrategyName: olm.InstallStrategyNameDeployment,
				StrategySpec: olm.StrategyDetailsDeployment{DeploymentSpecs: []olm.StrategyDeploymentSpec{
					{Name: cluster.OperatorDeploymentKey, Spec: operatorDeployment().Spec}}}}},
		Status: olm.ClusterServiceVersionStatus{Phase: olm.CSVPhasePending, Reason: olm.CSVReasonRequirementsUnknown,
			Message: "requirements not yet checked"},
	}
	if err := s.create(ctx, cluster.CSVResource, csv); err != nil {
		return err
	}
	plan.Status.Phase = olm.InstallPlanPhaseComplete
	return s.updateStatus(ctx, cluster.InstallPlanResource, plan)
}

// advanceCSV moves the CSV one phase on; at Succeeded the operator's Deployment exists and is Available.
func (s *Sim) advanceCSV(ctx context.Context, sub *olm.Subscription, name string) error {
	var csv olm.ClusterServiceVersion
	if err := s.get(ctx, cluster.CSVResource, name, &csv); err != nil {
		return err
	}
	switch csv.Status.Phase {
	case olm.CSVPhasePending:
		csv.Status.Phase, csv.Status.Reason, csv.Status.Message = olm.CSVPhaseInstallReady, olm.CSVReasonRequirementsMet, "all requirements found, attempting install"
	case olm.CSVPhaseInstallReady:
		csv.Status.Phase, csv.Status.Reason, csv.Status.Message = olm.CSVPhaseInstalling, olm.CSVReasonInstallSuccessful, "waiting for install components to report healthy"
	case olm.CSVPhaseInstalling:
		if s.Opts.FailReason != "" {
			csv.Status.Phase, csv.Status.Reason, csv.Status.Message = olm.CSVPhaseFailed, s.Opts.FailReason, s.Opts.FailMessage
			break
		}
		if err := s.deployment(ctx); err != nil {
			return err
		}
		csv.Status.Phase, csv.Status.Reason, csv.Status.Message = olm.CSVPhaseSucceeded, olm.CSVReasonInstallSuccessful, "install strategy completed with no errors"
		sub.Status.InstalledCSV, sub.Status.State = name, olm.SubscriptionStateAtLatest
		if err := s.updateStatus(ctx, cluster.SubscriptionResource, sub); err != nil {
			return err
		}
	default:
		return nil
	}
	return s.updateStatus(ctx, cluster.CSVResource, &csv)
}

func operatorDeployment() *appsv1.Deployment {
	one := int32(1)
	labels := map[string]string{"name": config.OperatorName}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: cluster.OperatorDeploymentKey, Namespace: config.OperatorNamespace},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "registry.example/wmco:latest"}}}}},
	}
}

func (s *Sim) deployment(ctx context.Context) error {
	d := operatorDeployment()
	deps := s.Kube.AppsV1().Deployments(config.OperatorNamespace)
	created, err := deps.Create(ctx, d, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("olmsim: create deployment: %w", err)
	}
	// No controller manager runs in the test tier: report the Deployment available as its controller would.
	created.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}}
	if _, err := deps.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("olmsim: deployment status: %w", err)
	}
	return nil
}

func (s *Sim) get(ctx context.Context, res schema.GroupVersionResource, name string, out any) error {
	u, err := s.Dynamic.Resource(res).Namespace(config.OperatorNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("olmsim: get %s %s: %w", res.Resource, name, err)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out)
}

func (s *Sim) updateStatus(ctx context.Context, res schema.GroupVersionResource, obj runtime.Object) error {
	if sub, ok := obj.(*olm.Subscription); ok {
		sub.Status.LastUpdated = metav1.Now() // required by the CRD, as OLM always sets it
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	_, err = s.Dynamic.Resource(res).Namespace(u.GetNamespace()).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("olmsim: update status of %s %s: %w", res.Resource, u.GetName(), err)
	}
	return nil
}
