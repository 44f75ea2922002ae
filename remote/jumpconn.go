package remote

import (
	"context"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/config"
)

// jumpConn is one SSH connection through a bastion chain, shared by every host reached through it: each
// host is one direct-tcpip channel on it. A fleet action on 100 hosts thus logs in to the bastion once,
// not 100 times at once, which a stock sshd would refuse in part (MaxStartups 10:30:100 drops new
// connections while ten are still authenticating) and which costs the bastion a process each.
type jumpConn struct {
	via   []*ssh.Client // first hop first
	users int           // node connections running through it
	dead  chan struct{} // closed when any hop's connection ends
	once  sync.Once
}

func (j *jumpConn) alive() bool {
	select {
	case <-j.dead:
		return false
	default:
		return true
	}
}

func (j *jumpConn) close() {
	for i := len(j.via) - 1; i >= 0; i-- {
		j.via[i].Close()
	}
}

// jumpSlot holds the connection of one bastion chain; its lock makes hosts dialled at once wait for one
// bastion login instead of each starting its own.
type jumpSlot struct {
	mu   sync.Mutex
	conn *jumpConn
}

// jumpKey names a bastion chain: its hops in order, with the keys each offers.
func jumpKey(hops []Hop) string {
	var b strings.Builder
	for _, h := range hops {
		b.WriteString(h.String())
		b.WriteString("|")
		b.WriteString(strings.Join(h.IdentityFiles, ";"))
		b.WriteString(",")
	}
	return b.String()
}

// acquireJumps returns a live connection through hops, dialling it when there is none (or it died), and
// counts the caller as its user until release is called. No hops: nothing to share.
func (p *Pool) acquireJumps(ctx context.Context, hops []Hop) (via []*ssh.Client, release func(), err error) {
	if len(hops) == 0 {
		return nil, func() {}, nil
	}
	slot := p.jumpSlot(jumpKey(hops))
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.conn == nil || !slot.conn.alive() {
		if slot.conn != nil {
			slot.conn.close()
		}
		slot.conn = nil
		conn, err := p.dialJumps(ctx, hops)
		if err != nil {
			return nil, nil, err
		}
		slot.conn = conn
	}
	conn := slot.conn
	conn.users++
	var once sync.Once
	return conn.via, func() { once.Do(func() { p.releaseJumps(slot, conn) }) }, nil
}

// releaseJumps closes the bastion connection once no host uses it (each host's connection closes when
// idle, so the bastion's follows).
func (p *Pool) releaseJumps(slot *jumpSlot, conn *jumpConn) {
	slot.mu.Lock()
	defer slot.mu.Unlock()
	conn.users--
	if conn.users > 0 {
		return
	}
	conn.close()
	if slot.conn == conn {
		slot.conn = nil
	}
}

func (p *Pool) jumpSlot(key string) *jumpSlot {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.jumpConns == nil {
		p.jumpConns = map[string]*jumpSlot{}
	}
	slot, ok := p.jumpConns[key]
	if !ok {
		slot = &jumpSlot{}
		p.jumpConns[key] = slot
	}
	return slot
}

// dialJumps logs in to each hop in turn, each through the one before.
func (p *Pool) dialJumps(ctx context.Context, hops []Hop) (*jumpConn, error) {
	conn := &jumpConn{dead: make(chan struct{})}
	for _, hop := range hops {
		if hop.User == "" {
			hop.User = config.BastionUser
		}
		client, err := p.dialHop(ctx, conn.via, hop.Addr(), hop.User, hop.IdentityFiles, p.bastionKeys(ctx, hop.Addr(), ""))
		if err != nil {
			conn.close()
			return nil, markBastion(p.explainDialError(err, hop.Addr(), hop.User, conn.via))
		}
		conn.via = append(conn.via, client)
	}
	for _, c := range conn.via {
		go func() {
			_ = c.Wait()
			conn.once.Do(func() { close(conn.dead) })
		}()
	}
	return conn, nil
}

// closeJumps closes every bastion connection (Pool.Close, after the hosts' connections).
func (p *Pool) closeJumps() {
	p.mu.Lock()
	slots := p.jumpConns
	p.jumpConns = nil
	p.mu.Unlock()
	for _, slot := range slots {
		slot.mu.Lock()
		if slot.conn != nil {
			slot.conn.close()
			slot.conn = nil
		}
		slot.mu.Unlock()
	}
}
