package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/model"
)

// TestServerPasswordNeverReachesTheTerminal: a kubeconfig whose server URL carries a password
// (https://user:password@host) fails to connect; neither the error nor anything else printed shows it.
func TestServerPasswordNeverReachesTheTerminal(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	// Port 1 on loopback: nothing listens there, the connection is refused at once.
	data := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://admin:hunter2-secret@127.0.0.1:1
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
users:
- name: u
  user: {token: abc}
`
	if err := os.WriteFile(kc, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runWmcon(t, "--kubeconfig", kc, "--known-hosts", t.TempDir()+"/kh", "cordon", "n1")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "127.0.0.1:1", "the server is still named")
	assert.NotContains(t, out+errOut, "hunter2-secret")

	assert.Equal(t, "https://REDACTED@127.0.0.1:1", model.RedactURL("https://admin:hunter2-secret@127.0.0.1:1"))
	assert.Equal(t, "https://127.0.0.1:6443", model.RedactURL("https://127.0.0.1:6443"), "nothing to redact")
}

// TestControlCharactersInArgumentsAreRefusedQuoted: an escape sequence typed as a node name is refused as a
// usage error and shown quoted, never sent raw to the terminal.
func TestControlCharactersInArgumentsAreRefusedQuoted(t *testing.T) {
	for _, args := range [][]string{
		{"--demo", "cordon", "node\x1b[2J\x1b]0;pwned\x07"},
		{"--demo", "logs", "a\rb"},
		{"--demo", "restart-service", "n", "kube\x00let"},
	} {
		code, out, errOut := runWmcon(t, args...)
		assert.Equal(t, ExitUsage, code, "%q: %s", args, errOut)
		assert.Contains(t, errOut, "contains control characters")
		assert.NotContains(t, out+errOut, "\x1b", "no raw escape reaches the terminal")
		assert.NotContains(t, out+errOut, "\r")
		assert.NotContains(t, out+errOut, "\x00")
	}
}

// TestTailBeyondPowerShellsInt32IsRefused: Get-Content -Tail takes an Int32; a larger --tail is refused
// before anything is sent to a host.
func TestTailBeyondPowerShellsInt32IsRefused(t *testing.T) {
	code, _, errOut := runWmcon(t, "--demo", "logs", "n1", "--tail", "2147483648")
	assert.Equal(t, ExitUsage, code, errOut)
	assert.Contains(t, errOut, "--tail 2147483648: give a number of lines from 0 to 2147483647")
	code, _, errOut = runWmcon(t, "--demo", "logs", "n1", "--tail", "99999999999999")
	assert.Equal(t, ExitUsage, code, errOut)
}
