package remote

import (
	"fmt"
	"path/filepath"
	"sync"
	"time"

	sshconfig "github.com/kevinburke/ssh_config"
)

// Config is how wmcon reaches Windows hosts. Zero durations take the Default* values.
type Config struct {
	Auth  Auth
	User  string // default user for every host ("" = per platform: Administrator, capi on Azure)
	Jumps []Hop  // bastion chain (--ssh-bastion or the cluster's run=ssh-bastion Service); wins over ~/.ssh/config
	// FindJumps finds the bastion chain on the first connection, when Jumps is empty (the cluster's
	// run=ssh-bastion Service: looked up only once an action reaches a host). Called at most once; an
	// error or no hops means nodes are dialled directly (or as ~/.ssh/config says).
	FindJumps       func() ([]Hop, error)
	SSHConfigPath   string       // an ssh_config file applied to node addresses and jump hosts ("" = none)
	HostKeys        HostKeyStore // pins of Windows hosts (required)
	BastionHostKeys HostKeyStore // known_hosts for bastions (default ~/.ssh/known_hosts, new bastions accepted on first use)

	DialTimeout       time.Duration // whole dial, every hop included
	IdleTimeout       time.Duration // close a connection unused this long (<0: never)
	KeepaliveInterval time.Duration // keepalive@openssh.com period; a missed reply closes the link (<0: off)
	CommandTimeout    time.Duration // bound on Run (not on Stream/Tail, which run until cancelled)

	// ReadOnly refuses every operation that changes a host (--read-only); reads still work.
	ReadOnly bool
}

func (c *Config) applyDefaults() {
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.KeepaliveInterval == 0 {
		c.KeepaliveInterval = DefaultKeepaliveInterval
	}
	if c.CommandTimeout <= 0 {
		c.CommandTimeout = DefaultCommandTimeout
	}
	if c.BastionHostKeys == nil {
		home, err := HomeDir()
		c.BastionHostKeys = &KnownHostsStore{Path: filepath.Join(home, ".ssh", "known_hosts"), Unavailable: err}
	}
}

// Pool holds one Client (one SSH connection) per host, shared by every action.
type Pool struct {
	cfg       Config
	auth      *authenticator
	sshConfig *sshconfig.Config

	mu      sync.Mutex
	clients map[string]*Client // by user@address

	jumpsOnce sync.Once
	jumps     []Hop                // cfg.Jumps, or what cfg.FindJumps found
	jumpConns map[string]*jumpSlot // one shared connection per bastion chain (under mu)
}

// bastion is the chain of jump hosts before every node, found on first use when not configured.
func (p *Pool) bastion() []Hop {
	p.jumpsOnce.Do(func() {
		p.jumps = p.cfg.Jumps
		if len(p.jumps) == 0 && p.cfg.FindJumps != nil {
			if hops, err := p.cfg.FindJumps(); err == nil {
				p.jumps = hops
			}
		}
	})
	return p.jumps
}

// NewPool checks the configuration and reads the ssh_config file, if any. Keys are parsed on first use.
func NewPool(cfg Config) (*Pool, error) {
	cfg.applyDefaults()
	if cfg.HostKeys == nil {
		return nil, fmt.Errorf("remote: no host key store: wmcon never connects without checking host keys")
	}
	p := &Pool{cfg: cfg, auth: newAuthenticator(cfg.Auth), clients: map[string]*Client{}}
	if cfg.SSHConfigPath != "" {
		sc, err := LoadSSHConfig(cfg.SSHConfigPath)
		if err != nil {
			return nil, err
		}
		p.sshConfig = sc
	}
	return p, nil
}

// UseKeyPEM makes later logins offer this in-memory key instead of the one the pool was made with (the
// cluster's key, once the guided setup installed it in this run); connections already open keep theirs.
func (p *Pool) UseKeyPEM(pemBytes []byte, name string) { p.auth.setKeyPEM(pemBytes, name) }

// Client returns the client of a host, creating it on first use. It dials lazily.
func (p *Pool) Client(t Target) (*Client, error) {
	r, err := p.routeTo(t)
	if err != nil {
		return nil, err
	}
	key := r.user + "@" + r.addr
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[key]; ok {
		return c, nil
	}
	c := newClient(p, t, r)
	p.clients[key] = c
	return c, nil
}

// Host is Client as the Host interface.
func (p *Pool) Host(t Target) (Host, error) { return p.Client(t) }

// Close closes every connection.
func (p *Pool) Close() error {
	p.mu.Lock()
	clients := p.clients
	p.clients = map[string]*Client{}
	p.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
	p.closeJumps()
	return nil
}
