package kubeapi

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	olmcrds "github.com/operator-framework/api/crds"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// CRD names a CustomResourceDefinition the test server can load, as <plural>.<group>.
type CRD string

// The OpenShift and OLM CRDs wmcon reads or writes.
const (
	MachineSets            CRD = "machinesets.machine.openshift.io"
	Machines               CRD = "machines.machine.openshift.io"
	ImageDigestMirrorSets  CRD = "imagedigestmirrorsets.config.openshift.io"
	ImageTagMirrorSets     CRD = "imagetagmirrorsets.config.openshift.io"
	Infrastructures        CRD = "infrastructures.config.openshift.io"
	Networks               CRD = "networks.config.openshift.io"
	Proxies                CRD = "proxies.config.openshift.io"
	ClusterVersions        CRD = "clusterversions.config.openshift.io"
	OperatorNetworks       CRD = "networks.operator.openshift.io"
	ClusterServiceVersions CRD = "clusterserviceversions.operators.coreos.com"
	Subscriptions          CRD = "subscriptions.operators.coreos.com"
	OperatorGroups         CRD = "operatorgroups.operators.coreos.com"
	InstallPlans           CRD = "installplans.operators.coreos.com"
	CatalogSources         CRD = "catalogsources.operators.coreos.com"
	// PackageManifests is served on real clusters by OLM's package server (an aggregated API); a CRD with the
	// same group, version and resource serves the same REST shape for tests.
	PackageManifests CRD = "packagemanifests.packages.operators.coreos.com"
)

// OLMCRDs are Operator Lifecycle Manager's APIs.
var OLMCRDs = []CRD{ClusterServiceVersions, Subscriptions, OperatorGroups, InstallPlans, CatalogSources, PackageManifests}

// AllCRDs is what Start loads unless told otherwise.
var AllCRDs = []CRD{
	MachineSets, Machines, ImageDigestMirrorSets, ImageTagMirrorSets, Infrastructures, Networks, Proxies,
	ClusterVersions, OperatorNetworks, ClusterServiceVersions, Subscriptions, OperatorGroups, InstallPlans,
	CatalogSources, PackageManifests,
}

// crdManifests says where each CRD's manifest is: a path inside the github.com/openshift/api module (the
// "Default" feature-set variant where openshift/api ships several), or an embedded fixture.
var crdManifests = map[CRD]string{
	MachineSets:           "machine/v1beta1/zz_generated.crd-manifests/0000_10_machine-api_01_machinesets-Default.crd.yaml",
	Machines:              "machine/v1beta1/zz_generated.crd-manifests/0000_10_machine-api_01_machines-Default.crd.yaml",
	ImageDigestMirrorSets: "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagedigestmirrorsets.crd.yaml",
	ImageTagMirrorSets:    "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagetagmirrorsets.crd.yaml",
	Infrastructures:       "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_infrastructures-Default.crd.yaml",
	Networks:              "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_networks.crd.yaml",
	Proxies:               "config/v1/zz_generated.crd-manifests/0000_03_config-operator_01_proxies.crd.yaml",
	ClusterVersions:       "config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml",
	OperatorNetworks:      "operator/v1/zz_generated.crd-manifests/0000_70_network_01_networks.crd.yaml",
}

// olmCRDs are OLM's own CRD definitions, shipped in the operator-framework/api module wmcon compiles against.
var olmCRDs = map[CRD]func() *apiextensionsv1.CustomResourceDefinition{
	ClusterServiceVersions: olmcrds.ClusterServiceVersion,
	Subscriptions:          olmcrds.Subscription,
	OperatorGroups:         olmcrds.OperatorGroup,
	InstallPlans:           olmcrds.InstallPlan,
	CatalogSources:         olmcrds.CatalogSource,
}

//go:embed testdata/packagemanifests.crd.yaml
var packageManifestsCRD []byte

// loadCRD reads and decodes one CRD manifest, checking that it defines the CRD asked for.
func loadCRD(name CRD) (*apiextensionsv1.CustomResourceDefinition, error) {
	if def, ok := olmCRDs[name]; ok {
		crd := def().DeepCopy()
		crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
		crd.ResourceVersion, crd.CreationTimestamp = "", metav1.Time{}
		return crd, nil
	}
	data, err := crdManifest(name)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("decode CRD %s: %w", name, err)
	}
	if crd.Name != string(name) {
		return nil, fmt.Errorf("manifest for %s defines %q instead; fix crdManifests", name, crd.Name)
	}
	return crd, nil
}

func crdManifest(name CRD) ([]byte, error) {
	if name == PackageManifests {
		return packageManifestsCRD, nil
	}
	rel, ok := crdManifests[name]
	if !ok {
		return nil, fmt.Errorf("unknown CRD %q; use one of testserver.AllCRDs", name)
	}
	dir, err := openshiftAPIDir()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return nil, fmt.Errorf("read CRD %s from openshift/api: %w", name, err)
	}
	return data, nil
}

var openshiftAPIDirOnce = sync.OnceValues(findOpenShiftAPIDir)

// openshiftAPIDir is the module cache directory of the github.com/openshift/api version wmcon's go.mod
// requires, so the CRDs always match the Go types the code is compiled against.
func openshiftAPIDir() (string, error) { return openshiftAPIDirOnce() }

func findOpenShiftAPIDir() (string, error) {
	if dir := os.Getenv("WMCON_OPENSHIFT_API_DIR"); dir != "" {
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/openshift/api")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return "", fmt.Errorf("locate github.com/openshift/api with `go list -m` in %s (run `go mod download` there, "+
			"or set WMCON_OPENSHIFT_API_DIR): %v %s", root, err, strings.TrimSpace(stderr.String()))
	}
	return dir, nil
}

// installCRDs creates the CRDs (an existing one is left as it is) and waits until every one is Established,
// which is when its resource can be listed and watched.
func installCRDs(ctx context.Context, client apiextensionsclient.Interface, names []CRD) error {
	for _, name := range names {
		crd, err := loadCRD(name)
		if err != nil {
			return err
		}
		_, err = client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", name, err)
		}
	}
	for _, name := range names {
		if err := waitEstablished(ctx, client, name); err != nil {
			return err
		}
	}
	return nil
}

// warmUpCustomResources makes one dry-run write to a custom resource. Right after a CRD is established,
// kube-apiserver 1.37 holds the first write to its resources for about two seconds (later ones take
// milliseconds); paying that here keeps it out of the tests' own waits.
func warmUpCustomResources(ctx context.Context, client dynamic.Interface, name CRD) error {
	crd, err := loadCRD(name)
	if err != nil {
		return err
	}
	version := crd.Spec.Versions[0].Name
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(crd.Spec.Group + "/" + version)
	obj.SetKind(crd.Spec.Names.Kind)
	obj.SetName("wmcon-warm-up")
	resource := client.Resource(schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural})
	var writer dynamic.ResourceInterface = resource
	if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
		writer = resource.Namespace(metav1.NamespaceDefault)
	}
	_, err = writer.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil && !apierrors.IsInvalid(err) { // a schema that wants more fields still warmed the path up
		return fmt.Errorf("warm-up write to %s: %w", name, err)
	}
	return nil
}

func waitEstablished(ctx context.Context, client apiextensionsclient.Interface, name CRD) error {
	var last *apiextensionsv1.CustomResourceDefinition
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, string(name), metav1.GetOptions{})
		if err != nil {
			return false, nil // the apiserver may be briefly busy; ctx bounds the wait
		}
		last = crd
		return crdCondition(crd, apiextensionsv1.Established), nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not Established (conditions %s): %w", name, describeConditions(last), err)
	}
	return nil
}

// deleteCRDs removes the CRDs and waits until the API no longer serves their resources (the CRD object
// disappears a little before its HTTP handler does), so a test can then see the API as absent.
func deleteCRDs(ctx context.Context, client apiextensionsclient.Interface, names []CRD) error {
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	for _, name := range names {
		err := crds.Delete(ctx, string(name), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete CRD %s: %w", name, err)
		}
	}
	for _, name := range names {
		crd, err := loadCRD(name)
		if err != nil {
			return err
		}
		for _, version := range crd.Spec.Versions {
			path := "/apis/" + crd.Spec.Group + "/" + version.Name + "/" + crd.Spec.Names.Plural
			err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				err := client.Discovery().RESTClient().Get().AbsPath(path).Do(ctx).Error()
				return apierrors.IsNotFound(err), nil
			})
			if err != nil {
				return fmt.Errorf("%s still served after deleting CRD %s: %w", path, name, err)
			}
		}
	}
	return nil
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, kind apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == kind {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

func describeConditions(crd *apiextensionsv1.CustomResourceDefinition) string {
	if crd == nil {
		return "unknown: never read"
	}
	var parts []string
	for _, c := range crd.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Message))
	}
	if len(parts) == 0 {
		return "none yet"
	}
	return strings.Join(parts, "; ")
}
