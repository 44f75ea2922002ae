package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/config"
)

// Target is one Windows host to reach.
type Target struct {
	Node     string // node (or BYOH entry) name, used in messages and in `wmcon hostkey forget`
	Addr     string // the node's first IPv4 InternalIP (or a DNS name), optionally with ":port"
	User     string // overrides the default user
	Platform string // the cluster's platform type; "Azure" makes the default user capi
}

// DefaultUser is the user WMCO logs in as on a platform.
func DefaultUser(platform string) string {
	if strings.EqualFold(platform, "Azure") {
		return config.AzureSSHUser
	}
	return config.DefaultSSHUser
}

// route is everything needed to dial one target: final address and user, keys, and the hops before it.
type route struct {
	addr      string
	user      string
	node      string
	extraKeys []string
	jumps     []Hop
}

// routeTo applies per-node overrides, then ~/.ssh/config, then the defaults.
func (p *Pool) routeTo(t Target) (route, error) {
	host, port := splitAddr(t.Addr)
	r := route{node: t.Node, jumps: p.bastion()}
	if p.sshConfig != nil {
		sc, err := ResolveSSHConfig(p.sshConfig, host)
		if err != nil {
			return route{}, err
		}
		host, r.user, r.extraKeys = sc.HostName, sc.User, sc.IdentityFiles
		if port == 0 && sc.Port != 0 {
			port = sc.Port
		}
		if len(r.jumps) == 0 {
			r.jumps = sc.Jumps
		}
	}
	if t.User != "" {
		r.user = t.User
	}
	if r.user == "" {
		r.user = p.cfg.User
	}
	if r.user == "" {
		r.user = DefaultUser(t.Platform)
	}
	if port == 0 {
		port = config.SSHPort
	}
	r.addr = net.JoinHostPort(host, strconv.Itoa(port))
	return r, nil
}

func splitAddr(addr string) (string, int) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return strings.Trim(addr, "[]"), 0
	}
	port, _ := strconv.Atoi(p)
	return host, port
}

// chain is an SSH connection to a target and its hold on the bastion connection it runs through.
type chain struct {
	client  *ssh.Client
	via     []*ssh.Client
	release func() // lets go of the shared bastion connection
}

func (c *chain) Close() error {
	err := c.client.Close()
	c.release()
	return err
}

// dial connects to the target through the pool's shared connection to its bastion chain (dialled first
// when there is none), within the dial timeout. When that connection turns out to have died, it is
// dialled again once.
func (p *Pool) dial(ctx context.Context, r route) (*chain, error) {
	for attempt := 0; ; attempt++ {
		via, release, err := p.acquireJumps(ctx, r.jumps)
		if err != nil {
			return nil, err
		}
		client, err := p.dialHop(ctx, via, r.addr, r.user, r.extraKeys, p.nodeKeys(ctx, r.addr, r.node))
		if err == nil {
			return &chain{client: client, via: via, release: release}, nil
		}
		release()
		if attempt == 0 && len(via) > 0 && brokenLink(err) {
			continue
		}
		return nil, p.explainDialError(err, r.addr, r.user, via)
	}
}

// brokenLink says a dial through a bastion failed because the bastion connection itself is gone (not
// because the bastion answered that the node cannot be reached): worth one new bastion connection.
func brokenLink(err error) bool {
	var stage *dialStageError
	var refused *ssh.OpenChannelError
	return errors.As(err, &stage) && stage.stage == "tcp" && !errors.As(err, &refused) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}

// keyCheck builds a host key checker lazily so a failed lookup is reported as such.
type keyCheck func() (*hostKeyChecker, error)

func (p *Pool) nodeKeys(ctx context.Context, addr, node string) keyCheck {
	return func() (*hostKeyChecker, error) { return newHostKeyChecker(ctx, p.cfg.HostKeys, addr, node) }
}

func (p *Pool) bastionKeys(ctx context.Context, addr, node string) keyCheck {
	return func() (*hostKeyChecker, error) { return newHostKeyChecker(ctx, p.cfg.BastionHostKeys, addr, node) }
}

// dialHop opens TCP (directly or through the last hop) and runs the SSH handshake, bounded by ctx and the
// dial timeout.
func (p *Pool) dialHop(ctx context.Context, via []*ssh.Client, addr, user string, keys []string, check keyCheck) (*ssh.Client, error) {
	checker, err := check()
	if err != nil {
		return nil, err
	}
	methods, closeAgent, err := p.auth.methods(keys)
	if err != nil {
		return nil, err
	}
	defer closeAgent()
	// The timeout starts only now: unlocking a key (a passphrase typed, a slow KDF) is not the network's time.
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	conn, err := p.openTCP(ctx, via, addr)
	if err != nil {
		return nil, &dialStageError{stage: "tcp", err: err}
	}
	cfg := &ssh.ClientConfig{
		User:              user,
		Auth:              methods,
		HostKeyCallback:   checker.callback,
		HostKeyAlgorithms: checker.algorithms(),
	}
	return handshake(ctx, conn, addr, cfg)
}

func (p *Pool) openTCP(ctx context.Context, via []*ssh.Client, addr string) (net.Conn, error) {
	if len(via) == 0 {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	return via[len(via)-1].DialContext(ctx, "tcp", addr)
}

// handshake runs the SSH handshake, closing the connection if ctx ends first (channel connections
// through a bastion have no deadlines, so the context is the only bound that works for every hop).
func handshake(ctx context.Context, conn net.Conn, addr string, cfg *ssh.ClientConfig) (*ssh.Client, error) {
	type result struct {
		client *ssh.Client
		err    error
	}
	done := make(chan result, 1)
	go func() {
		c, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{client: ssh.NewClient(c, chans, reqs)}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			conn.Close()
			return nil, &dialStageError{stage: "handshake", err: r.err}
		}
		return r.client, nil
	case <-ctx.Done():
		conn.Close()
		if r := <-done; r.client != nil {
			r.client.Close()
		}
		return nil, &dialStageError{stage: "handshake", err: ctx.Err()}
	}
}

type dialStageError struct {
	stage string
	err   error
}

func (e *dialStageError) Error() string { return e.err.Error() }
func (e *dialStageError) Unwrap() error { return e.err }

// explainDialError turns a dial failure into the typed error the user reads.
func (p *Pool) explainDialError(err error, addr, user string, via []*ssh.Client) error {
	var mismatch *HostKeyMismatchError
	if errors.As(err, &mismatch) {
		return mismatch
	}
	var noPin *NoPinStoreError
	if errors.As(err, &noPin) {
		return noPin
	}
	viaName := ""
	if len(via) > 0 {
		viaName = via[len(via)-1].RemoteAddr().String()
	}
	var stage *dialStageError
	if !errors.As(err, &stage) {
		return &LocalError{Host: addr, Err: err} // failed before the TCP dial: key, passphrase or host key store
	}
	if stage.stage == "tcp" || errors.Is(err, context.DeadlineExceeded) {
		return &UnreachableError{Host: addr, Via: viaName, Timeout: p.cfg.DialTimeout, Err: stage.err}
	}
	if strings.Contains(err.Error(), "unable to authenticate") {
		return &AuthError{User: user, Host: addr, Err: stage.err}
	}
	return fmt.Errorf("SSH handshake with %s: %w", addr, stage.err)
}

// markBastion says that a dial error is about a bastion, so its message does not send the user looking for
// the node (or for a bastion they already use).
func markBastion(err error) error {
	var unreachable *UnreachableError
	var auth *AuthError
	switch {
	case errors.As(err, &unreachable):
		unreachable.Bastion = true
	case errors.As(err, &auth):
		auth.Bastion = true
	}
	return err
}

// Timeouts used when Config leaves them zero.
const (
	DefaultDialTimeout       = 15 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultKeepaliveInterval = 15 * time.Second
	DefaultCommandTimeout    = 5 * time.Minute
)
