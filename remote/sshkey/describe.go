package sshkey

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Info describes a key without exposing it: nothing here is secret.
type Info struct {
	Type          string   // "RSA", "ECDSA", "ED25519", "DSA"
	Algorithm     string   // the SSH name, e.g. "ssh-ed25519"
	Bits          int      // as ssh-keygen -l reports it
	Fingerprint   string   // "SHA256:..." as ssh-keygen -l prints it
	Encrypted     bool     // needs a passphrase (WMCO cannot use such a key)
	Usable        bool     // wmcon logs in with it (given the passphrase when Encrypted)
	Warnings      []string // sentences for the user
	AuthorizedKey string   // authorized_keys line with trailing newline ("" when unknown)
	PubKeyHash    string   // WMCO pub-key-hash ("" when unknown)
}

// Describe reads a PEM private key and says what it is. It needs no passphrase for unencrypted keys and
// for encrypted keys in OpenSSH format (whose public half is stored in clear); an encrypted PKCS#1/PKCS#8
// key gives ErrPassphraseNeeded. DSA and short RSA keys are described, with Usable false and a warning.
func Describe(pemBytes []byte) (Info, error) {
	block, err := decodePEM(pemBytes)
	if err != nil {
		return Info{}, err
	}
	if isDSA(block) {
		return Info{Type: "DSA", Algorithm: ssh.KeyAlgoDSA, Encrypted: IsEncrypted(pemBytes),
			Warnings: []string{ErrDSA.Error()}}, nil
	}
	if IsEncrypted(pemBytes) {
		pub, ok := openSSHPublicKey(block)
		if !ok {
			return Info{Encrypted: true}, ErrPassphraseNeeded
		}
		info := DescribePublic(pub)
		info.Encrypted = true
		info.Warnings = append(info.Warnings, "the key is protected by a passphrase: WMCO's cloud-private-key must be unencrypted")
		return info, nil
	}
	raw, err := parseRaw(pemBytes, nil)
	if err != nil {
		return Info{}, err
	}
	signer, err := ssh.NewSignerFromKey(raw)
	if err != nil {
		return Info{}, fmt.Errorf("describe private key: %w", err)
	}
	return DescribePublic(signer.PublicKey()), nil
}

// DescribePublic describes a public key (for example a pinned host key or the key in windows-user-data).
func DescribePublic(pub ssh.PublicKey) Info {
	info := Info{
		Algorithm:     pub.Type(),
		Type:          typeName(pub.Type()),
		Fingerprint:   ssh.FingerprintSHA256(pub),
		AuthorizedKey: AuthorizedKey(pub),
		PubKeyHash:    PubKeyHash(pub),
		Usable:        true,
	}
	if cpk, ok := pub.(ssh.CryptoPublicKey); ok {
		info.Bits = keyBits(cpk.CryptoPublicKey())
	}
	if info.Type == "RSA" && info.Bits < MinRSABits {
		info.Usable = false
		info.Warnings = append(info.Warnings, (&WeakKeyError{Bits: info.Bits}).Error())
	}
	return info
}

func typeName(algo string) string {
	switch {
	case algo == ssh.KeyAlgoRSA:
		return "RSA"
	case algo == ssh.KeyAlgoED25519:
		return "ED25519"
	case strings.HasPrefix(algo, "ecdsa-"):
		return "ECDSA"
	case algo == ssh.KeyAlgoDSA:
		return "DSA"
	}
	return strings.ToUpper(algo)
}

// ErrNoKeyInUserData means a windows-user-data script holds no public key.
var ErrNoKeyInUserData = errors.New("windows-user-data holds no SSH public key: regenerate it from the cloud-private-key secret")

var authorizedKeyInScript = regexp.MustCompile(`(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(?:256|384|521)) ([A-Za-z0-9+/]+={0,3})`)

// FindInUserData returns the public key a windows-user-data script writes to administrators_authorized_keys.
// The script quotes the key inside PowerShell, so the key is searched for, not read from a fixed line.
// Two different keys in one script is an error: WMCO would authorise only one of them.
func FindInUserData(script string) (ssh.PublicKey, error) {
	var found ssh.PublicKey
	for _, m := range authorizedKeyInScript.FindAllStringSubmatch(script, -1) {
		pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(m[1] + " " + m[2]))
		if err != nil {
			continue
		}
		if found != nil && AuthorizedKey(found) != AuthorizedKey(pub) {
			return nil, fmt.Errorf("windows-user-data holds two different SSH keys (%s and %s): regenerate it from the cloud-private-key secret",
				ssh.FingerprintSHA256(found), ssh.FingerprintSHA256(pub))
		}
		found = pub
	}
	if found == nil {
		return nil, ErrNoKeyInUserData
	}
	return found, nil
}
