package remote

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/wmcon/wmcon/localfile"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// PassphraseFunc returns the passphrase of an encrypted key; keyName says which key (a path, or
// "cloud-private-key"). The console prompts; headless runs read PassphraseEnv.
type PassphraseFunc func(keyName string) ([]byte, error)

// PassphraseEnv is the environment variable headless runs take a key passphrase from.
const PassphraseEnv = "WMCON_SSH_PASSPHRASE"

// PassphraseFromEnv reads the passphrase from the environment variable name (PassphraseEnv when empty).
func PassphraseFromEnv(name string) PassphraseFunc {
	if name == "" {
		name = PassphraseEnv
	}
	return func(string) ([]byte, error) {
		v, ok := os.LookupEnv(name)
		if !ok {
			return nil, sshkey.ErrPassphraseNeeded
		}
		return []byte(v), nil
	}
}

// Auth says which credentials wmcon offers. Keys are tried before the agent.
type Auth struct {
	KeyFiles   []string // private key files (~ is expanded)
	KeyPEM     []byte   // a private key held in memory, e.g. the cloud-private-key secret
	KeyPEMName string   // how to name KeyPEM in messages and prompts
	// LoadKeyPEM fetches the in-memory key on the first login that needs credentials, when KeyPEM is
	// empty (the cluster's cloud-private-key secret: a console start does not wait for, or ask for, a key
	// it may never use). It is called at most once; nil or an empty result means no in-memory key.
	LoadKeyPEM  func() ([]byte, string)
	Agent       bool   // also offer the keys of the ssh-agent at AgentSocket, when there is one
	AgentSocket string // default $SSH_AUTH_SOCK
	// AgentRequired makes a missing agent an error; otherwise (the default, so cron, CI and systemd runs
	// with a key file work) an unset SSH_AUTH_SOCK is skipped with a debug message.
	AgentRequired bool
	Passphrase    PassphraseFunc // asked once per encrypted key; nil refuses encrypted keys
}

// authenticator turns an Auth into SSH auth methods, parsing each key once.
type authenticator struct {
	auth    Auth
	noAgent sync.Once // the missing agent is mentioned once
	loadKey sync.Once // LoadKeyPEM is called once
	mu      sync.Mutex
	signers map[string]ssh.Signer // by key file path, "" for KeyPEM
}

func newAuthenticator(a Auth) *authenticator {
	return &authenticator{auth: a, signers: map[string]ssh.Signer{}}
}

// methods returns the auth methods for one login; extraKeyFiles come from ~/.ssh/config IdentityFile.
// The returned closer releases the agent connection once the handshake is over.
func (a *authenticator) methods(extraKeyFiles []string) ([]ssh.AuthMethod, func(), error) {
	var signers []ssh.Signer
	files := append(append([]string{}, a.auth.KeyFiles...), extraKeyFiles...)
	for _, f := range files {
		s, err := a.signerFromFile(f)
		if err != nil {
			return nil, nil, err
		}
		signers = append(signers, s)
	}
	if pemBytes, name := a.keyPEM(); len(pemBytes) > 0 {
		s, err := a.signer("", pemBytes, name)
		if err != nil {
			return nil, nil, err
		}
		signers = append(signers, s)
	}
	var methods []ssh.AuthMethod
	if len(signers) > 0 {
		methods = append(methods, ssh.PublicKeys(signers...))
	}
	closeAgent := func() {}
	if a.auth.Agent || a.auth.AgentRequired {
		m, closer, err := a.agentMethod()
		switch {
		case err == nil:
			methods, closeAgent = append(methods, m), closer
		case errors.Is(err, errNoAgent) && !a.auth.AgentRequired:
			a.noAgent.Do(func() { slog.Debug("no ssh-agent: SSH_AUTH_SOCK is not set; using key files only") })
		default:
			return nil, nil, err
		}
	}
	if len(methods) == 0 {
		return nil, nil, errors.New("no SSH credentials configured: give a private key (--ssh-key or the cloud-private-key secret) or start an ssh-agent (SSH_AUTH_SOCK)")
	}
	return methods, closeAgent, nil
}

// keyPEM is the in-memory key and its name, read under the lock (setKeyPEM may replace it); the first
// call loads it with LoadKeyPEM when the pool was made without one.
func (a *authenticator) keyPEM() ([]byte, string) {
	a.loadKey.Do(func() {
		a.mu.Lock()
		load := a.auth.LoadKeyPEM
		have := len(a.auth.KeyPEM) > 0
		a.mu.Unlock()
		if load == nil || have {
			return
		}
		pemBytes, name := load()
		a.mu.Lock()
		if len(a.auth.KeyPEM) == 0 { // a key set meanwhile (setKeyPEM) wins
			a.auth.KeyPEM, a.auth.KeyPEMName = pemBytes, name
		}
		a.mu.Unlock()
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.auth.KeyPEMName != "" {
		return a.auth.KeyPEM, a.auth.KeyPEMName
	}
	return a.auth.KeyPEM, "the private key"
}

// setKeyPEM replaces the in-memory key, forgetting the parsed one.
func (a *authenticator) setKeyPEM(pemBytes []byte, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.auth.KeyPEM, a.auth.KeyPEMName = pemBytes, name
	delete(a.signers, "")
}

func (a *authenticator) signerFromFile(path string) (ssh.Signer, error) {
	path = expandHome(path)
	a.mu.Lock()
	s, ok := a.signers[path]
	a.mu.Unlock()
	if ok {
		return s, nil
	}
	data, err := localfile.Read(path, localfile.MaxKey)
	if err != nil {
		return nil, fmt.Errorf("read SSH key %s: %w", path, err)
	}
	return a.signer(path, data, path)
}

func (a *authenticator) signer(cacheKey string, pemBytes []byte, name string) (ssh.Signer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.signers[cacheKey]; ok {
		return s, nil
	}
	var passphrase []byte
	if sshkey.IsEncrypted(pemBytes) && a.auth.Passphrase != nil {
		p, err := a.auth.Passphrase(name)
		if err != nil {
			return nil, fmt.Errorf("SSH key %s: %w", name, err)
		}
		passphrase = p
	}
	s, err := sshkey.Parse(pemBytes, passphrase)
	if err != nil {
		return nil, fmt.Errorf("SSH key %s: %w", name, err)
	}
	a.signers[cacheKey] = s
	return s, nil
}

var errNoAgent = errors.New("--ssh-agent was given but SSH_AUTH_SOCK is not set: start ssh-agent, or drop --ssh-agent to use key files only")

func (a *authenticator) agentMethod() (ssh.AuthMethod, func(), error) {
	sock := a.auth.AgentSocket
	if sock == "" {
		sock = os.Getenv("SSH_AUTH_SOCK")
	}
	if sock == "" {
		return nil, nil, errNoAgent
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to ssh-agent at %s: %w", sock, err)
	}
	client := agent.NewClient(conn)
	return ssh.PublicKeysCallback(client.Signers), func() { conn.Close() }, nil
}
