package cluster

import (
	"bytes"
	"crypto/dsa" //nolint:staticcheck // made only to be refused
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/remote/sshkey"
)

func testKey(t *testing.T) ([]byte, ssh.PublicKey) {
	t.Helper()
	pemBytes, err := os.ReadFile("../testdata/keys/userdata-test-key")
	require.NoError(t, err)
	_, pub, err := ValidatePrivateKey(pemBytes)
	require.NoError(t, err)
	return pemBytes, pub
}

func TestValidatePrivateKeyRefusesBadKeys(t *testing.T) {
	good, pub := testKey(t)
	rsa1024, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	encrypted, err := ssh.MarshalPrivateKeyWithPassphrase(rsa1024, "", []byte("secret"))
	require.NoError(t, err)
	cases := []struct {
		name string
		key  []byte
		want string
	}{
		{"public key line", ssh.MarshalAuthorizedKey(pub), "this is a public key"},
		{"PEM public key", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2}}), "this is a public key"},
		{"passphrase", pem.EncodeToMemory(encrypted), "protected by a passphrase"},
		{"weak RSA", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsa1024)}), "RSA key of 1024 bits is too weak"},
		{"DSA", dsaPEM(t), "DSA keys are not supported"},
		{"garbage", []byte("hello"), "no PEM private key found"},
		{"truncated", good[:len(good)/2], "its body is damaged"},
		{"text before", append([]byte("my notes: the key below\n"), good...), "text before the key's -----BEGIN line"},
		{"100 KB after", append(append([]byte{}, good...), bytes.Repeat([]byte("junk "), 20<<10)...), "text after the key's -----END line"},
		{"two keys", append(append([]byte{}, good...), good...), "text after the key's -----END line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ValidatePrivateKey(c.key)
			require.ErrorContains(t, err, c.want)
		})
	}
	info, _, err := ValidatePrivateKey(good)
	require.NoError(t, err)
	require.Equal(t, "ED25519", info.Type)
}

func dsaPEM(t *testing.T) []byte {
	var k dsa.PrivateKey
	require.NoError(t, dsa.GenerateParameters(&k.Parameters, rand.Reader, dsa.L1024N160))
	require.NoError(t, dsa.GenerateKey(&k, rand.Reader))
	der, err := asn1.Marshal(struct {
		Version       int
		P, Q, G, Y, X *big.Int
	}{0, k.P, k.Q, k.G, k.Y, k.X})
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "DSA PRIVATE KEY", Bytes: der})
}

func TestGenerateKeyAndWriteKeyPair(t *testing.T) {
	pemBytes, pub, err := GenerateKey("ed25519")
	require.NoError(t, err)
	_, got, err := ValidatePrivateKey(pemBytes)
	require.NoError(t, err)
	require.Equal(t, sshkey.AuthorizedKey(pub), sshkey.AuthorizedKey(got))

	path := filepath.Join(t.TempDir(), "keys", "wmco")
	require.NoError(t, WriteKeyPair(path, pemBytes, pub))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	pubFile, err := os.ReadFile(path + ".pub")
	require.NoError(t, err)
	require.Equal(t, sshkey.AuthorizedKey(pub), string(pubFile))
	// Never overwritten.
	require.ErrorContains(t, WriteKeyPair(path, []byte("x"), pub), "already exists")
	again, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, pemBytes, again)

	_, _, err = GenerateKey("dsa")
	require.ErrorContains(t, err, `use ed25519 or rsa`)
}
