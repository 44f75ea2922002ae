package remote

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/wmcon/wmcon/remote/sshkey"
	"github.com/wmcon/wmcon/sim/windows"
)

func TestRefusedAuthAndWrongKeyAndUnknownUser(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	ctx := testCtx(t)

	wrong := newTestPool(t, newTestKey(t), nil)
	_, err := clientFor(t, wrong, h).Hostname(ctx)
	var authErr *AuthError
	require.ErrorAs(t, err, &authErr)
	assert.Equal(t, "Administrator", authErr.User)
	assert.Contains(t, err.Error(), "refused key login for user Administrator")

	p := newTestPool(t, key, nil)
	stranger, err := p.Client(Target{Addr: h.Addr(), User: "mallory"})
	require.NoError(t, err)
	_, err = stranger.Hostname(ctx)
	require.ErrorAs(t, err, &authErr)
	assert.Equal(t, "mallory", authErr.User)

	good := clientFor(t, p, h)
	h.SetRefuseAuth(true)
	_, err = good.Hostname(ctx)
	require.ErrorAs(t, err, &authErr)
	h.SetRefuseAuth(false)
	_, err = good.Hostname(ctx)
	require.NoError(t, err, "a refused dial is not cached")
}

func TestBadKeysAreRefusedBeforeDialling(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	ctx := testCtx(t)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("open sesame"))
	require.NoError(t, err)
	encrypted := pem.EncodeToMemory(block)
	h2 := startSim(t, key, windows.Options{AuthorizedKeys: []ssh.PublicKey{mustSigner(t, priv).PublicKey()}})

	weakRSA, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	weakPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(weakRSA)})
	cases := map[string]struct {
		auth Auth
		want error
	}{
		"rsa 1024":         {Auth{KeyPEM: weakPEM}, &sshkey.WeakKeyError{}},
		"not a key":        {Auth{KeyPEM: []byte("ssh-ed25519 AAAA... public, not private")}, sshkey.ErrNoKey},
		"no passphrase":    {Auth{KeyPEM: encrypted}, sshkey.ErrPassphraseNeeded},
		"wrong passphrase": {Auth{KeyPEM: encrypted, Passphrase: fixedPassphrase("nope")}, sshkey.ErrWrongPassphrase},
		"env unset":        {Auth{KeyPEM: encrypted, Passphrase: PassphraseFromEnv("WMCON_TEST_UNSET_PASSPHRASE")}, sshkey.ErrPassphraseNeeded},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := newTestPool(t, key, func(c *Config) { c.Auth = tc.auth })
			_, err := clientFor(t, p, h2).Hostname(ctx)
			if weak, ok := tc.want.(*sshkey.WeakKeyError); ok {
				require.ErrorAs(t, err, &weak)
				assert.Equal(t, 1024, weak.Bits)
				return
			}
			assert.ErrorIs(t, err, tc.want)
		})
	}
	assert.Empty(t, h2.Commands())

	asked := 0
	p := newTestPool(t, key, func(c *Config) {
		c.Auth = Auth{KeyPEM: encrypted, KeyPEMName: "cloud-private-key", Passphrase: func(name string) ([]byte, error) {
			asked++
			assert.Equal(t, "cloud-private-key", name)
			return []byte("open sesame"), nil
		}}
	})
	c := clientFor(t, p, h2)
	for i := 0; i < 2; i++ {
		_, err := c.Hostname(ctx)
		require.NoError(t, err)
		c.Close()
	}
	assert.Equal(t, 1, asked, "the passphrase is asked once")

	t.Setenv("WMCON_TEST_PASSPHRASE", "open sesame")
	pEnv := newTestPool(t, key, func(c *Config) {
		c.Auth = Auth{KeyPEM: encrypted, Passphrase: PassphraseFromEnv("WMCON_TEST_PASSPHRASE")}
	})
	_, err = clientFor(t, pEnv, h2).Hostname(ctx)
	require.NoError(t, err)

	noCreds := newTestPool(t, key, func(c *Config) { c.Auth = Auth{} })
	_, err = clientFor(t, noCreds, h).Hostname(ctx)
	assert.ErrorContains(t, err, "no SSH credentials")
}

func TestKeyFileAndAgentAuth(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	ctx := testCtx(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "id_ed25519")
	require.NoError(t, os.WriteFile(keyFile, key.pem, 0o600))
	p := newTestPool(t, key, func(c *Config) { c.Auth = Auth{KeyFiles: []string{keyFile}} })
	_, err := clientFor(t, p, h).Hostname(ctx)
	require.NoError(t, err)

	sock := startAgent(t, dir, key)
	p = newTestPool(t, key, func(c *Config) { c.Auth = Auth{Agent: true, AgentSocket: sock} })
	_, err = clientFor(t, p, h).Hostname(ctx)
	require.NoError(t, err)

	t.Setenv("SSH_AUTH_SOCK", "")
	p = newTestPool(t, key, func(c *Config) { c.Auth = Auth{Agent: true, AgentRequired: true} })
	_, err = clientFor(t, p, h).Hostname(ctx)
	assert.ErrorContains(t, err, "SSH_AUTH_SOCK", "an agent asked for explicitly must be there")
}

// TestAbsentAgentIsSkipped: cron, CI and systemd runs have no SSH_AUTH_SOCK; offering the agent by default
// must not stop a key file from working, and without any key the error says both ways to give one.
func TestAbsentAgentIsSkipped(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	ctx := testCtx(t)
	keyFile := filepath.Join(t.TempDir(), "id_ed25519")
	require.NoError(t, os.WriteFile(keyFile, key.pem, 0o600))
	t.Setenv("SSH_AUTH_SOCK", "")

	p := newTestPool(t, key, func(c *Config) { c.Auth = Auth{KeyFiles: []string{keyFile}, Agent: true} })
	_, err := clientFor(t, p, h).Hostname(ctx)
	require.NoError(t, err, "the default agent offer is skipped when there is no agent")

	p = newTestPool(t, key, func(c *Config) { c.Auth = Auth{Agent: true} })
	_, err = clientFor(t, p, h).Hostname(ctx)
	assert.ErrorContains(t, err, "no SSH credentials")
	assert.ErrorContains(t, err, "SSH_AUTH_SOCK")
}

// startAgent serves an in-memory ssh-agent holding key on a unix socket in dir.
func startAgent(t *testing.T, dir string, key testKey) string {
	t.Helper()
	raw, err := ssh.ParseRawPrivateKey(key.pem)
	require.NoError(t, err)
	keyring := agent.NewKeyring()
	require.NoError(t, keyring.Add(agent.AddedKey{PrivateKey: raw}))
	sock := filepath.Join(dir, "agent.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer conn.Close(); _ = agent.ServeAgent(keyring, conn) }()
		}
	}()
	return sock
}

func mustSigner(t testing.TB, priv any) ssh.Signer {
	t.Helper()
	s, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	return s
}

func fixedPassphrase(p string) PassphraseFunc {
	return func(string) ([]byte, error) { return []byte(p), nil }
}

func TestUnreachableHostFailsWithinTheDialTimeout(t *testing.T) {
	ctx := testCtx(t)
	key := newTestKey(t)
	// A closed port: refused at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	l.Close()
	p := newTestPool(t, key, func(c *Config) { c.DialTimeout = 300 * time.Millisecond })
	c, _ := p.Client(Target{Node: "ghost", Addr: closed})
	_, err = c.Hostname(ctx)
	var unreachable *UnreachableError
	require.ErrorAs(t, err, &unreachable)
	assert.Equal(t, closed, unreachable.Host)
	assert.Contains(t, err.Error(), "port 22")

	// A host that accepts TCP but never speaks SSH: the dial timeout bounds the handshake.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { conn.Close() })
		}
	}()
	c, _ = p.Client(Target{Node: "blackhole", Addr: silent.Addr().String()})
	_, err = c.Hostname(ctx)
	require.ErrorAs(t, err, &unreachable)
	assert.Contains(t, err.Error(), "within 300ms")
}

func TestDefaultUserPerPlatformAndOverrides(t *testing.T) {
	p := newTestPool(t, newTestKey(t), nil)
	r, err := p.routeTo(Target{Addr: "127.0.0.5"})
	require.NoError(t, err)
	assert.Equal(t, "Administrator", r.user)
	assert.Equal(t, "127.0.0.5:22", r.addr)
	r, _ = p.routeTo(Target{Addr: "127.0.0.5", Platform: "Azure"})
	assert.Equal(t, "capi", r.user)
	r, _ = p.routeTo(Target{Addr: "127.0.0.5:2222", Platform: "Azure", User: "byoh-admin"})
	assert.Equal(t, "byoh-admin", r.user)
	assert.Equal(t, "127.0.0.5:2222", r.addr)
}

// TestKeyAndConfigFilesThatAreNotFilesAreRefused: --ssh-key, --ssh-config and IdentityFile on /dev/zero
// are refused with the path named, instead of being read until memory runs out.
func TestKeyAndConfigFilesThatAreNotFilesAreRefused(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	ctx := testCtx(t)

	p := newTestPool(t, key, func(c *Config) { c.Auth = Auth{KeyFiles: []string{"/dev/zero"}} })
	_, err := clientFor(t, p, h).Hostname(ctx)
	assert.ErrorContains(t, err, "/dev/zero is not a regular file")

	_, err = LoadSSHConfig("/dev/zero")
	assert.ErrorContains(t, err, "/dev/zero is not a regular file")

	cfgPath := filepath.Join(t.TempDir(), "ssh_config")
	host, _, _ := net.SplitHostPort(h.Addr())
	require.NoError(t, os.WriteFile(cfgPath, []byte("Host "+host+"\n  IdentityFile /dev/zero\n"), 0o600))
	p = newTestPool(t, key, func(c *Config) { c.SSHConfigPath = cfgPath })
	_, err = clientFor(t, p, h).Hostname(ctx)
	assert.ErrorContains(t, err, "/dev/zero is not a regular file")
}

// TestReadOnlyPoolRefusesEveryHostChange: under --read-only each operation that changes a host is refused
// before anything is sent, and reads still work.
func TestReadOnlyPoolRefusesEveryHostChange(t *testing.T) {
	key := newTestKey(t)
	h := startSim(t, key, windows.Options{})
	ctx := testCtx(t)
	c := clientFor(t, newTestPool(t, key, func(c *Config) { c.ReadOnly = true }), h)
	_, err := c.Hostname(ctx)
	require.NoError(t, err, "reads work")
	before := len(h.Commands())
	var ro *ReadOnlyError
	for name, op := range map[string]func() error{
		"start":   func() error { return c.StartService(ctx, "kubelet") },
		"stop":    func() error { return c.StopService(ctx, "kubelet") },
		"delete":  func() error { return c.DeleteService(ctx, "kubelet") },
		"create":  func() error { return c.CreateService(ctx, ServiceSpec{Name: "x"}) },
		"ensure":  func() error { return c.EnsureServices(ctx, []ServiceSpec{{Name: "x"}}) },
		"reboot":  func() error { return c.Reboot(ctx, RebootOptions{}) },
		"route":   func() error { _, err := c.EnsureMetadataRoute(ctx); return err },
		"setenv":  func() error { return c.SetEnv(ctx, "A", "b") },
		"rmenv":   func() error { return c.RemoveEnv(ctx, "A") },
		"mkdir":   func() error { return c.MakeDir(ctx, `C:\k`) },
		"remove":  func() error { return c.Remove(ctx, `C:\k`, true) },
		"upload":  func() error { _, err := c.Upload(ctx, nil, UploadOptions{}); return err },
		"replace": func() error { return c.ReplaceDir(ctx, `C:\k`, nil, ReplaceDirOptions{}) },
		"rename":  func() error { return c.RenameComputer(ctx, "winworker-1") },
	} {
		require.ErrorAs(t, op(), &ro, name)
	}
	assert.Equal(t, before, len(h.Commands()), "nothing was sent to the host")
}
