// Package sshd starts a real OpenSSH sshd for tests: on 127.0.0.1 with a free port, its own host key,
// a throwaway config and authorized_keys in a temporary directory, the real sftp-server, and TCP forwarding
// allowed so it can serve as a bastion. It is stopped in t.Cleanup, even when the test fails.
package sshd

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// Paths of the OpenSSH programs the helper runs.
const (
	SSHDPath       = "/usr/sbin/sshd"
	SFTPServerPath = "/usr/lib/openssh/sftp-server"
)

// Server is a running sshd.
type Server struct {
	Addr          string        // "127.0.0.1:port"
	Port          int           //
	User          string        // the current user, who may log in with ClientKey
	HostKey       ssh.PublicKey // the server's host key
	ClientKey     ssh.Signer    // a key in the server's authorized_keys
	ClientKeyPEM  []byte        // ClientKey in OpenSSH PEM form
	ClientKeyFile string        // ClientKeyPEM written to a 0600 file
	KnownHosts    string        // a known_hosts file that pins HostKey for Addr
	Dir           string        // the temporary directory holding config and keys

	log *lockedBuffer
}

// Start runs sshd for the test, or skips the test when OpenSSH's server is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(SSHDPath); err != nil {
		t.Skipf("sshdtest: %s is not installed (make test installs openssh-server); skipping the test against real OpenSSH", SSHDPath)
	}
	s, err := prepare(t.TempDir())
	if err != nil {
		t.Fatalf("sshdtest: %v", err)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken between probing and binding
		if lastErr = s.run(t); lastErr == nil {
			return s
		}
	}
	t.Fatalf("sshdtest: sshd did not start: %v\n%s", lastErr, s.log.String())
	return nil
}

func prepare(dir string) (*Server, error) {
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, User: u.Username, log: &lockedBuffer{}}
	hostSigner, err := writeKey(filepath.Join(dir, "ssh_host_ed25519_key"))
	if err != nil {
		return nil, err
	}
	s.HostKey = hostSigner.PublicKey()
	s.ClientKeyFile = filepath.Join(dir, "id_ed25519")
	if s.ClientKey, err = writeKey(s.ClientKeyFile); err != nil {
		return nil, err
	}
	if s.ClientKeyPEM, err = os.ReadFile(s.ClientKeyFile); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), ssh.MarshalAuthorizedKey(s.ClientKey.PublicKey()), 0o600); err != nil {
		return nil, err
	}
	// Running as root, sshd insists on its privilege separation directory.
	if os.Geteuid() == 0 {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// AuthorizeKey adds a key to the server's authorized_keys (sshd rereads it on every login).
func (s *Server) AuthorizeKey(t testing.TB, pub ssh.PublicKey) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(s.Dir, "authorized_keys"), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(ssh.MarshalAuthorizedKey(pub)); err != nil {
		t.Fatal(err)
	}
}

// Log is what sshd printed so far (useful in failure messages).
func (s *Server) Log() string { return s.log.String() }

func (s *Server) run(t testing.TB) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Port, s.Addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	config := filepath.Join(s.Dir, "sshd_config")
	if err := os.WriteFile(config, []byte(s.config()), 0o600); err != nil {
		return err
	}
	known := fmt.Sprintf("[127.0.0.1]:%d %s", port, ssh.MarshalAuthorizedKey(s.HostKey))
	s.KnownHosts = filepath.Join(s.Dir, "known_hosts")
	if err := os.WriteFile(s.KnownHosts, []byte(known), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(SSHDPath, "-D", "-e", "-f", config)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := waitForBanner(s.Addr, exited, 10*time.Second); err != nil {
		_ = cmd.Process.Kill()
		return err
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("sshd log:\n%s", s.log.String())
		}
	})
	return nil
}

func (s *Server) config() string {
	lines := []string{
		"Port " + strconv.Itoa(s.Port),
		"ListenAddress 127.0.0.1",
		"HostKey " + filepath.Join(s.Dir, "ssh_host_ed25519_key"),
		"AuthorizedKeysFile " + filepath.Join(s.Dir, "authorized_keys"),
		"StrictModes no",
		"Subsystem sftp " + SFTPServerPath,
		"PidFile none",
		"AllowTcpForwarding yes",
		"UsePAM no",
		"PermitRootLogin prohibit-password",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"MaxStartups 100",
		"MaxSessions 100",
		"LogLevel DEBUG1", // logs forwarded connections, which bastion tests check
	}
	return strings.Join(lines, "\n") + "\n"
}

// waitForBanner waits until sshd accepts connections and greets with "SSH-".
func waitForBanner(addr string, exited <-chan error, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("sshd exited: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("sshd did not answer on %s within %s", addr, limit)
		case <-time.After(20 * time.Millisecond):
		}
		if bannerOK(addr) {
			return nil
		}
	}
}

func bannerOK(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 4)
	_, err = conn.Read(buf)
	return err == nil && string(buf) == "SSH-"
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// writeKey makes an ed25519 key and writes it in OpenSSH format with the mode sshd and ssh require.
func writeKey(path string) (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "sshdtest")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(priv)
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
