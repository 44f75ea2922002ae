package kubeapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
)

// NodeProxy lets the test API server proxy to simulated kubelets on loopback.
//
// kube-apiserver refuses to proxy to loopback node addresses ("address not allowed"), so a test cannot
// simply give a Node the address 127.0.0.N. Instead the API server is started with an egress selector
// whose "cluster" egress is an HTTP CONNECT proxy on a unix socket in the test process. A Node carries a
// fake address (198.18.0.N, the RFC 2544 benchmarking range, never routed); the API server asks the
// proxy to CONNECT to 198.18.0.N:port and the proxy connects to the loopback address registered for it
// instead. The fake address is never dialled, and every connection stays on this machine. This is a
// test-only trick.
//
// The fake address has to be the Node's InternalIP: the server's base flags prefer InternalIP, and
// --kubelet-preferred-address-types is a list flag that appends when repeated, so a Hostname address
// cannot be made to win. Tests therefore reach the simulated host over SSH through an explicit address
// (session.PoolResolver.Addrs), never through the Node's InternalIP.
type NodeProxy struct {
	dir      string
	sock     string
	listener net.Listener

	mu     sync.Mutex
	routes map[string]string // fake "198.18.0.N:port" → loopback "127.0.0.N:port"
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// NewNodeProxy starts the CONNECT proxy on a unix socket in a new temp dir; Close stops it.
func NewNodeProxy() (*NodeProxy, error) {
	dir, err := os.MkdirTemp("", "wmcon-egress-")
	if err != nil {
		return nil, fmt.Errorf("node proxy: temp dir: %w", err)
	}
	p := &NodeProxy{dir: dir, sock: filepath.Join(dir, "egress.sock"), routes: map[string]string{}, conns: map[net.Conn]struct{}{}}
	if err := p.writeConfig(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p.listener, err = net.Listen("unix", p.sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("node proxy: listen on %s: %w", p.sock, err)
	}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// WithNodeProxy points the API server's cluster egress (its connections to kubelets) at p.
func WithNodeProxy(p *NodeProxy) Option {
	return WithAPIServerFlags("--egress-selector-config-file=" + p.configPath())
}

// FakeNodeIP is the fake address standing for loopback ip 127.0.0.N: 198.18.0.N.
func FakeNodeIP(loopbackIP string) (string, error) {
	ip := net.ParseIP(loopbackIP).To4()
	if ip == nil || ip[0] != 127 || ip[1] != 0 || ip[2] != 0 {
		return "", fmt.Errorf("node proxy: %q is not an address 127.0.0.N", loopbackIP)
	}
	return fmt.Sprintf("198.18.0.%d", ip[3]), nil
}

// Route makes CONNECTs to fake ("198.18.0.N:port") reach loopback ("127.0.0.N:port").
func (p *NodeProxy) Route(fake, loopback string) error {
	host, _, err := net.SplitHostPort(loopback)
	if err != nil {
		return fmt.Errorf("node proxy: route target %q: %w", loopback, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("node proxy: route target %q is not a loopback address", loopback)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.routes[fake] = loopback
	return nil
}

// Close stops the proxy, cuts its tunnels and removes its temp dir.
func (p *NodeProxy) Close() error {
	err := p.listener.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	os.RemoveAll(p.dir)
	return err
}

func (p *NodeProxy) configPath() string { return filepath.Join(p.dir, "egress.yaml") }

func (p *NodeProxy) writeConfig() error {
	cfg := `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: ` + p.sock + "\n"
	if err := os.WriteFile(p.configPath(), []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("node proxy: write egress configuration: %w", err)
	}
	return nil
}

func (p *NodeProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.listener.Accept()
		if err != nil {
			return
		}
		if !p.track(c, true) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.track(c, false)
			p.tunnel(c)
		}()
	}
}

// track adds or removes a live connection; it refuses new ones once the proxy is closing.
func (p *NodeProxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !add {
		delete(p.conns, c)
		return true
	}
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// tunnel answers one CONNECT: it dials the registered loopback address, never the requested one.
func (p *NodeProxy) tunnel(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	p.mu.Lock()
	target, ok := p.routes[req.Host]
	p.mu.Unlock()
	if req.Method != http.MethodConnect || !ok {
		fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\n\r\nno route for %s\n", req.Host)
		return
	}
	up, err := net.Dial("tcp", target)
	if err != nil {
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	if !p.track(up, true) {
		up.Close()
		return
	}
	defer func() {
		p.track(up, false)
		up.Close()
	}()
	fmt.Fprintf(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, br)
		up.Close()
		close(done)
	}()
	_, _ = io.Copy(c, up)
	c.Close()
	<-done
}
