package remote

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
)

// freezingProxy forwards TCP to a backend until frozen; then it silently stops forwarding without
// closing anything, like a NAT that forgot the connection or a host that lost power.
type freezingProxy struct {
	l      net.Listener
	mu     sync.Mutex
	frozen bool
	conns  []net.Conn
}

func startFreezingProxy(t *testing.T, backend string) *freezingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &freezingProxy{l: l}
	t.Cleanup(p.close)
	go p.serve(backend)
	return p
}

func (p *freezingProxy) serve(backend string) {
	for {
		in, err := p.l.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", backend)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

func (p *freezingProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if err != nil {
			dst.Close()
			return
		}
		p.mu.Lock()
		frozen := p.frozen
		p.mu.Unlock()
		if frozen {
			continue // swallowed: the peer never hears back
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			src.Close()
			return
		}
	}
}

func (p *freezingProxy) freeze(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = on
}

func (p *freezingProxy) close() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func TestKeepaliveDetectsASilentlyDeadLinkAndTheNextCallRedials(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{Hostname: "WIN-KA"})
	proxy := startFreezingProxy(t, h.Addr())
	p := newTestPool(t, key, func(c *Config) { c.KeepaliveInterval = 50 * time.Millisecond })
	c, err := p.Client(Target{Node: "winworker-ka", Addr: proxy.l.Addr().String()})
	require.NoError(t, err)
	ctx := testCtx(t)
	_, err = c.Hostname(ctx)
	require.NoError(t, err)
	require.True(t, c.Connected())

	proxy.freeze(true)
	require.Eventually(t, func() bool { return !c.Connected() }, 20*time.Second, 10*time.Millisecond,
		"an unanswered keepalive closes the connection")
	proxy.freeze(false)
	name, err := c.Hostname(ctx)
	require.NoError(t, err)
	assert.Equal(t, "WIN-KA", name)
	assert.EqualValues(t, 2, c.Stats().Dials)
}
