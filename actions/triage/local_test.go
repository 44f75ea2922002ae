package triage_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/sim/windows"
)

// TestTriageLocalSSHProblemsAreNotCalledUnreachable triages a running host with SSH settings that fail on
// this machine: the report must name the local problem, not send the user to the cloud console.
func TestTriageLocalSSHProblemsAreNotCalledUnreachable(t *testing.T) {
	t.Parallel()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	encrypted, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("right"))
	require.NoError(t, err)
	dir := t.TempDir()
	cases := []struct {
		name string
		ip   string
		cfg  remote.Config
		want string
	}{
		{"wrong passphrase", "127.0.0.61", remote.Config{
			Auth: remote.Auth{KeyPEM: pem.EncodeToMemory(encrypted), KeyPEMName: "cloud-private-key",
				Passphrase: func(string) ([]byte, error) { return []byte("wrong"), nil }},
			HostKeys: remote.NewKnownHostsStore(filepath.Join(dir, "known_hosts")),
		}, "the passphrase does not decrypt the private key"},
		{"unreadable known-hosts", "127.0.0.62", remote.Config{
			Auth:     remote.Auth{KeyPEM: pem.EncodeToMemory(mustMarshal(t, priv)), KeyPEMName: "cloud-private-key"},
			HostKeys: remote.NewKnownHostsStore(dir), // a directory, not a file
		}, "is not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			te := newTriageEnv(t)
			node := "win-tr-local-" + strings.ReplaceAll(c.name, " ", "-")
			te.windowsNode(node, c.ip, nil)
			sim := te.h.Add(node, c.ip, windows.Options{})
			c.cfg.BastionHostKeys = remote.NewKnownHostsStore(filepath.Join(t.TempDir(), "bastion_known_hosts"))
			c.cfg.DialTimeout, c.cfg.KeepaliveInterval = 2*time.Second, -1
			pool, err := remote.NewPool(c.cfg)
			require.NoError(t, err)
			t.Cleanup(func() { pool.Close() })
			te.h.Resolver.Pool = pool

			r := te.triage(node)
			ssh := requireCheck(t, r, "host-ssh", diagnosis.CheckFail)
			assert.Contains(t, ssh.Detail, c.want)
			assert.Contains(t, ssh.Detail, "problem on this machine")
			assert.NotContains(t, ssh.Detail, "cannot reach the host")
			assert.NotContains(t, ssh.Fix, "cloud console")
			kubelet := requireCheck(t, r, "service:kubelet", diagnosis.CheckUnknown)
			assert.True(t, strings.HasPrefix(kubelet.Detail, "unknown: the host was not contacted ("), kubelet.Detail)
			assert.Empty(t, sim.Commands(), "nothing reached the host")
		})
	}
}

func mustMarshal(t *testing.T, priv ed25519.PrivateKey) *pem.Block {
	t.Helper()
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	return block
}
