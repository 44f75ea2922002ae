package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/localfile"
)

// HostKeyStore keeps the pinned SSH host key of each host. wmcon trusts a host's key on first use and
// afterwards accepts only the pinned key. host is the address wmcon dials, "ip:port".
// The cluster package implements it with WMCO's Node annotation / windows-ssh-host-keys ConfigMap.
type HostKeyStore interface {
	Lookup(ctx context.Context, host string) (ssh.PublicKey, bool, error)
	Pin(ctx context.Context, host string, key ssh.PublicKey) error
}

// HostKeyMismatchError refuses a host whose key differs from the pinned one: either the host was
// reinstalled or someone is in the middle. wmcon never replaces a pin silently.
type HostKeyMismatchError struct {
	Host     string // address dialled
	Node     string // node name, for the re-pin command ("" when unknown)
	Expected string // fingerprint of the pinned key
	Got      string // fingerprint the host presented
}

func (e *HostKeyMismatchError) Error() string {
	name := e.Node
	if name == "" {
		name = e.Host
	}
	return fmt.Sprintf("host key of %s changed: pinned %s, host presented %s. If the host was reinstalled, "+
		"re-pin it deliberately with `%s`; otherwise someone may be intercepting the connection",
		e.Host, e.Expected, e.Got, cmdline.Wmcon("hostkey", "forget", name))
}

// hostKeyChecker is the TOFU policy over a HostKeyStore for one host.
type hostKeyChecker struct {
	ctx    context.Context
	store  HostKeyStore
	host   string
	node   string
	pinned ssh.PublicKey // looked up before the handshake, nil on first use
}

func newHostKeyChecker(ctx context.Context, store HostKeyStore, host, node string) (*hostKeyChecker, error) {
	if store == nil {
		return nil, errors.New("no host key store configured: wmcon never connects without checking host keys")
	}
	pinned, found, err := store.Lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("look up pinned host key of %s: %w", host, err)
	}
	c := &hostKeyChecker{ctx: ctx, store: store, host: host, node: node}
	if found {
		c.pinned = pinned
	}
	return c, nil
}

// algorithms asks the server for the pinned key's type, so a host with several host keys presents the
// one we know (as OpenSSH does with known_hosts).
func (c *hostKeyChecker) algorithms() []string {
	if c.pinned == nil {
		return nil
	}
	return algorithmsForKeyType(c.pinned.Type())
}

func algorithmsForKeyType(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

func (c *hostKeyChecker) callback(_ string, _ net.Addr, key ssh.PublicKey) error {
	if c.pinned == nil {
		if err := c.store.Pin(c.ctx, c.host, key); err != nil {
			return fmt.Errorf("pin host key of %s: %w", c.host, err)
		}
		c.pinned = key
		return nil
	}
	if !bytes.Equal(c.pinned.Marshal(), key.Marshal()) {
		return &HostKeyMismatchError{Host: c.host, Node: c.node,
			Expected: ssh.FingerprintSHA256(c.pinned), Got: ssh.FingerprintSHA256(key)}
	}
	return nil
}

// KnownHostsStore keeps pins in an OpenSSH known_hosts file (it is also how bastion keys are checked).
// Lines it does not understand are left alone; new pins are appended. The path must be absolute: a pin
// that lands wherever wmcon happened to be started would be missing from any other directory, and the
// changed key would then be taken for a first use.
type KnownHostsStore struct {
	Path string
	// Unavailable, when set, says why there is no file: lookups find nothing and pins are refused with it.
	Unavailable error
	mu          sync.Mutex
}

// NewKnownHostsStore uses the known_hosts file at path (created on first pin).
func NewKnownHostsStore(path string) *KnownHostsStore { return &KnownHostsStore{Path: path} }

// usable says why the file cannot be used, or nil.
func (s *KnownHostsStore) usable() error {
	switch {
	case s.Unavailable != nil:
		return s.Unavailable
	case s.Path == "":
		return errors.New("no known_hosts file configured")
	case !filepath.IsAbs(s.Path):
		return fmt.Errorf("known_hosts path %q is relative: its pins would depend on the working directory", s.Path)
	}
	return nil
}

// Lookup returns the key pinned for host ("ip:port"). Without a usable file nothing is pinned (Pin then refuses).
func (s *KnownHostsStore) Lookup(_ context.Context, host string) (ssh.PublicKey, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.usable() != nil {
		return nil, false, nil
	}
	if err := localfile.Check(s.Path, localfile.MaxKnownHosts); errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("read known hosts: %w", err)
	}
	check, err := knownhosts.New(s.Path)
	if err != nil {
		return nil, false, fmt.Errorf("read known hosts %s: %w", s.Path, err)
	}
	// Asking with a key that cannot match makes knownhosts list the keys it has for the host.
	err = check(host, fakeAddr(host), probeKey{})
	var keyErr *knownhosts.KeyError
	if !errors.As(err, &keyErr) || len(keyErr.Want) == 0 {
		return nil, false, nil
	}
	return keyErr.Want[0].Key, true, nil
}

// Pin appends host's key to the file; without a usable file it refuses, so wmcon does not connect to a
// host whose key it cannot keep.
func (s *KnownHostsStore) Pin(_ context.Context, host string, key ssh.PublicKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return &NoPinStoreError{Host: host, Err: err}
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(s.Path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(host)}, key) + "\n"
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Forget removes every pin of host, for `wmcon hostkey forget`.
func (s *KnownHostsStore) Forget(_ context.Context, host string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.usable() != nil {
		return nil // nothing can have been pinned here
	}
	data, err := localfile.Read(s.Path, localfile.MaxKnownHosts)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	want := knownhosts.Normalize(host)
	var kept [][]byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		fields := bytes.Fields(line)
		if len(fields) > 0 && containsHost(string(fields[0]), want) {
			continue
		}
		kept = append(kept, line)
	}
	return os.WriteFile(s.Path, bytes.Join(kept, nil), 0o600)
}

// NoPinStoreError refuses a first connection whose host key could not be kept anywhere.
type NoPinStoreError struct {
	Host string
	Err  error
}

func (e *NoPinStoreError) Error() string {
	return fmt.Sprintf("cannot pin the host key of %s (%v): refusing to connect without a pin; set HOME or "+
		"XDG_CONFIG_HOME, or pass --known-hosts with an absolute path", e.Host, e.Err)
}

func (e *NoPinStoreError) Unwrap() error { return e.Err }

func containsHost(patterns, host string) bool {
	for _, p := range bytes.Split([]byte(patterns), []byte(",")) {
		if string(p) == host {
			return true
		}
	}
	return false
}

// fakeAddr is the remote address knownhosts wants; built without resolving names (no DNS from here).
func fakeAddr(host string) net.Addr {
	h, p, err := net.SplitHostPort(host)
	if err != nil {
		h, p = host, "22"
	}
	port, _ := strconv.Atoi(p)
	return &net.TCPAddr{IP: net.ParseIP(h), Port: port}
}

// probeKey is a key no host has.
type probeKey struct{}

func (probeKey) Type() string                        { return "wmcon-probe" }
func (probeKey) Marshal() []byte                     { return []byte("wmcon-probe") }
func (probeKey) Verify([]byte, *ssh.Signature) error { return errors.New("probe key") }
