package metrics

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
)

// DialHost opens a connection to an address as the node's host sees it (remote.Client.DialHost: a
// direct-tcpip channel of the host's SSH connection).
type DialHost func(ctx context.Context, addr string) (net.Conn, error)

// maxExporterBody bounds one scrape: windows_exporter's page is tens of KiB; a runaway one must not
// fill memory.
const maxExporterBody = 16 << 20

// ScrapeOver reads GET http://127.0.0.1:port/metrics on the host through dial: the exporter of a node
// whose node proxy this user may not use, reached over the SSH connection wmcon already has.
func ScrapeOver(ctx context.Context, dial DialHost, port int) ([]byte, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dial(ctx, addr)
	}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape windows_exporter at %s over SSH: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape windows_exporter at %s over SSH: %s", addr, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxExporterBody))
	if err != nil {
		return nil, fmt.Errorf("scrape windows_exporter at %s over SSH: %w", addr, err)
	}
	return body, nil
}
