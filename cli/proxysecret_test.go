package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions"
)

// TestProxyCredentialsAreMaskedAndControlCharactersRefused: against the real API server and a simulated
// host over real SSH, proxy status and proxy sync (text and JSON) and the audit log never show the
// password in the cluster's proxy URL or in the one the host has, while sync really writes the whole
// URL to the host. A proxy whose value holds CR/LF, which the API server stores, is refused with a
// sentence naming the field, and nothing is written to the host.
func TestProxyCredentialsAreMaskedAndControlCharactersRefused(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv(actions.AuditEnv, audit)
	ctx := context.Background()
	e := &nodeEnv{t: t, ctx: ctx, kube: kubernetes.NewForConfigOrDie(srv.AdminConfig()), ns: "default"}
	h := newHeadlessHost(t, e, "win-proxy-secret", "127.0.0.86")
	const secretURL, oldURL = "http://admin:hunter2@127.0.0.1:3128", "http://old:oldsecret@127.0.0.1:3128"
	proxies := configclient.NewForConfigOrDie(srv.AdminConfig()).ConfigV1().Proxies()
	_ = proxies.Delete(ctx, "cluster", metav1.DeleteOptions{})
	_, err := proxies.Create(ctx, &configv1.Proxy{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: configv1.ProxySpec{HTTPProxy: secretURL, HTTPSProxy: secretURL, NoProxy: ".cluster.local"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxies.Delete(context.Background(), "cluster", metav1.DeleteOptions{}) })
	noSecrets := func(what, text string) {
		t.Helper()
		assert.NotContains(t, text, "hunter2", what)
		assert.NotContains(t, text, "oldsecret", what)
	}

	h.host.SetEnv("HTTP_PROXY", oldURL)
	for _, args := range [][]string{{"proxy", "status", h.node}, {"proxy", "status", h.node, "-o", "json"}} {
		code, out, errOut := runWmcon(t, h.args(t, args...)...)
		assert.Equal(t, ExitCheckFailed, code, "%v: the host is out of step: %s", args, errOut)
		noSecrets("proxy status", out+errOut)
		assert.Contains(t, out, "REDACTED@127.0.0.1:3128", "%v: the proxy is still named", args)
	}
	for _, args := range [][]string{{"proxy", "sync", h.node, "-o", "json"}, {"proxy", "sync", h.node}} {
		h.host.SetEnv("HTTP_PROXY", oldURL)
		code, out, errOut := runWmcon(t, h.args(t, args...)...)
		require.Equal(t, 0, code, "%v: %s\n%s", args, out, errOut)
		noSecrets("proxy sync", out+errOut)
		assert.Contains(t, out, "HTTP_PROXY = http://REDACTED@127.0.0.1:3128", args)
		got, _ := h.host.Env("HTTP_PROXY")
		assert.Equal(t, secretURL, got, "the host gets the whole URL")
	}
	b, err := os.ReadFile(audit)
	require.NoError(t, err)
	require.NotEmpty(t, b)
	noSecrets("audit log", string(b))

	// CR/LF: the API server stores it; wmcon refuses to write it.
	p, err := proxies.Get(ctx, "cluster", metav1.GetOptions{})
	require.NoError(t, err)
	p.Spec.HTTPProxy = "http://127.0.0.1:3128\r\nEVIL=1"
	_, err = proxies.Update(ctx, p, metav1.UpdateOptions{})
	require.NoError(t, err, "the API server takes the value: refusing it is wmcon's to do")
	for _, args := range [][]string{{"proxy", "sync", h.node}, {"proxy", "status", h.node}} {
		code, out, errOut := runWmcon(t, h.args(t, args...)...)
		assert.Equal(t, ExitFailed, code, "%v: %s\n%s", args, out, errOut)
		assert.Contains(t, errOut, `proxy/cluster) httpProxy has the control character '\r' at byte 21`, args)
		assert.NotContains(t, out+errOut, "EVIL", "the value is not shown")
	}
	got, _ := h.host.Env("HTTP_PROXY")
	assert.Equal(t, secretURL, got, "nothing was written to the host")
}
