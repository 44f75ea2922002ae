package cluster_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

// contentTypes records the Content-Type of each reply by request path.
type contentTypes struct {
	mu   sync.Mutex
	seen map[string]string
}

// wrap is a rest.Config transport wrapper: every client built from the config records into c.
func (c *contentTypes) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		res, err := next.RoundTrip(req)
		if err != nil {
			return res, err
		}
		c.mu.Lock()
		c.seen[req.URL.Path] = res.Header.Get("Content-Type")
		c.mu.Unlock()
		return res, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestCoreResourcesArriveAsProtobuf: the real API server sends nodes to wmcon's core client as protobuf,
// and the OpenShift clients (CRD-served resources, which have no protobuf form) still get JSON.
func TestCoreResourcesArriveAsProtobuf(t *testing.T) {
	ctx := context.Background()
	cfg := rest.CopyConfig(srv.AdminConfig())
	rec := &contentTypes{seen: map[string]string{}}
	cfg.Wrap(rec.wrap)
	clients, err := cluster.NewClients(cfg)
	require.NoError(t, err)

	_, err = clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
	require.NoError(t, err)
	_, err = clients.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).List(ctx, metav1.ListOptions{Limit: 1})
	require.NoError(t, err)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, "application/vnd.kubernetes.protobuf", rec.seen["/api/v1/nodes"])
	assert.True(t, strings.HasPrefix(rec.seen["/apis/machine.openshift.io/v1beta1/namespaces/openshift-machine-api/machinesets"], "application/json"), rec.seen)
}
