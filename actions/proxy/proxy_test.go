package proxy_test

import (
	"context"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/proxy"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

func TestProxyStatusAndSync(t *testing.T) {
	e := actiontest.NewEnv(t)
	conf := configclient.NewForConfigOrDie(actiontest.Server.AdminConfig())
	ca := "-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n"
	cmName := "ca-" + e.NS
	_, err := e.Kube.CoreV1().ConfigMaps(config.OpenShiftConfigNS).Create(e.Ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: cmName}, Data: map[string]string{config.TrustedCAKey: ca}}, metav1.CreateOptions{})
	if err != nil && strings.Contains(err.Error(), "not found") {
		_, _ = e.Kube.CoreV1().Namespaces().Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.OpenShiftConfigNS}}, metav1.CreateOptions{})
		_, err = e.Kube.CoreV1().ConfigMaps(config.OpenShiftConfigNS).Create(e.Ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: cmName}, Data: map[string]string{config.TrustedCAKey: ca}}, metav1.CreateOptions{})
	}
	require.NoError(t, err)
	clusterProxy := &configv1.Proxy{ObjectMeta: metav1.ObjectMeta{Name: config.ClusterSingletonName},
		Spec: configv1.ProxySpec{HTTPProxy: "http://proxy.corp:3128", HTTPSProxy: "http://proxy.corp:3128",
			NoProxy: ".cluster.local", TrustedCA: configv1.ConfigMapNameReference{Name: cmName}}}
	_, err = conf.ConfigV1().Proxies().Create(e.Ctx, clusterProxy, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conf.ConfigV1().Proxies().Delete(context.Background(), config.ClusterSingletonName, metav1.DeleteOptions{})
	})
	want, err := cluster.ClusterProxy(e.Ctx, e.Clients)
	require.NoError(t, err)
	require.Equal(t, ca, string(want.TrustedCA))

	hs := actiontest.NewLogHosts(t)
	drifted := hs.Add("drifted", "127.0.92.10")
	drifted.SetEnv("HTTP_PROXY", "http://old-proxy:8080")
	drifted.SetEnv("FTP_PROXY", "untouched")
	synced := hs.Add("synced", "127.0.92.11")
	for k, v := range want.Env() {
		synced.SetEnv(k, v)
	}
	require.NoError(t, synced.WriteFile(config.CABundlePath, []byte(ca)))
	nodes := hs.Infos("drifted", "synced")

	sts := proxy.ProxyStatus(e.Ctx, hs.Resolver, nodes, want, 0)
	assert.True(t, sts[0].Drift)
	assert.Equal(t, proxy.CAMissing, sts[0].CABundle)
	assert.Equal(t, "http://old-proxy:8080", sts[0].Vars[0].Have)
	assert.False(t, sts[1].Drift, "%+v", sts[1])

	rec := &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceLater }}
	changed, err := proxy.ProxySync(e.Ctx, hs.Resolver, nodes, want, proxy.ProxySyncOptions{}, rec)
	require.NoError(t, err)
	assert.Equal(t, []string{"drifted"}, changed)
	choice, err := proxy.OfferReboot(e.Ctx, rec, changed)
	require.NoError(t, err)
	assert.Equal(t, event.ChoiceLater, choice)
	require.Len(t, rec.Asked(), 1)
	assert.Contains(t, rec.Asked()[0].Detail, "drifted")
	for _, st := range proxy.ProxyStatus(e.Ctx, hs.Resolver, nodes, want, 0) {
		assert.False(t, st.Drift, "%+v", st)
	}
	v, _ := drifted.Env("FTP_PROXY")
	assert.Equal(t, "untouched", v, "only the proxy variables are wmcon's")

	// The cluster drops its HTTPS proxy and CA: sync deletes the variable and the bundle.
	want.HTTPS, want.TrustedCA = "", nil
	_, err = proxy.ProxySync(e.Ctx, hs.Resolver, nodes, want, proxy.ProxySyncOptions{}, &actiontest.Recorder{})
	require.NoError(t, err)
	_, ok := drifted.Env("HTTPS_PROXY")
	assert.False(t, ok)
	assert.False(t, drifted.Exists(config.CABundlePath))
}
