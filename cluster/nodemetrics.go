package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ScrapeNodeExporter reads /metrics of the exporter listening on port of a node, through the API server's
// node proxy (GET /api/v1/nodes/https:NODE:PORT/proxy/metrics, then NODE:PORT for a plain one): the API server dials the node's address, so
// no route to the node is needed, only `get nodes/proxy`. It fails on the demo's fake clientsets.
func ScrapeNodeExporter(ctx context.Context, kube kubernetes.Interface, node string, port int) ([]byte, error) {
	if kube == nil {
		return nil, errors.New("no cluster client: the node proxy needs an API server")
	}
	rc, ok := kube.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		return nil, errors.New("this cluster client cannot reach the node proxy (demo cluster)")
	}
	// A node WMCO configured serves its exporter over TLS (the https: scheme of the node proxy); one without
	// its web configuration, plain HTTP. A refusal of the proxy itself (forbidden, no such node, an address
	// it will not dial: 400) is the same for both: no second try, which would double every scrape.
	target := node + ":" + strconv.Itoa(port)
	body, err := rc.Get().AbsPath("/api/v1/nodes", "https:"+target, "proxy", "metrics").DoRaw(ctx)
	if err != nil && !proxyRefused(err) && ctx.Err() == nil {
		body, err = rc.Get().AbsPath("/api/v1/nodes", target, "proxy", "metrics").DoRaw(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("scrape windows_exporter on %s:%d through the node proxy: %w", node, port, err)
	}
	return body, nil
}

// proxyRefused is an answer of the API server's node proxy itself, which a different scheme cannot change.
func proxyRefused(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err)
}
