package remote

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
)

// PublicKeyOf reads a private key file over SFTP and hands back only its public half and the file's
// time: from a bare key (the kubelet's kubelet-client.key.tmp, SEC 1 EC) and from a certificate store's
// pair (certificate first, then key); a missing file is "absent", junk or an oversized file is not a key,
// and no command carries the key.
func TestPublicKeyOfReadsOnlyThePublicHalf(t *testing.T) {
	clock := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	h, c := simClient(t, windows.Options{Clock: func() time.Time { return clock }}, nil)
	ctx := testCtx(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecDER, err := x509.MarshalECPrivateKey(ec)
	require.NoError(t, err)
	ecPub, err := x509.MarshalPKIXPublicKey(ec.Public())
	require.NoError(t, err)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER})
	require.NoError(t, h.WriteFile(`C:\var\lib\kubelet\pki\kubelet-client.key.tmp`, keyPEM))

	before := len(h.Commands())
	key, ok, err := c.PublicKeyOf(ctx, `C:\var\lib\kubelet\pki\kubelet-client.key.tmp`)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, ecPub, key.PublicKey)
	assert.True(t, key.Written.Equal(clock), "the file's time, by the host's clock: %s", key.Written)
	assert.Len(t, h.Commands(), before, "SFTP only: no command line carries the key")

	// A certificate store's pair: the certificate block is skipped, the key's public half returned.
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	certDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "system:node:win-a"},
		NotBefore: clock, NotAfter: clock.Add(time.Hour)}, &x509.Certificate{SerialNumber: big.NewInt(1)}, rsaKey.Public(), rsaKey)
	require.NoError(t, err)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(rsaKey)
	require.NoError(t, err)
	pair := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})...)
	require.NoError(t, h.WriteFile(`C:\var\lib\kubelet\pki\kubelet-client-current.pem`, pair))
	key, ok, err = c.PublicKeyOf(ctx, `C:\var\lib\kubelet\pki\kubelet-client-current.pem`)
	require.NoError(t, err)
	require.True(t, ok)
	rsaPub, err := x509.MarshalPKIXPublicKey(rsaKey.Public())
	require.NoError(t, err)
	assert.Equal(t, rsaPub, key.PublicKey)

	_, ok, err = c.PublicKeyOf(ctx, `C:\var\lib\kubelet\pki\missing.key`)
	require.NoError(t, err)
	assert.False(t, ok, "a missing file is absent, not an error")

	// Junk, a certificate without its key, a damaged key and a huge file are not keys; the error
	// never quotes the file.
	damaged := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER[:20]})
	for name, data := range map[string][]byte{
		"junk.pem": []byte("not a key at all"), "cert.pem": pair[:strings.Index(string(pair), "-----BEGIN PRIVATE KEY")],
		"damaged.pem": damaged, "huge.pem": append(keyPEM, make([]byte, maxKeyFile)...),
	} {
		require.NoError(t, h.WriteFile(`C:\keys\`+name, data))
		_, ok, err := c.PublicKeyOf(ctx, `C:\keys\`+name)
		assert.False(t, ok, name)
		assert.True(t, errors.Is(err, ErrNoPrivateKey), "%s: %v", name, err)
		assert.NotContains(t, err.Error(), "BEGIN", name)
	}
}
