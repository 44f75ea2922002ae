// Package sshkey reads SSH private keys the way wmcon needs them: it parses every format WMCO accepts,
// refuses the ones too weak to use, describes a key without exposing it, and computes the forms WMCO
// stores (authorized_keys line, pub-key-hash).
//
// Policy: DSA keys are refused everywhere (OpenSSH itself dropped them). RSA keys shorter than 2048 bits
// are refused for login by Parse (with *WeakKeyError) but still described by Describe, with a warning, so
// the console can show what an existing cloud-private-key secret holds and tell the user to replace it.
package sshkey

import (
	"bytes"
	"crypto/dsa" //nolint:staticcheck // recognised only to refuse it
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// MinRSABits is the smallest RSA key wmcon logs in with.
const MinRSABits = 2048

var (
	// ErrPassphraseNeeded means the key is encrypted and no passphrase was given.
	ErrPassphraseNeeded = errors.New("the private key is protected by a passphrase: provide it (prompt, --ssh-passphrase-env or WMCON_SSH_PASSPHRASE)")
	// ErrWrongPassphrase means the passphrase did not decrypt the key.
	ErrWrongPassphrase = errors.New("the passphrase does not decrypt the private key: check it and try again")
	// ErrDSA means the key is a DSA key, which wmcon refuses.
	ErrDSA = errors.New("DSA keys are not supported (OpenSSH removed them): generate a new key with ssh-keygen -t ed25519")
	// ErrNoKey means the bytes hold no PEM private key at all.
	ErrNoKey = errors.New("no PEM private key found: expected a file starting with -----BEGIN ... PRIVATE KEY-----")
	// ErrCorruptPEM means the bytes start a PEM block whose body cannot be decoded.
	ErrCorruptPEM = errors.New("the private key has a -----BEGIN line but its body is damaged (not valid base64, " +
		"or the -----END line is missing or does not match): copy the key again from where it was created")
)

// decodePEM returns the first PEM block, telling a damaged block from bytes that hold no PEM at all.
func decodePEM(pemBytes []byte) (*pem.Block, error) {
	block, _ := pem.Decode(pemBytes)
	switch {
	case block != nil:
		return block, nil
	case bytes.Contains(pemBytes, []byte("-----BEGIN")):
		return nil, ErrCorruptPEM
	default:
		return nil, ErrNoKey
	}
}

// WeakKeyError refuses an RSA key that is too short.
type WeakKeyError struct{ Bits int }

func (e *WeakKeyError) Error() string {
	return fmt.Sprintf("RSA key of %d bits is too weak (at least %d required): generate a new key with ssh-keygen -t ed25519", e.Bits, MinRSABits)
}

// Parse returns a signer for a PEM private key (PKCS#1, PKCS#8, SEC1, OpenSSH format; RSA, ECDSA, ed25519).
// passphrase may be nil for an unencrypted key; an encrypted key without one gives ErrPassphraseNeeded.
func Parse(pemBytes, passphrase []byte) (ssh.Signer, error) {
	raw, err := parseRaw(pemBytes, passphrase)
	if err != nil {
		return nil, err
	}
	if err := checkStrength(raw); err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(raw)
	if err != nil {
		return nil, fmt.Errorf("use private key: %w", err)
	}
	return signer, nil
}

// IsEncrypted reports whether the key needs a passphrase.
func IsEncrypted(pemBytes []byte) bool {
	_, err := ssh.ParseRawPrivateKey(pemBytes)
	var missing *ssh.PassphraseMissingError
	return errors.As(err, &missing)
}

func parseRaw(pemBytes, passphrase []byte) (any, error) {
	block, err := decodePEM(pemBytes)
	if err != nil {
		return nil, err
	}
	if isDSA(block) {
		return nil, ErrDSA
	}
	raw, err := ssh.ParseRawPrivateKey(pemBytes)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		if len(passphrase) == 0 {
			return nil, ErrPassphraseNeeded
		}
		raw, err = ssh.ParseRawPrivateKeyWithPassphrase(pemBytes, passphrase)
		if errors.Is(err, x509.IncorrectPasswordError) {
			return nil, ErrWrongPassphrase
		}
	}
	if err != nil {
		return nil, fmt.Errorf("parse private key: %w", err)
	}
	if _, ok := raw.(*dsa.PrivateKey); ok {
		return nil, ErrDSA
	}
	return raw, nil
}

// isDSA recognises DSA in PEM ("DSA PRIVATE KEY") and in the OpenSSH envelope, whose public half is
// readable even when the private half is encrypted.
func isDSA(block *pem.Block) bool {
	if block.Type == "DSA PRIVATE KEY" {
		return true
	}
	pub, ok := openSSHPublicKey(block)
	return ok && pub.Type() == ssh.KeyAlgoDSA
}

// openSSHPublicKey reads the public key stored in clear in an "openssh-key-v1" envelope.
func openSSHPublicKey(block *pem.Block) (ssh.PublicKey, bool) {
	const magic = "openssh-key-v1\x00"
	if block.Type != "OPENSSH PRIVATE KEY" || !strings.HasPrefix(string(block.Bytes), magic) {
		return nil, false
	}
	var envelope struct {
		CipherName, KdfName, KdfOpts string
		NumKeys                      uint32
		PubKey                       []byte
		Rest                         []byte `ssh:"rest"`
	}
	if err := ssh.Unmarshal(block.Bytes[len(magic):], &envelope); err != nil || envelope.NumKeys != 1 {
		return nil, false
	}
	pub, err := ssh.ParsePublicKey(envelope.PubKey)
	if err != nil {
		// x/crypto cannot parse ssh-dss public keys any more; recognise the type by name.
		var keyType string
		if ssh.Unmarshal(envelope.PubKey, &struct {
			Type *string
			Rest []byte `ssh:"rest"`
		}{Type: &keyType}) == nil && keyType == ssh.KeyAlgoDSA {
			return dssMarker{}, true
		}
		return nil, false
	}
	return pub, true
}

func checkStrength(raw any) error {
	if k, ok := raw.(*rsa.PrivateKey); ok && k.N.BitLen() < MinRSABits {
		return &WeakKeyError{Bits: k.N.BitLen()}
	}
	return nil
}

// dssMarker stands for a DSA public key that x/crypto no longer parses; only its type is used.
type dssMarker struct{ ssh.PublicKey }

func (dssMarker) Type() string { return ssh.KeyAlgoDSA }

// AuthorizedKey is the authorized_keys line (with its trailing newline) WMCO writes to
// administrators_authorized_keys through windows-user-data.
func AuthorizedKey(pub ssh.PublicKey) string {
	return string(ssh.MarshalAuthorizedKey(pub))
}

// PubKeyHash is WMCO's pub-key-hash annotation: lowercase hex SHA-256 of the authorized key line
// without its trailing newline.
func PubKeyHash(pub ssh.PublicKey) string {
	line := strings.TrimSuffix(AuthorizedKey(pub), "\n")
	sum := sha256.Sum256([]byte(line))
	return hex.EncodeToString(sum[:])
}

// keyBits is the size of a key the way ssh-keygen -l reports it.
func keyBits(pub any) int {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return k.N.BitLen()
	case *ecdsa.PublicKey:
		return k.Curve.Params().BitSize
	case ed25519.PublicKey:
		return 256
	case *dsa.PublicKey:
		return k.P.BitLen()
	}
	return 0
}
