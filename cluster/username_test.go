package cluster

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/openpgp"       //nolint:staticcheck // WMCO's format
	"golang.org/x/crypto/openpgp/armor" //nolint:staticcheck // idem
)

// The username annotation in WMCO's form: one line (newlines as WMCO's marker), an armored OpenPGP message
// that the cloud-private-key's bytes decrypt — as WMCO's own decryption reads it, step by step below — and
// that another key does not.
func TestUsernameAnnotationIsWMCOs(t *testing.T) {
	key := []byte("-----BEGIN OPENSSH PRIVATE KEY-----\ntest key\n-----END OPENSSH PRIVATE KEY-----\n")
	enc, err := EncryptUsername("Administrator", key)
	require.NoError(t, err)
	assert.NotContains(t, enc, "\n")
	assert.NotContains(t, enc, "Administrator")
	assert.True(t, strings.HasPrefix(enc, "-----BEGIN ENCRYPTED DATA-----<wmcoMarker>"), enc)

	// WMCO's reading: marker back to newlines, armor, a symmetric message whose passphrase is the key.
	block, err := armor.Decode(strings.NewReader(strings.ReplaceAll(enc, "<wmcoMarker>", "\n")))
	require.NoError(t, err)
	assert.Equal(t, "ENCRYPTED DATA", block.Type)
	md, err := openpgp.ReadMessage(block.Body, nil, func([]openpgp.Key, bool) ([]byte, error) { return key, nil }, nil)
	require.NoError(t, err)
	assert.True(t, md.IsSymmetricallyEncrypted)

	got, err := DecryptUsername(enc, key)
	require.NoError(t, err)
	assert.Equal(t, "Administrator", got)
	_, err = DecryptUsername(enc, []byte("another key"))
	assert.ErrorContains(t, err, "another cloud-private-key")
	_, err = EncryptUsername("x", nil)
	assert.ErrorContains(t, err, "no private key")
}
