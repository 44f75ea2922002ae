package metrics

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// DialHost opens a connection to an address as the node's host sees it (remote.Client.DialHost: a
// direct-tcpip channel of the host's SSH connection).
type DialHost func(ctx context.Context, addr string) (net.Conn, error)

// maxExporterBody bounds one scrape: windows_exporter's page is tens of KiB; a runaway one must not
// fill memory.
const maxExporterBody = 16 << 20

// ScrapeOver reads GET /metrics at 127.0.0.1:port on the host through dial: the exporter of a node whose
// node proxy this user may not use, reached over the SSH connection wmcon already has. A node WMCO configured
// serves it over TLS (with the certificate of its secret windows-machine-config-operator-tls, issued for the
// cluster's service name, not for 127.0.0.1), so TLS is tried first without checking that certificate — the
// SSH connection, whose host key is pinned, already authenticates the host — and plain HTTP when the exporter
// answers in plain HTTP.
func ScrapeOver(ctx context.Context, dial DialHost, port int) ([]byte, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	body, err := scrapeVia(ctx, dial, addr, "https")
	if err != nil && plainHTTPAnswer(err) {
		body, err = scrapeVia(ctx, dial, addr, "http")
	}
	if err != nil {
		return nil, fmt.Errorf("scrape windows_exporter at %s over SSH: %w", addr, err)
	}
	return body, nil
}

// plainHTTPAnswer is the error of a TLS request answered in plain HTTP.
func plainHTTPAnswer(err error) bool {
	return strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") || errors.As(err, new(tls.RecordHeaderError))
}

func scrapeVia(ctx context.Context, dial DialHost, addr, scheme string) ([]byte, error) {
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dial(ctx, addr)
	}, TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // see ScrapeOver
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxExporterBody))
}
