package metrics

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A WMCO node's exporter serves TLS, one configured without its web configuration plain HTTP: ScrapeOver
// reads both through the host's connection.
func TestScrapeOverTLSOrPlain(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("windows_cs_logical_processors 4\n"))
	})
	for name, srv := range map[string]*httptest.Server{"tls": httptest.NewTLSServer(page), "plain": httptest.NewServer(page)} {
		t.Cleanup(srv.Close)
		addr := srv.Listener.Addr().String()
		dial := func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr) // the host's 127.0.0.1:9182, as its SSH connection reaches it
		}
		body, err := ScrapeOver(context.Background(), dial, 9182)
		require.NoError(t, err, name)
		assert.Equal(t, "windows_cs_logical_processors 4\n", string(body), name)
	}
}
