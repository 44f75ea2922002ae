package cluster_test

import (
	"context"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
)

// TestAProxyValueWithCRLFIsRefusedByBothReaders: the real API server stores a proxy whose status holds a
// CR/LF (as a broken controller or a hand edit leaves it); the reader proxy status/sync use and the one
// configure uses both refuse it, naming the field and not the value, so it never reaches a node's machine
// environment.
func TestAProxyValueWithCRLFIsRefusedByBothReaders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	infra := c.Config.ConfigV1().Infrastructures()
	proxies := c.Config.ConfigV1().Proxies()
	_ = infra.Delete(ctx, "cluster", metav1.DeleteOptions{})
	_ = proxies.Delete(ctx, "cluster", metav1.DeleteOptions{})
	_, err = infra.Create(ctx, &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = infra.Delete(context.Background(), "cluster", metav1.DeleteOptions{}) })
	p, err := proxies.Create(ctx, &configv1.Proxy{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxies.Delete(context.Background(), "cluster", metav1.DeleteOptions{}) })
	p.Status = configv1.ProxyStatus{HTTPProxy: "http://admin:hunter2@127.0.0.1:3128", HTTPSProxy: "http://127.0.0.1:3128\r\nX=1"}
	_, err = proxies.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	require.NoError(t, err, "the API server stores it")

	_, err = cluster.ClusterProxy(ctx, c)
	var bad *model.ProxyValueError
	require.ErrorAs(t, err, &bad)
	assert.Equal(t, "httpsProxy", bad.Field)
	_, err = cluster.NewOps(c).ReadNodeFacts(ctx, cluster.NodeFactsOptions{DryRun: true})
	require.ErrorAs(t, err, &bad, "configure refuses it too")
	assert.Contains(t, err.Error(), `httpsProxy has the control character '\r' at byte 21`)
	assert.NotContains(t, err.Error(), "hunter2")
	assert.NotContains(t, err.Error(), "X=1")
}
