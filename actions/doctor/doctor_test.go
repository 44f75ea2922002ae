package doctor_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/doctor"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/testsupport/actiontest"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// One real API server for the OpenShift cases (each start takes seconds): subtests change one thing each and
// put it back.
func TestDoctorOnOpenShift(t *testing.T) {
	d := actiontest.NewDoctorCluster(t)
	t.Run("a healthy cluster passes every check", func(t *testing.T) { doctorHealthy(t, d) })
	t.Run("each broken prerequisite is found", func(t *testing.T) { doctorBroken(t, d) })
	t.Run("a forbidden read is its own finding", func(t *testing.T) { doctorForbidden(t, d) })
}

func doctorHealthy(t *testing.T, d *actiontest.DoctorCluster) {
	sink := &actiontest.Recorder{}
	rep, err := doctor.Doctor(d.Ctx, doctor.DoctorDeps{Clients: d.C}, sink)
	require.NoError(t, err)
	require.True(t, rep.Healthy(), rep.Summary())
	for _, c := range rep.Checks {
		assert.Equal(t, diagnosis.CheckOK, c.Status, "%s: %s (%s)", c.ID, c.Detail, c.Fix)
	}
	assert.Equal(t, "doc-x1y2z", rep.Cluster)
	assert.Contains(t, actiontest.Check(t, rep, "wmco").Detail, "WMCO 11.0.1 installed")
	assert.Contains(t, actiontest.Check(t, rep, "kubernetes-version").Detail, "within v1.36–v1.37")
	assert.Contains(t, actiontest.Check(t, rep, "platform").Detail, "Windows MachineSets")
	assert.Contains(t, actiontest.Check(t, rep, "access-operator").Evidence, "✓ create subscriptions.operators.coreos.com in "+config.OperatorNamespace)
	events := sink.All()
	require.NotEmpty(t, events)
	last := events[len(events)-1]
	assert.Equal(t, event.Finished, last.Kind)
	assert.Equal(t, event.Succeeded, last.Outcome)
	assert.Len(t, events, len(rep.Checks)+2, "one event per check, plus the start and the end")
}

func doctorBroken(t *testing.T, d *actiontest.DoctorCluster) {
	cfg := d.C.Config.ConfigV1()
	network := func(t *testing.T, f func(*configv1.Network)) {
		n, err := cfg.Networks().Get(d.Ctx, "cluster", metav1.GetOptions{})
		require.NoError(t, err)
		saved := n.Spec.DeepCopy()
		f(n)
		_, err = cfg.Networks().Update(d.Ctx, n, metav1.UpdateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			n, err := cfg.Networks().Get(d.Ctx, "cluster", metav1.GetOptions{})
			require.NoError(t, err)
			n.Spec = *saved
			_, err = cfg.Networks().Update(d.Ctx, n, metav1.UpdateOptions{})
			require.NoError(t, err)
		})
	}
	platform := func(t *testing.T, p configv1.PlatformType) {
		i, err := cfg.Infrastructures().Get(d.Ctx, "cluster", metav1.GetOptions{})
		require.NoError(t, err)
		saved := i.Status.PlatformStatus.DeepCopy()
		i.Status.PlatformStatus = &configv1.PlatformStatus{Type: p}
		_, err = cfg.Infrastructures().UpdateStatus(d.Ctx, i, metav1.UpdateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			i, err := cfg.Infrastructures().Get(d.Ctx, "cluster", metav1.GetOptions{})
			require.NoError(t, err)
			i.Status.PlatformStatus = saved
			_, err = cfg.Infrastructures().UpdateStatus(d.Ctx, i, metav1.UpdateOptions{})
			require.NoError(t, err)
		})
	}
	hybrid := &operatorv1.HybridOverlayConfig{HybridClusterNetwork: []operatorv1.ClusterNetworkEntry{{CIDR: "10.132.0.0/14", HostPrefix: 23}}}
	restoreHybrid := func(t *testing.T) { t.Cleanup(func() { d.SetOperatorNetwork(hybrid) }) }
	keyPEM := func() []byte {
		s, err := d.C.Kube.CoreV1().Secrets(config.OperatorNamespace).Get(d.Ctx, config.PrivateKeySecret, metav1.GetOptions{})
		require.NoError(t, err)
		return s.Data[config.PrivateKeySecretKey]
	}()
	restoreKey := func(t *testing.T) {
		t.Cleanup(func() {
			d.Secret(config.OperatorNamespace, config.PrivateKeySecret, config.PrivateKeySecretKey, keyPEM)
		})
	}

	cases := []struct {
		name   string
		break_ func(t *testing.T)
		id     string
		status diagnosis.CheckStatus
		detail string
	}{
		{"wrong network type", func(t *testing.T) { network(t, func(n *configv1.Network) { n.Spec.NetworkType = "OpenShiftSDN" }) },
			"network-type", diagnosis.CheckFail, "network type OpenShiftSDN cannot carry Windows nodes"},
		{"no hybrid overlay", func(t *testing.T) { restoreHybrid(t); d.SetOperatorNetwork(nil) },
			"hybrid-overlay", diagnosis.CheckFail, "hybrid overlay networking is not configured"},
		{"class E cluster network", func(t *testing.T) {
			network(t, func(n *configv1.Network) { n.Spec.ClusterNetwork[0].CIDR = "240.0.0.0/4" })
		}, "network-cidrs", diagnosis.CheckFail, "clusterNetwork 240.0.0.0/4 is in class E"},
		{"hybrid network overlapping the service network", func(t *testing.T) {
			restoreHybrid(t)
			d.SetOperatorNetwork(&operatorv1.HybridOverlayConfig{HybridClusterNetwork: []operatorv1.ClusterNetworkEntry{{CIDR: "172.30.0.0/16", HostPrefix: 23}}})
		}, "network-cidrs", diagnosis.CheckFail, "hybridClusterNetwork 172.30.0.0/16 overlaps serviceNetwork 172.30.0.0/16"},
		{"vSphere without a custom VXLAN port", func(t *testing.T) { platform(t, configv1.VSpherePlatformType) },
			"hybrid-overlay", diagnosis.CheckFail, "vSphere needs a custom hybridOverlayVXLANPort"},
		{"a platform without MachineSets", func(t *testing.T) { platform(t, configv1.NonePlatformType) },
			"platform", diagnosis.CheckOK, "None: BYOH hosts only"},
		{"operator version out of the window", func(t *testing.T) { d.CsvVersion(t, "10.19.0") },
			"kubernetes-version", diagnosis.CheckFail, "Kubernetes v1.37.1 is outside v1.32–v1.32"},
		{"operator Deployment gone", func(t *testing.T) { d.DeleteDeployment(t) },
			"wmco", diagnosis.CheckFail, "its Deployment is not available"},
		// Before the first Windows node a missing key is a setup step still to do (the wizard does not call it
		// blocking); once there are Windows nodes it is a fault (issue 25 item 9).
		{"missing key before any Windows node", func(t *testing.T) {
			restoreKey(t)
			require.NoError(t, d.C.Kube.CoreV1().Secrets(config.OperatorNamespace).Delete(d.Ctx, config.PrivateKeySecret, metav1.DeleteOptions{}))
		}, "private-key", diagnosis.CheckWarn, "secret " + config.OperatorNamespace + "/" + config.PrivateKeySecret + " is missing: no Windows node can be configured until it exists"},
		{"missing key with a Windows node", func(t *testing.T) {
			restoreKey(t)
			require.NoError(t, d.C.Kube.CoreV1().Secrets(config.OperatorNamespace).Delete(d.Ctx, config.PrivateKeySecret, metav1.DeleteOptions{}))
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "doctor-win-1", Labels: map[string]string{config.OSLabel: "windows"}}}
			_, err := d.C.Kube.CoreV1().Nodes().Create(d.Ctx, n, metav1.CreateOptions{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = d.C.Kube.CoreV1().Nodes().Delete(d.Ctx, n.Name, metav1.DeleteOptions{}) })
		}, "private-key", diagnosis.CheckFail, "the Windows nodes cannot be reconfigured or upgraded without it"},
		{"weak key", func(t *testing.T) {
			restoreKey(t)
			d.Secret(config.OperatorNamespace, config.PrivateKeySecret, config.PrivateKeySecretKey, rsaKey(t, 1024, ""))
		}, "private-key", diagnosis.CheckFail, "1024"},
		{"passphrase-protected key", func(t *testing.T) {
			restoreKey(t)
			d.Secret(config.OperatorNamespace, config.PrivateKeySecret, config.PrivateKeySecretKey, rsaKey(t, 2048, "secret"))
		}, "private-key", diagnosis.CheckFail, "passphrase"},
		{"user data holding another key", func(t *testing.T) {
			restoreKey(t)
			other, _, err := cluster.GenerateKey("ed25519")
			require.NoError(t, err)
			d.Secret(config.OperatorNamespace, config.PrivateKeySecret, config.PrivateKeySecretKey, other)
		}, "user-data", diagnosis.CheckFail, "does not belong to " + config.PrivateKeySecret},
		{"user data missing with WMCO installed", func(t *testing.T) { d.UserDataSecret(t, nil) },
			"user-data", diagnosis.CheckFail, "missing although WMCO is installed"},
		{"user data holding no key", func(t *testing.T) { d.UserDataSecret(t, []byte("<powershell>\nStart-Service sshd\n</powershell>\n")) },
			"user-data", diagnosis.CheckFail, "no public key found"},
		{"user data in GCP's form on AWS", func(t *testing.T) {
			pub, err := ssh.ParsePublicKey(mustPub(t, keyPEM))
			require.NoError(t, err)
			d.UserDataSecret(t, userdata.ForKey(pub, "GCP"))
		}, "user-data", diagnosis.CheckFail, "new AWS Machines will not run it: it is not wrapped in <powershell>"},
		{"pause image mirrored without its path", func(t *testing.T) {
			d.MirrorSet(t, "mcr.microsoft.com/oss/kubernetes", "mirror.example:5000/windows")
		}, "mirrors", diagnosis.CheckFail, "pause image"},
		{"mirror sets that leave out mcr.microsoft.com", func(t *testing.T) {
			d.MirrorSet(t, "quay.io/openshift-release-dev/ocp-release", "mirror.example:5000/ocp/ocp-release")
		}, "mirrors", diagnosis.CheckWarn, "none mirrors mcr.microsoft.com"},
		{"proxy CA ConfigMap missing", func(t *testing.T) { d.Proxy(t, "proxy-ca") },
			"cluster-proxy", diagnosis.CheckWarn, "proxy-ca"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.break_(t)
			rep := d.Doctor(d.C)
			c := actiontest.Check(t, rep, tc.id)
			assert.Equal(t, tc.status, c.Status, "%s: %s", c.ID, c.Detail)
			assert.Contains(t, c.Detail, tc.detail)
			if c.Status != diagnosis.CheckOK {
				assert.NotEmpty(t, c.Fix, "a check that is not ok says what to do")
			}
			if tc.status == diagnosis.CheckFail {
				assert.False(t, rep.Healthy())
				assert.Equal(t, tc.id, rep.Checks[0].ID, "the failing check comes first")
			}
		})
	}
	t.Run("vSphere leaves Windows Server 2019 out", func(t *testing.T) {
		before := actiontest.Check(t, d.Doctor(d.C), "windows-server")
		assert.Contains(t, before.Detail, "Windows Server 2019 LTSC", "AWS with the default VXLAN port takes 2019")
		platform(t, configv1.VSpherePlatformType)
		c := actiontest.Check(t, d.Doctor(d.C), "windows-server")
		assert.Equal(t, diagnosis.CheckOK, c.Status, c.Detail)
		assert.NotContains(t, c.Detail, "2019")
		assert.Contains(t, c.Detail, "Windows Server 2022 LTSC")
		assert.Contains(t, c.Evidence, "vSphere needs a custom VXLAN port, which Windows Server 2019 cannot use")
	})
	t.Run("a good pause mirror is named", func(t *testing.T) {
		d.MirrorSet(t, "mcr.microsoft.com/oss/kubernetes/pause", "mirror.example:5000/windows/oss/kubernetes/pause")
		c := actiontest.Check(t, d.Doctor(d.C), "mirrors")
		assert.Equal(t, diagnosis.CheckOK, c.Status, c.Detail)
		assert.Contains(t, c.Evidence, "Windows nodes pull the pause image from mirror.example:5000/windows/oss/kubernetes/pause")
	})
	t.Run("a proxy with credentials is shown redacted", func(t *testing.T) {
		d.Proxy(t, "")
		c := actiontest.Check(t, d.Doctor(d.C), "cluster-proxy")
		assert.Equal(t, diagnosis.CheckOK, c.Status, c.Detail)
		assert.Contains(t, strings.Join(c.Evidence, "\n"), "httpProxy: http://REDACTED@proxy.example:3128")
		assert.NotContains(t, strings.Join(c.Evidence, "\n"), "hunter2")
	})
	t.Run("a proxy value with CR/LF fails, without the value", func(t *testing.T) {
		d.Proxy(t, "")
		proxies := d.C.Config.ConfigV1().Proxies()
		p, err := proxies.Get(d.Ctx, "cluster", metav1.GetOptions{})
		require.NoError(t, err)
		p.Spec.HTTPSProxy = "http://admin:hunter2@proxy.example:3128\r\nX=1"
		_, err = proxies.Update(d.Ctx, p, metav1.UpdateOptions{})
		require.NoError(t, err)
		c := actiontest.Check(t, d.Doctor(d.C), "cluster-proxy")
		assert.Equal(t, diagnosis.CheckFail, c.Status, c.Detail)
		assert.Contains(t, c.Detail, `httpsProxy has the control character '\r'`)
		assert.Contains(t, c.Fix, "remove the control character from the httpsProxy of proxy/cluster")
		assert.NotContains(t, c.Detail+c.Fix+strings.Join(c.Evidence, "\n"), "hunter2")
	})
}

// mustPub is the wire form of a PEM private key's public half.
func mustPub(t *testing.T, pemBytes []byte) []byte {
	_, pub, err := cluster.ValidatePrivateKey(pemBytes)
	require.NoError(t, err)
	return pub.Marshal()
}

func rsaKey(t *testing.T, bits int, passphrase string) []byte {
	k, err := rsa.GenerateKey(rand.Reader, bits)
	require.NoError(t, err)
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(k, "")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(k, "", []byte(passphrase))
	}
	require.NoError(t, err)
	return pem.EncodeToMemory(block)
}

// A user who may only list and watch nodes gets the forbidden reads as findings of their own.
func doctorForbidden(t *testing.T, d *actiontest.DoctorCluster) {
	rbac := d.C.Kube.RbacV1()
	_, err := rbac.ClusterRoles().Create(d.Ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "node-viewer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = rbac.ClusterRoleBindings().Create(d.Ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "node-viewer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "node-viewer"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "viewer", APIGroup: "rbac.authorization.k8s.io"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	viewer, err := cluster.NewClients(d.Server.UserConfig("viewer"))
	require.NoError(t, err)
	rep := d.Doctor(viewer)

	read := actiontest.Check(t, rep, "access-read")
	assert.Equal(t, diagnosis.CheckFail, read.Status)
	assert.Contains(t, read.Evidence, "✓ list nodes")
	assert.Contains(t, read.Evidence, "✗ get secrets in "+config.OperatorNamespace)
	assert.Contains(t, read.Detail, "you may not list machinesets.machine.openshift.io in openshift-machine-api")
	assert.Equal(t, diagnosis.CheckWarn, actiontest.Check(t, rep, "access-operator").Status)

	for id, want := range map[string]string{
		"network-type": "cannot check the network type: you may not get network.config.openshift.io/cluster",
		"platform":     "cannot check the platform: you may not get infrastructures.config.openshift.io/cluster",
		"private-key":  "cannot check the SSH key: you may not get secrets in " + config.OperatorNamespace,
		"user-data":    "cannot check the user data: you may not get secrets in " + config.MachineAPINamespace,
		"wmco":         "cannot check WMCO: you may not get namespaces",
	} {
		c := actiontest.Check(t, rep, id)
		assert.Equal(t, diagnosis.CheckUnknown, c.Status, "%s: %s", id, c.Detail)
		assert.Contains(t, c.Detail, want, id)
		assert.Contains(t, c.Fix, "ask a cluster administrator", id)
	}
}

// On plain Kubernetes the OpenShift-only checks say so, as unknown, never as a failure.
func TestDoctorOnPlainKubernetes(t *testing.T) {
	srv := kubeapi.Start(t, kubeapi.WithCRDs(), kubeapi.WithNamespaces())
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := doctor.Doctor(ctx, doctor.DoctorDeps{Clients: c}, nil)
	require.NoError(t, err)
	for _, id := range []string{"network-type", "hybrid-overlay", "network-cidrs", "platform", "cluster-proxy", "mirrors", "wmco", "user-data", "access-operator"} {
		c := actiontest.Check(t, rep, id)
		assert.Equal(t, diagnosis.CheckUnknown, c.Status, "%s: %s", id, c.Detail)
		assert.Contains(t, c.Detail, "not an OpenShift cluster", id)
	}
	for _, id := range []string{"cluster-reachable", "access-read", "access-nodes", "access-csr", "kubernetes-version"} {
		assert.Equal(t, diagnosis.CheckOK, actiontest.Check(t, rep, id).Status, id)
	}
	key := actiontest.Check(t, rep, "private-key")
	assert.Equal(t, diagnosis.CheckWarn, key.Status, "wmcon configure needs the key on plain Kubernetes too; with no Windows node yet it is a step to do")
	assert.Contains(t, key.Fix, "wmcon key generate")
	assert.Equal(t, diagnosis.CheckOK, actiontest.Check(t, rep, "byoh-entries").Status, "no windows-instances: nothing wrong")

	// One wrong entry of windows-instances stalls every host (WMCO configures none): a loud warning.
	_, err = c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.OperatorNamespace}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.BYOHConfigMap, Namespace: config.OperatorNamespace},
		Data: map[string]string{"127.0.0.61": "username=Administrator", "127.0.0.62": "Administrator"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	rep, err = doctor.Doctor(ctx, doctor.DoctorDeps{Clients: c}, nil)
	require.NoError(t, err)
	byoh := actiontest.Check(t, rep, "byoh-entries")
	assert.Equal(t, diagnosis.CheckWarn, byoh.Status)
	assert.Contains(t, byoh.Detail, "WMCO configures none of the 2 hosts of windows-instances while any entry is wrong")
	require.Len(t, byoh.Evidence, 1)
	assert.Contains(t, byoh.Evidence[0], "127.0.0.62")
}

// The doctor's target: all checks against the test API server in under a second.
func BenchmarkDoctor(b *testing.B) {
	d := actiontest.NewDoctorCluster(b)
	for b.Loop() {
		rep, err := doctor.Doctor(d.Ctx, doctor.DoctorDeps{Clients: d.C}, nil)
		if err != nil || len(rep.Checks) == 0 {
			b.Fatalf("doctor: %v", err)
		}
	}
}
