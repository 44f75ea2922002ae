package cli

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

func writeKey(t *testing.T, passphrase string) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "test")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "test", []byte(passphrase))
	}
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "id_ed25519")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(block), 0o600))
	return path
}

func TestConsolePromptsOnceForEncryptedKeys(t *testing.T) {
	encrypted, plain := writeKey(t, "s3cret"), writeKey(t, "")
	var out bytes.Buffer
	asked := 0
	p := &passphrasePrompt{envName: "WMCON_TEST_NO_SUCH_ENV", out: &out, given: map[string][]byte{},
		readPassword: func() ([]byte, error) { asked++; return []byte("s3cret"), nil }}
	require.NoError(t, p.askFor([]string{encrypted, plain}))
	assert.Equal(t, 1, asked, "only the encrypted key is asked for")
	assert.Contains(t, out.String(), "Passphrase for "+encrypted)
	assert.NotContains(t, out.String(), "s3cret", "the passphrase is never echoed")
	pass, err := p.Passphrase(encrypted)
	require.NoError(t, err)
	assert.Equal(t, []byte("s3cret"), pass)

	wrong := &passphrasePrompt{envName: "WMCON_TEST_NO_SUCH_ENV", out: &out, given: map[string][]byte{},
		readPassword: func() ([]byte, error) { return []byte("nope"), nil }}
	err = wrong.askFor([]string{encrypted})
	require.Error(t, err)
	assert.Contains(t, err.Error(), encrypted)
	assert.Contains(t, err.Error(), "passphrase does not decrypt")
}

func TestNoPromptWithoutATerminalOrWithTheEnvironmentVariable(t *testing.T) {
	encrypted := writeKey(t, "s3cret")
	p := &passphrasePrompt{envName: "WMCON_TEST_NO_SUCH_ENV", out: &bytes.Buffer{}, given: map[string][]byte{}}
	require.NoError(t, p.askFor([]string{encrypted}), "no terminal: nothing is asked")
	_, err := p.Passphrase(encrypted)
	assert.ErrorContains(t, err, "protected by a passphrase", "and the pool gets the clear error instead")

	t.Setenv("WMCON_TEST_PASS", "s3cret")
	p = &passphrasePrompt{envName: "WMCON_TEST_PASS", out: &bytes.Buffer{}, given: map[string][]byte{},
		readPassword: func() ([]byte, error) { t.Fatal("must not prompt when the variable is set"); return nil, nil }}
	require.NoError(t, p.askFor([]string{encrypted}))
	pass, err := p.Passphrase(encrypted)
	require.NoError(t, err)
	assert.Equal(t, []byte("s3cret"), pass)
}
