package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// The cluster's Thanos querier, as OpenShift's monitoring stack installs it: a Service whose "web" port
// (9091) is kube-rbac-proxy in front of the querier, serving TLS.
const (
	ThanosNamespace = "openshift-monitoring"
	ThanosService   = "thanos-querier"
	thanosPort      = "9091"
)

// ThanosProxyID is how the API server's service proxy names the querier's port: scheme, name and port.
var ThanosProxyID = "https:" + ThanosService + ":" + thanosPort

// ErrThanosAbsent and ErrThanosForbidden say why the cluster's querier cannot be used.
var (
	ErrThanosAbsent    = errors.New("the cluster has no " + ThanosNamespace + "/" + ThanosService + " Service (no OpenShift monitoring)")
	ErrThanosForbidden = errors.New("this user may not reach " + ThanosNamespace + "/" + ThanosService + " through the API server's service proxy (get services/proxy)")
)

// ThanosQuerier finds the cluster's Thanos querier behind the API server's service proxy
// (/api/v1/namespaces/openshift-monitoring/services/https:thanos-querier:9091/proxy): it asks it for
// vector(1), and returns the base URL a Prometheus client can use with the round tripper that carries
// the user's credentials. No route to the cluster's network is needed. ErrThanosAbsent and
// ErrThanosForbidden (wrapped) say why not; another error is the querier failing to answer.
func ThanosQuerier(ctx context.Context, c Clients) (string, http.RoundTripper, error) {
	if c.REST == nil || c.Kube == nil {
		return "", nil, errors.New("no API server: the demo cluster has no Thanos querier")
	}
	_, err := c.Kube.CoreV1().Services(ThanosNamespace).ProxyGet("https", ThanosService, thanosPort, "api/v1/query",
		map[string]string{"query": "vector(1)"}).DoRaw(ctx)
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return "", nil, fmt.Errorf("%w: %v", ErrThanosForbidden, err)
	case apierrors.IsNotFound(err):
		return "", nil, fmt.Errorf("%w: %v", ErrThanosAbsent, err)
	case err != nil:
		return "", nil, fmt.Errorf("ask %s/%s through the service proxy: %w", ThanosNamespace, ThanosService, err)
	}
	rt, err := rest.TransportFor(c.REST)
	if err != nil {
		return "", nil, fmt.Errorf("thanos-querier: %w", err)
	}
	base := strings.TrimSuffix(c.REST.Host, "/") + strings.TrimSuffix(c.REST.APIPath, "/")
	if !strings.HasSuffix(base, "/api") {
		base += "/api"
	}
	return base + "/v1/namespaces/" + ThanosNamespace + "/services/" + ThanosProxyID + "/proxy", rt, nil
}
