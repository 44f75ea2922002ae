package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/openpgp"       //nolint:staticcheck // WMCO's format: it decrypts the annotation with this package
	"golang.org/x/crypto/openpgp/armor" //nolint:staticcheck // idem
)

// The windowsmachineconfig.openshift.io/username annotation of a BYOH node holds the user WMCO logs in as,
// encrypted as WMCO encrypts it (its pkg/crypto): an OpenPGP message symmetrically encrypted with the bytes of
// the cloud-private-key secret's private key as passphrase, ASCII-armored as "ENCRYPTED DATA", its newlines
// written as the marker below so the value fits a JSON patch. WMCO decrypts it with the same key (to
// deconfigure the node, and re-encrypts it when the key changes); wmcon writes the same form so that WMCO,
// installed later, reads it.

// usernameMarker stands for each newline of the armored message.
const usernameMarker = "<wmcoMarker>"

const usernameArmorType = "ENCRYPTED DATA"

// EncryptUsername encrypts a BYOH instance's user name for the username annotation with the private key
// (its PEM, as cloud-private-key holds it).
func EncryptUsername(username string, privateKeyPEM []byte) (string, error) {
	if len(privateKeyPEM) == 0 {
		return "", errors.New("encrypt the user name: no private key (secret cloud-private-key)")
	}
	var buf bytes.Buffer
	enc, err := armor.Encode(&buf, usernameArmorType, nil)
	if err != nil {
		return "", fmt.Errorf("encrypt the user name: %w", err)
	}
	w, err := openpgp.SymmetricallyEncrypt(enc, privateKeyPEM, nil, nil)
	if err != nil {
		return "", fmt.Errorf("encrypt the user name: %w", err)
	}
	if _, err := io.WriteString(w, username); err != nil {
		return "", fmt.Errorf("encrypt the user name: %w", err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("encrypt the user name: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("encrypt the user name: %w", err)
	}
	return strings.ReplaceAll(buf.String(), "\n", usernameMarker), nil
}

// DecryptUsername reads a username annotation with the private key it was encrypted with.
func DecryptUsername(annotation string, privateKeyPEM []byte) (string, error) {
	block, err := armor.Decode(strings.NewReader(strings.ReplaceAll(annotation, usernameMarker, "\n")))
	if err != nil {
		return "", fmt.Errorf("the username annotation is not WMCO's encrypted form: %w", err)
	}
	tried := false
	md, err := openpgp.ReadMessage(block.Body, nil, func([]openpgp.Key, bool) ([]byte, error) {
		if tried {
			return nil, errors.New("the private key does not decrypt it")
		}
		tried = true
		return privateKeyPEM, nil
	}, nil)
	if err != nil {
		return "", fmt.Errorf("decrypt the username annotation (was it encrypted with another cloud-private-key?): %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(md.UnverifiedBody, 4096))
	if err != nil {
		return "", fmt.Errorf("decrypt the username annotation: %w", err)
	}
	return string(b), nil
}
