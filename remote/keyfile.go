package remote

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"time"
)

// KeyFile is the public half of a private key kept in a file on a host, and when that file was written.
type KeyFile struct {
	PublicKey []byte    // PKIX DER
	Written   time.Time // the file's modification time, by the host's clock
}

// ErrNoPrivateKey: the file holds no private key this package can read (or is too large to be one).
var ErrNoPrivateKey = errors.New("not a private key file")

// maxKeyFile bounds what PublicKeyOf reads: a PEM private key, even with the certificate a certificate
// store keeps beside it, is a few kilobytes.
const maxKeyFile = 64 << 10

// PublicKeyOf reads the PEM private key in a file on the host over SFTP (stat, open, read; no command) and
// returns only its public half. The private key is held in this function's memory only, cleared before
// it returns, and never printed, logged or kept. ok is false when the file does not exist. A file that
// also holds certificates (a kubelet's kubelet-client-current.pem) is fine: the key block is the one read.
func (c *Client) PublicKeyOf(ctx context.Context, winPath string) (key KeyFile, ok bool, err error) {
	conn, release, err := c.acquire(ctx)
	if err != nil {
		return KeyFile{}, false, err
	}
	defer release()
	client, err := conn.sftpClient()
	if err != nil {
		return KeyFile{}, false, &ConnectionLostError{Host: c.Name(), Err: fmt.Errorf("start SFTP: %w", err)}
	}
	info, err := client.Stat(SFTPPath(winPath))
	if errors.Is(err, os.ErrNotExist) {
		return KeyFile{}, false, nil
	}
	if err != nil {
		return KeyFile{}, false, fmt.Errorf("read key %s on %s: %w", winPath, c.Name(), c.transferErr(err))
	}
	if info.IsDir() || info.Size() > maxKeyFile {
		return KeyFile{}, false, fmt.Errorf("read key %s on %s: %w (a directory, or over %d bytes)", winPath, c.Name(), ErrNoPrivateKey, maxKeyFile)
	}
	f, err := client.Open(SFTPPath(winPath))
	if errors.Is(err, os.ErrNotExist) {
		return KeyFile{}, false, nil // removed between the two requests (a kubelet that just got its certificate)
	}
	if err != nil {
		return KeyFile{}, false, fmt.Errorf("read key %s on %s: %w", winPath, c.Name(), c.transferErr(err))
	}
	defer f.Close()
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	var buf bytes.Buffer
	buf.Grow(int(info.Size()) + 512)
	defer func() { clear(buf.Bytes()[:buf.Cap()]) }()
	if _, err := io.Copy(&buf, io.LimitReader(f, maxKeyFile+1)); err != nil {
		if ctx.Err() != nil {
			return KeyFile{}, false, ctx.Err()
		}
		return KeyFile{}, false, fmt.Errorf("read key %s on %s: %w", winPath, c.Name(), c.transferErr(err))
	}
	if buf.Len() > maxKeyFile {
		return KeyFile{}, false, fmt.Errorf("read key %s on %s: %w (over %d bytes)", winPath, c.Name(), ErrNoPrivateKey, maxKeyFile)
	}
	pub, err := PublicHalf(buf.Bytes())
	if err != nil {
		return KeyFile{}, false, fmt.Errorf("read key %s on %s: %w", winPath, c.Name(), err)
	}
	return KeyFile{PublicKey: pub, Written: info.ModTime()}, true, nil
}

// PublicHalf returns the PKIX DER public key of the first PEM private key block in data (PKCS #8, SEC 1
// EC or PKCS #1 RSA), skipping certificates. The decoded private key is cleared before it returns; errors
// (ErrNoPrivateKey) never quote the data.
func PublicHalf(data []byte) ([]byte, error) {
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, fmt.Errorf("%w: no PEM private key in it", ErrNoPrivateKey)
		}
		var parse func([]byte) (any, error)
		switch block.Type {
		case "PRIVATE KEY":
			parse = x509.ParsePKCS8PrivateKey
		case "EC PRIVATE KEY":
			parse = func(b []byte) (any, error) { return x509.ParseECPrivateKey(b) }
		case "RSA PRIVATE KEY":
			parse = func(b []byte) (any, error) { return x509.ParsePKCS1PrivateKey(b) }
		default:
			continue // a certificate beside the key
		}
		priv, err := parse(block.Bytes)
		clear(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: its private key cannot be parsed", ErrNoPrivateKey)
		}
		defer forget(priv)
		signer, ok := priv.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%w: its private key is of an unknown type", ErrNoPrivateKey)
		}
		der, err := x509.MarshalPKIXPublicKey(signer.Public())
		if err != nil {
			return nil, fmt.Errorf("encode the public key: %w", err)
		}
		return der, nil
	}
}

// forget overwrites the secret numbers of a parsed private key (best effort: the crypto packages may keep
// copies of their own), so they do not linger until the garbage collector reuses the memory.
func forget(priv any) {
	zero := func(n *big.Int) {
		if n != nil {
			clear(n.Bits())
			n.SetInt64(0)
		}
	}
	switch k := priv.(type) {
	case *ecdsa.PrivateKey:
		zero(k.D)
	case *rsa.PrivateKey:
		zero(k.D)
		for _, p := range k.Primes {
			zero(p)
		}
		zero(k.Precomputed.Dp)
		zero(k.Precomputed.Dq)
		zero(k.Precomputed.Qinv)
	case ed25519.PrivateKey:
		clear(k)
	}
}
