package sshkey

import (
	"crypto/dsa" //nolint:staticcheck // to build a key that must be refused
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

func mustRSA(t *testing.T, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	require.NoError(t, err)
	return k
}

func pemOf(t *testing.T, typ string, der []byte) []byte {
	t.Helper()
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func openSSHPEM(t *testing.T, key any, passphrase string) []byte {
	t.Helper()
	var block *pem.Block
	var err error
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(key, "test")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(key, "test", []byte(passphrase))
	}
	require.NoError(t, err)
	return pem.EncodeToMemory(block)
}

func TestParseAcceptsEveryFormatWMCOAccepts(t *testing.T) {
	rsaKey := mustRSA(t, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(rsaKey)
	require.NoError(t, err)
	ecDER, err := x509.MarshalECPrivateKey(ecKey)
	require.NoError(t, err)

	cases := []struct {
		name     string
		pem      []byte
		wantType string
		wantBits int
	}{
		{"rsa pkcs1", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), "RSA", 2048},
		{"rsa pkcs8", pemOf(t, "PRIVATE KEY", pkcs8), "RSA", 2048},
		{"rsa openssh", openSSHPEM(t, rsaKey, ""), "RSA", 2048},
		{"ed25519 openssh", openSSHPEM(t, edKey, ""), "ED25519", 256},
		{"ecdsa sec1", pemOf(t, "EC PRIVATE KEY", ecDER), "ECDSA", 256},
		{"ecdsa openssh", openSSHPEM(t, ecKey, ""), "ECDSA", 256},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			signer, err := Parse(tc.pem, nil)
			require.NoError(t, err)
			info, err := Describe(tc.pem)
			require.NoError(t, err)
			assert.Equal(t, tc.wantType, info.Type)
			assert.Equal(t, tc.wantBits, info.Bits)
			assert.True(t, info.Usable)
			assert.Empty(t, info.Warnings)
			assert.Equal(t, ssh.FingerprintSHA256(signer.PublicKey()), info.Fingerprint)
			assert.True(t, strings.HasPrefix(info.Fingerprint, "SHA256:"))
			assert.NotContains(t, info.AuthorizedKey, "PRIVATE")
		})
	}
}

func TestEncryptedKeys(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey := mustRSA(t, 2048)
	//nolint:staticcheck // legacy PEM encryption is what old keys use
	legacy, err := x509.EncryptPEMBlock(rand.Reader, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey), []byte("s3cret"), x509.PEMCipherAES256)
	require.NoError(t, err)

	for name, data := range map[string][]byte{
		"openssh": openSSHPEM(t, edKey, "s3cret"),
		"pem":     pem.EncodeToMemory(legacy),
	} {
		t.Run(name, func(t *testing.T) {
			assert.True(t, IsEncrypted(data))
			_, err := Parse(data, nil)
			assert.ErrorIs(t, err, ErrPassphraseNeeded)
			_, err = Parse(data, []byte("wrong"))
			assert.ErrorIs(t, err, ErrWrongPassphrase)
			signer, err := Parse(data, []byte("s3cret"))
			require.NoError(t, err)
			assert.NotNil(t, signer.PublicKey())
		})
	}

	// The OpenSSH envelope keeps the public key in clear: describable without the passphrase.
	info, err := Describe(openSSHPEM(t, edKey, "s3cret"))
	require.NoError(t, err)
	assert.True(t, info.Encrypted)
	assert.Equal(t, "ED25519", info.Type)
	assert.Contains(t, strings.Join(info.Warnings, " "), "passphrase")
	_, err = Describe(pem.EncodeToMemory(legacy))
	assert.ErrorIs(t, err, ErrPassphraseNeeded)
}

func TestWeakAndDSAKeysAreRefused(t *testing.T) {
	weak := pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(mustRSA(t, 1024)))
	_, err := Parse(weak, nil)
	var weakErr *WeakKeyError
	require.ErrorAs(t, err, &weakErr)
	assert.Equal(t, 1024, weakErr.Bits)
	assert.Contains(t, err.Error(), "at least 2048")
	info, err := Describe(weak)
	require.NoError(t, err)
	assert.False(t, info.Usable)
	assert.Equal(t, 1024, info.Bits)
	require.Len(t, info.Warnings, 1)

	dsaPEM := dsaKeyPEM(t)
	_, err = Parse(dsaPEM, nil)
	assert.ErrorIs(t, err, ErrDSA)
	info, err = Describe(dsaPEM)
	require.NoError(t, err)
	assert.Equal(t, "DSA", info.Type)
	assert.False(t, info.Usable)
}

func dsaKeyPEM(t *testing.T) []byte {
	t.Helper()
	var k dsa.PrivateKey
	require.NoError(t, dsa.GenerateParameters(&k.Parameters, rand.Reader, dsa.L1024N160))
	require.NoError(t, dsa.GenerateKey(&k, rand.Reader))
	der, err := asn1.Marshal(struct {
		Version       int
		P, Q, G, Y, X *big.Int
	}{0, k.P, k.Q, k.G, k.Y, k.X})
	require.NoError(t, err)
	return pemOf(t, "DSA PRIVATE KEY", der)
}

func TestGarbageIsNoKey(t *testing.T) {
	_, err := Parse([]byte("ssh-ed25519 AAAA not a private key"), nil)
	assert.ErrorIs(t, err, ErrNoKey)
	_, err = Describe(nil)
	assert.ErrorIs(t, err, ErrNoKey)
}

func TestDamagedPEMBodyIsNotCalledMissing(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	good := pem.EncodeToMemory(block)
	lines := strings.Split(string(good), "\n")
	lines[2] = "!!" + lines[2][2:] // damage the base64 of the body
	damaged := []byte(strings.Join(lines, "\n"))
	truncated := good[:len(good)/2] // no -----END line

	for name, data := range map[string][]byte{"damaged base64": damaged, "no END line": truncated} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(data, nil)
			assert.ErrorIs(t, err, ErrCorruptPEM)
			assert.NotContains(t, err.Error(), "expected a file starting with -----BEGIN")
			_, err = Describe(data)
			assert.ErrorIs(t, err, ErrCorruptPEM)
		})
	}
	_, err = Parse(good, nil)
	assert.NoError(t, err, "the undamaged key parses")
}

func TestPubKeyHashAndAuthorizedKey(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	sshPub, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	line := AuthorizedKey(sshPub)
	assert.True(t, strings.HasPrefix(line, "ssh-ed25519 AAAA"))
	assert.True(t, strings.HasSuffix(line, "\n"))
	sum := sha256.Sum256([]byte(strings.TrimSpace(line)))
	assert.Equal(t, hex.EncodeToString(sum[:]), PubKeyHash(sshPub))
	assert.Equal(t, strings.ToLower(PubKeyHash(sshPub)), PubKeyHash(sshPub))
}

// The fingerprint must be what ssh-keygen -l prints, since users compare the two.
func TestFingerprintMatchesSSHKeygen(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen not installed")
	}
	path := filepath.Join(t.TempDir(), "id")
	out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-f", path).CombinedOutput()
	require.NoError(t, err, string(out))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	info, err := Describe(data)
	require.NoError(t, err)
	out, err = exec.Command(keygen, "-l", "-E", "sha256", "-f", path).Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), info.Fingerprint)
	assert.True(t, strings.HasPrefix(string(out), "256 "))
}

func TestFindInUserData(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	sshPub, _ := ssh.NewPublicKey(pub)
	line := strings.TrimSpace(AuthorizedKey(sshPub))
	script := "<powershell>\r\n$authorizedKeyConf = \"$env:ProgramData\\ssh\\administrators_authorized_keys\"\r\n" +
		"$authorizedKey = \"" + line + "\"\r\nSet-Content -Path $authorizedKeyConf -Value $authorizedKey\r\n" +
		"</powershell>\n<persist>true</persist>\n"
	found, err := FindInUserData(script)
	require.NoError(t, err)
	assert.Equal(t, PubKeyHash(sshPub), PubKeyHash(found))

	_, err = FindInUserData("<powershell>Write-Host hi</powershell>")
	assert.ErrorIs(t, err, ErrNoKeyInUserData)

	other, _, _ := ed25519.GenerateKey(rand.Reader)
	otherPub, _ := ssh.NewPublicKey(other)
	_, err = FindInUserData(script + "\n" + AuthorizedKey(otherPub))
	assert.ErrorContains(t, err, "two different SSH keys")
}
