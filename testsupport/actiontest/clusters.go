package actiontest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"net"
	"testing"
	"time"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/doctor"
	"github.com/wmcon/wmcon/actions/operator"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/registries"
	"github.com/wmcon/wmcon/sim/olm"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

func CSRPEM(t *testing.T, cn string, dns []string, ips []net.IP) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return CSRPEMWithKey(t, key, cn, dns, ips)
}

func CSRPEMWithKey(t *testing.T, key *ecdsa.PrivateKey, cn string, dns []string, ips []net.IP) []byte {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}}, DNSNames: dns, IPAddresses: ips}, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func PostCSR(t *testing.T, ctx context.Context, c kubernetes.Interface, name, signer string, req []byte, usages ...certificatesv1.KeyUsage) {
	_, err := c.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: signer, Usages: usages},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// DoctorCluster is a real API server (its own: the doctor reads cluster-wide singletons these tests change)
// seeded as a healthy OpenShift cluster on AWS with WMCO installed.
type DoctorCluster struct {
	T      testing.TB
	Ctx    context.Context
	Server *kubeapi.Server
	C      cluster.Clients
}

func NewDoctorCluster(t testing.TB) *DoctorCluster {
	srv := kubeapi.Start(t)
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	d := &DoctorCluster{T: t, Ctx: ctx, Server: srv, C: c}
	d.Seed()
	return d
}

func (d *DoctorCluster) Seed() {
	d.SeedCluster(configv1.AWSPlatformType)
	pemBytes, pub, err := cluster.GenerateKey("ed25519")
	require.NoError(d.T, err)
	d.Secret(config.OperatorNamespace, config.PrivateKeySecret, config.PrivateKeySecretKey, pemBytes)
	d.Secret(config.MachineAPINamespace, config.UserDataSecret, config.UserDataSecretKey, UserData(pub))
	d.InstallWMCO()
}

// SeedCluster makes the cluster a healthy OpenShift cluster on platform p, with nothing for Windows yet.
func (d *DoctorCluster) SeedCluster(p configv1.PlatformType) {
	t, ctx, cfg := d.T, d.Ctx, d.C.Config.ConfigV1()
	infra := &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	infra, err := cfg.Infrastructures().Create(ctx, infra, metav1.CreateOptions{})
	require.NoError(t, err)
	infra.Status = configv1.InfrastructureStatus{InfrastructureName: "doc-x1y2z", APIServerInternalURL: "https://api-int.doc.example:6443",
		ControlPlaneTopology: configv1.HighlyAvailableTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
		PlatformStatus: &configv1.PlatformStatus{Type: p}}
	if p == configv1.AWSPlatformType {
		infra.Status.PlatformStatus.AWS = &configv1.AWSPlatformStatus{Region: "us-east-2"}
	}
	_, err = cfg.Infrastructures().UpdateStatus(ctx, infra, metav1.UpdateOptions{})
	require.NoError(t, err)
	cv, err := cfg.ClusterVersions().Create(ctx, &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: "version"},
		Spec: configv1.ClusterVersionSpec{ClusterID: "8f4f0c3e-0000-4000-8000-000000000001"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cv.Status.Desired.Version = "4.24.2"
	_, err = cfg.ClusterVersions().UpdateStatus(ctx, cv, metav1.UpdateOptions{})
	require.NoError(t, err)
	_, err = cfg.Networks().Create(ctx, &configv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: configv1.NetworkSpec{
		NetworkType:    "OVNKubernetes",
		ClusterNetwork: []configv1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
		ServiceNetwork: []string{"172.30.0.0/16"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	d.SetOperatorNetwork(&operatorv1.HybridOverlayConfig{HybridClusterNetwork: []operatorv1.ClusterNetworkEntry{{CIDR: "10.132.0.0/14", HostPrefix: 23}}})
}

// SetOperatorNetwork writes network.operator.openshift.io/cluster with this hybrid overlay (nil: none).
func (d *DoctorCluster) SetOperatorNetwork(h *operatorv1.HybridOverlayConfig) {
	n := &operatorv1.Network{TypeMeta: metav1.TypeMeta{APIVersion: "operator.openshift.io/v1", Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	n.Spec.ManagementState = operatorv1.Managed
	n.Spec.DefaultNetwork = operatorv1.DefaultNetworkDefinition{Type: operatorv1.NetworkTypeOVNKubernetes,
		OVNKubernetesConfig: &operatorv1.OVNKubernetesConfig{HybridOverlayConfig: h}}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(n)
	require.NoError(d.T, err)
	res := d.C.Dynamic.Resource(operatorv1.GroupVersion.WithResource("networks"))
	u := &unstructured.Unstructured{Object: obj}
	if old, err := res.Get(d.Ctx, "cluster", metav1.GetOptions{}); err == nil {
		u.SetResourceVersion(old.GetResourceVersion())
		_, err = res.Update(d.Ctx, u, metav1.UpdateOptions{})
		require.NoError(d.T, err)
		return
	}
	_, err = res.Create(d.Ctx, u, metav1.CreateOptions{})
	require.NoError(d.T, err)
}

func (d *DoctorCluster) Secret(ns, name, key string, value []byte) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string][]byte{key: value}}
	secrets := d.C.Kube.CoreV1().Secrets(ns)
	if old, err := secrets.Get(d.Ctx, name, metav1.GetOptions{}); err == nil {
		old.Data = s.Data
		_, err = secrets.Update(d.Ctx, old, metav1.UpdateOptions{})
		require.NoError(d.T, err)
		return
	}
	_, err := secrets.Create(d.Ctx, s, metav1.CreateOptions{})
	require.NoError(d.T, err)
}

// InstallWMCO installs the operator as OLM would (the OLM stand-in on the real API server).
func (d *DoctorCluster) InstallWMCO() {
	t := d.T
	sim := olm.New(d.C, olm.Options{Catalogs: []olm.Catalog{{Name: cluster.DefaultCatalogSource, Channels: []string{"stable"}, DefaultChannel: "stable", Version: "11.0.1"}}})
	require.NoError(t, sim.Seed(d.Ctx))
	err := operator.InstallOperator(d.Ctx, cluster.NewOLM(d.C), operator.OperatorInstall{}, &Recorder{})
	require.NoError(t, err)
	for i := 0; i < 10; i++ {
		require.NoError(t, sim.Reconcile(d.Ctx))
		st, err := cluster.NewOLM(d.C).State(d.Ctx)
		require.NoError(t, err)
		if st.Installed() && st.DeploymentAvailable() {
			return
		}
	}
	t.Fatal("the OLM stand-in did not install WMCO")
}

func (d *DoctorCluster) Doctor(c cluster.Clients) diagnosis.Report {
	rep, err := doctor.Doctor(d.Ctx, doctor.DoctorDeps{Clients: c}, nil)
	require.NoError(d.T, err)
	return rep
}

func Check(t testing.TB, rep diagnosis.Report, id string) diagnosis.Check {
	t.Helper()
	c, ok := rep.Check(id)
	require.True(t, ok, "the report has check %s", id)
	return c
}

// UserDataSecret replaces windows-user-data's script (nil: deletes the secret) for the rest of the subtest.
func (d *DoctorCluster) UserDataSecret(t *testing.T, script []byte) {
	secrets := d.C.Kube.CoreV1().Secrets(config.MachineAPINamespace)
	saved, err := secrets.Get(d.Ctx, config.UserDataSecret, metav1.GetOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		d.Secret(config.MachineAPINamespace, config.UserDataSecret, config.UserDataSecretKey, saved.Data[config.UserDataSecretKey])
	})
	if script == nil {
		require.NoError(t, secrets.Delete(d.Ctx, config.UserDataSecret, metav1.DeleteOptions{}))
		return
	}
	d.Secret(config.MachineAPINamespace, config.UserDataSecret, config.UserDataSecretKey, script)
}

// CsvVersion sets the installed CSV's version for the rest of the subtest.
func (d *DoctorCluster) CsvVersion(t *testing.T, v string) {
	st, err := cluster.NewOLM(d.C).State(d.Ctx)
	require.NoError(t, err)
	res := d.C.Dynamic.Resource(cluster.CSVResource).Namespace(config.OperatorNamespace)
	patch := func(v string) {
		_, err := res.Patch(d.Ctx, st.CSV.Name, types.MergePatchType, []byte(`{"spec":{"version":"`+v+`"}}`), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	was := st.CSV.Spec.Version.String()
	patch(v)
	t.Cleanup(func() { patch(was) })
}

func (d *DoctorCluster) DeleteDeployment(t *testing.T) {
	deps := d.C.Kube.AppsV1().Deployments(config.OperatorNamespace)
	dep, err := deps.Get(d.Ctx, cluster.OperatorDeploymentKey, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, deps.Delete(d.Ctx, dep.Name, metav1.DeleteOptions{}))
	t.Cleanup(func() {
		status := dep.Status
		dep.ResourceVersion, dep.UID = "", ""
		created, err := deps.Create(d.Ctx, dep, metav1.CreateOptions{})
		require.NoError(t, err)
		created.Status = status
		_, err = deps.UpdateStatus(d.Ctx, created, metav1.UpdateOptions{})
		require.NoError(t, err)
	})
}

func (d *DoctorCluster) MirrorSet(t *testing.T, source, mirror string) {
	sets := d.C.Config.ConfigV1().ImageDigestMirrorSets()
	name := fmt.Sprintf("doctor-%d", time.Now().UnixNano())
	_, err := sets.Create(d.Ctx, &configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: []configv1.ImageDigestMirrors{
			{Source: source, Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirror)}}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sets.Delete(d.Ctx, name, metav1.DeleteOptions{})) })
}

// Proxy sets proxy/cluster with credentials in its URL and, when trustedCA is given, a CA ConfigMap that
// does not exist.
func (d *DoctorCluster) Proxy(t *testing.T, trustedCA string) {
	proxies := d.C.Config.ConfigV1().Proxies()
	p := &configv1.Proxy{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: configv1.ProxySpec{
		HTTPProxy: "http://admin:hunter2@proxy.example:3128", NoProxy: ".cluster.local", TrustedCA: configv1.ConfigMapNameReference{Name: trustedCA}}}
	_, err := proxies.Create(d.Ctx, p, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, proxies.Delete(d.Ctx, "cluster", metav1.DeleteOptions{})) })
}

// MirrorCluster creates mirror sets and the pull secret in the real API server and returns what wmcon
// renders from them through cluster.MirrorInput.
func MirrorCluster(t *testing.T, e *Env) registries.Tree {
	t.Helper()
	conf := configclient.NewForConfigOrDie(Server.AdminConfig())
	name := "m-" + e.NS
	idms := &configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configv1.ImageDigestMirrorSetSpec{
		ImageDigestMirrors: []configv1.ImageDigestMirrors{{Source: "mcr.microsoft.com/oss/kubernetes/pause",
			Mirrors: []configv1.ImageMirror{"mirror.corp:5000/mcr/oss/kubernetes/pause"}}}}}
	itms := &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configv1.ImageTagMirrorSetSpec{
		ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "registry.local:5000/team/app", MirrorSourcePolicy: configv1.NeverContactSource,
			Mirrors: []configv1.ImageMirror{"mirror.corp:5000/team/app"}}}}}
	_, err := conf.ConfigV1().ImageDigestMirrorSets().Create(e.Ctx, idms, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conf.ConfigV1().ImageDigestMirrorSets().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	_, err = conf.ConfigV1().ImageTagMirrorSets().Create(e.Ctx, itms, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conf.ConfigV1().ImageTagMirrorSets().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	in, err := cluster.MirrorInput(e.Ctx, e.Clients)
	require.NoError(t, err)
	tree, err := registries.Render(in)
	require.NoError(t, err)
	require.Contains(t, tree.Map(), `registry.local_5000_\hosts.toml`)
	return tree
}

// UserData is what WMCO (or wmcon standalone) writes for pub on the seeded AWS cluster.
func UserData(pub ssh.PublicKey) []byte { return userdata.ForKey(pub, "AWS") }
