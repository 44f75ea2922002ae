package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ScrapeNodeExporter reads /metrics of the exporter listening on port of a node, through the API server's
// node proxy (GET /api/v1/nodes/NODE:PORT/proxy/metrics): the API server dials the node's address, so
// no route to the node is needed, only `get nodes/proxy`. It fails on the demo's fake clientsets.
func ScrapeNodeExporter(ctx context.Context, kube kubernetes.Interface, node string, port int) ([]byte, error) {
	if kube == nil {
		return nil, errors.New("no cluster client: the node proxy needs an API server")
	}
	rc, ok := kube.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		return nil, errors.New("this cluster client cannot reach the node proxy (demo cluster)")
	}
	body, err := rc.Get().AbsPath("/api/v1/nodes", node+":"+strconv.Itoa(port), "proxy", "metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scrape windows_exporter on %s:%d through the node proxy: %w", node, port, err)
	}
	return body, nil
}
