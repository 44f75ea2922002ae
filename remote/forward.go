package remote

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// DialHost opens a TCP connection to addr as the host sees it (its windows_exporter at 127.0.0.1:9182)
// through the host's SSH connection, a direct-tcpip channel: no route to that port is needed, only SSH.
// The connection holds the SSH connection open until it is closed.
func (c *Client) DialHost(ctx context.Context, addr string) (net.Conn, error) {
	conn, release, err := c.acquire(ctx)
	if err != nil {
		return nil, err
	}
	nc, err := conn.chain.client.DialContext(ctx, "tcp", addr)
	if err != nil {
		release()
		return nil, fmt.Errorf("%s: open %s on the host through SSH: %w", c.Name(), addr, err)
	}
	return &heldConn{Conn: nc, release: release}, nil
}

// heldConn releases its SSH connection when closed.
type heldConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (h *heldConn) Close() error {
	err := h.Conn.Close()
	h.once.Do(h.release)
	return err
}
