package cluster

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	configv1 "github.com/openshift/api/config/v1"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// ValidatePrivateKey checks a key before it goes anywhere near the cluster: it must be a private key (not
// a public one), parse without a passphrase (WMCO cannot use an encrypted key), and not be DSA or RSA below
// 2048 bits. It returns the key's description and public half.
func ValidatePrivateKey(pemBytes []byte) (sshkey.Info, ssh.PublicKey, error) {
	trimmed := bytes.TrimSpace(pemBytes)
	if _, _, _, _, err := ssh.ParseAuthorizedKey(trimmed); err == nil || bytes.Contains(trimmed, []byte("PUBLIC KEY-----")) {
		return sshkey.Info{}, nil, errors.New("this is a public key: give the private key (the file without .pub)")
	}
	if err := onePEMBlock(trimmed); err != nil {
		return sshkey.Info{}, nil, err
	}
	if sshkey.IsEncrypted(pemBytes) {
		return sshkey.Info{}, nil, errors.New("the key is protected by a passphrase, which WMCO cannot use: remove it with ssh-keygen -p -N '' -f FILE (on a copy), or generate a new key with wmcon key generate")
	}
	signer, err := sshkey.Parse(pemBytes, nil)
	if err != nil {
		return sshkey.Info{}, nil, err
	}
	info := sshkey.DescribePublic(signer.PublicKey())
	return info, signer.PublicKey(), nil
}

// onePEMBlock refuses a key file that holds anything besides its one PEM block (whitespace aside): the
// file goes into the secret as it is, so whatever was around the key (another key, notes, a pasted
// secret) would go with it. A file that is not PEM at all is left to the parser to name.
func onePEMBlock(trimmed []byte) error {
	switch start := bytes.Index(trimmed, []byte("-----BEGIN ")); {
	case start < 0:
		return nil
	case start > 0:
		return errors.New("the file has text before the key's -----BEGIN line: give a file that holds the private key alone")
	}
	if block, rest := pem.Decode(trimmed); block != nil && len(bytes.TrimSpace(rest)) > 0 {
		return errors.New("the file has text after the key's -----END line: give a file that holds the private key alone")
	}
	return nil
}

// GenerateKey makes a new private key ("ed25519", or "rsa" of 4096 bits) in OpenSSH PEM form.
func GenerateKey(kind string) ([]byte, ssh.PublicKey, error) {
	var priv any
	switch kind {
	case "ed25519", "":
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		priv = k
	case "rsa":
		k, err := rsa.GenerateKey(rand.Reader, 4096)
		if err != nil {
			return nil, nil, err
		}
		priv = k
	default:
		return nil, nil, fmt.Errorf("key type %q: use ed25519 or rsa", kind)
	}
	block, err := ssh.MarshalPrivateKey(priv, "wmcon cloud-private-key")
	if err != nil {
		return nil, nil, fmt.Errorf("encode the new key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(block), signer.PublicKey(), nil
}

// KeyPairFree checks that PATH and PATH.pub do not exist, so WriteKeyPair can write them.
func KeyPairFree(path string) error {
	for _, p := range []string{path, path + ".pub"} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s already exists: choose another --out (wmcon never overwrites a key file)", p)
		}
	}
	return nil
}

// WriteKeyPair writes PATH (0600) and PATH.pub, never replacing an existing file.
func WriteKeyPair(path string, pemBytes []byte, pub ssh.PublicKey) error {
	if err := KeyPairFree(path); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	write := func(p string, data []byte, mode os.FileMode) error {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", p, err)
		}
		return f.Close()
	}
	if err := write(path, pemBytes, 0o600); err != nil {
		return err
	}
	return write(path+".pub", ssh.MarshalAuthorizedKey(pub), 0o644)
}

// KeyState is what the cluster holds now: the key secret's description and the user data's key.
type KeyState struct {
	Key         *sshkey.Info // nil when cloud-private-key is missing
	KeyProblem  string
	UserDataKey *sshkey.Info // nil when windows-user-data is missing
	UserDataErr string
	Platform    configv1.PlatformType
	// Standalone: the key was installed by a guided setup in standalone mode (config.SetupModeAnnotation).
	Standalone bool
}

// Keys reads and writes cloud-private-key and windows-user-data.
type Keys struct{ c Clients }

// NewKeys builds it from the session's clients.
func NewKeys(c Clients) *Keys { return &Keys{c: c} }

// State describes the key secret and the user data; it never returns key material.
func (k *Keys) State(ctx context.Context) (KeyState, error) {
	var st KeyState
	var err error
	if st.Key, st.KeyProblem, err = k.PrivateKey(ctx); err != nil {
		return st, err
	}
	if st.UserDataKey, st.UserDataErr, err = k.UserDataKey(ctx); err != nil {
		return st, err
	}
	st.Platform = k.platform(ctx)
	if st.Key != nil {
		sec, err := k.c.Kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, config.PrivateKeySecret, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return st, fmt.Errorf("read secret %s/%s: %w", config.OperatorNamespace, config.PrivateKeySecret, err)
		}
		st.Standalone = err == nil && sec.Annotations[config.SetupModeAnnotation] == "standalone"
	}
	return st, nil
}

// MarkStandalone records on cloud-private-key that the guided setup runs in standalone mode.
func (k *Keys) MarkStandalone(ctx context.Context) error {
	patch := []byte(`{"metadata":{"annotations":{"` + config.SetupModeAnnotation + `":"standalone"}}}`)
	_, err := k.c.Kube.CoreV1().Secrets(config.OperatorNamespace).Patch(ctx, config.PrivateKeySecret, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("record standalone mode on secret %s/%s: %w", config.OperatorNamespace, config.PrivateKeySecret, err)
	}
	return nil
}

// PrivateKey describes cloud-private-key (nil when it is missing) and says what is wrong with it for WMCO
// (passphrase, weak, unparseable), "" when nothing is.
func (k *Keys) PrivateKey(ctx context.Context) (*sshkey.Info, string, error) {
	sec, err := k.c.Kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, config.PrivateKeySecret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, "", nil
	case err != nil:
		return nil, "", fmt.Errorf("read secret %s/%s: %w", config.OperatorNamespace, config.PrivateKeySecret, err)
	}
	info, _, verr := ValidatePrivateKey(sec.Data[config.PrivateKeySecretKey])
	if d, derr := sshkey.Describe(sec.Data[config.PrivateKeySecretKey]); derr == nil {
		info = d
	}
	if verr != nil {
		return &info, verr.Error(), nil
	}
	return &info, "", nil
}

// UserDataKey describes the public key in windows-user-data (nil when the secret is missing; an empty Info
// and the reason when no key can be found in it).
func (k *Keys) UserDataKey(ctx context.Context) (*sshkey.Info, string, error) {
	script, found, err := k.UserDataScript(ctx)
	if err != nil || !found {
		return nil, "", err
	}
	info, problem := DescribeUserDataKey(script)
	return info, problem, nil
}

// UserDataScript reads windows-user-data's script; found is false when the secret is missing.
func (k *Keys) UserDataScript(ctx context.Context) (script []byte, found bool, err error) {
	ud, err := k.c.Kube.CoreV1().Secrets(config.MachineAPINamespace).Get(ctx, config.UserDataSecret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("read secret %s/%s: %w", config.MachineAPINamespace, config.UserDataSecret, err)
	}
	return ud.Data[config.UserDataSecretKey], true, nil
}

// DescribeUserDataKey describes the public key a user data script authorizes, or says why none is found.
func DescribeUserDataKey(script []byte) (*sshkey.Info, string) {
	pub, err := sshkey.FindInUserData(string(script))
	if err != nil {
		return &sshkey.Info{}, err.Error()
	}
	info := sshkey.DescribePublic(pub)
	return &info, ""
}

func (k *Keys) platform(ctx context.Context) configv1.PlatformType {
	if k.c.Config == nil {
		return ""
	}
	infra, err := k.c.Config.ConfigV1().Infrastructures().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
	if err != nil || infra.Status.PlatformStatus == nil {
		return ""
	}
	return infra.Status.PlatformStatus.Type
}

// KeyChange lists what replacing the key does: Machine-backed Windows nodes whose pub-key-hash no longer
// matches are deleted and recreated by WMCO; BYOH nodes are reconfigured with the new key's annotations.
type KeyChange struct {
	Recreated []string
	BYOH      []string
}

// Consequences of replacing the key with pub.
func (k *Keys) Consequences(ctx context.Context, pub ssh.PublicKey) (KeyChange, error) {
	var ch KeyChange
	sel := labels.Set{config.OSLabel: "windows"}.String()
	nodes, err := k.c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return ch, fmt.Errorf("list Windows nodes: %w", err)
	}
	hash := sshkey.PubKeyHash(pub)
	for _, n := range nodes.Items {
		if n.Annotations[config.PubKeyHashAnnotation] == hash {
			continue
		}
		if n.Labels[config.BYOHLabel] == "true" {
			ch.BYOH = append(ch.BYOH, n.Name)
		} else {
			ch.Recreated = append(ch.Recreated, n.Name)
		}
	}
	sort.Strings(ch.Recreated)
	sort.Strings(ch.BYOH)
	return ch, nil
}

// ApplyKey creates or replaces cloud-private-key; it says whether the secret existed.
func (k *Keys) ApplyKey(ctx context.Context, pemBytes []byte) (bool, error) {
	return applySecret(ctx, k.c, config.OperatorNamespace, config.PrivateKeySecret, config.PrivateKeySecretKey, pemBytes)
}

// UserDataWrite says what ApplyUserData did.
type UserDataWrite string

const (
	UserDataCreated   UserDataWrite = "created"
	UserDataReplaced  UserDataWrite = "replaced"
	UserDataUnchanged UserDataWrite = "unchanged"
)

// ApplyUserData writes openshift-machine-api/windows-user-data authorizing pub, rendered for the cluster's
// platform (cluster/userdata). wmcon does it only standalone: with WMCO installed the operator owns it.
// A secret that already holds exactly this script is left alone.
func (k *Keys) ApplyUserData(ctx context.Context, pub ssh.PublicKey) (UserDataWrite, error) {
	want := userdata.ForKey(pub, string(k.platform(ctx)))
	sec, err := k.c.Kube.CoreV1().Secrets(config.MachineAPINamespace).Get(ctx, config.UserDataSecret, metav1.GetOptions{})
	if err == nil && bytes.Equal(sec.Data[config.UserDataSecretKey], want) {
		return UserDataUnchanged, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("read secret %s/%s: %w", config.MachineAPINamespace, config.UserDataSecret, err)
	}
	existed, err := applySecret(ctx, k.c, config.MachineAPINamespace, config.UserDataSecret, config.UserDataSecretKey, want)
	if err != nil {
		return "", err
	}
	if existed {
		return UserDataReplaced, nil
	}
	return UserDataCreated, nil
}

func applySecret(ctx context.Context, c Clients, ns, name, key string, value []byte) (bool, error) {
	secrets := c.Kube.CoreV1().Secrets(ns)
	sec, err := secrets.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{key: value}}
		if _, err := secrets.Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			return false, fmt.Errorf("create secret %s/%s: %w", ns, name, err)
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read secret %s/%s: %w", ns, name, err)
	}
	sec = sec.DeepCopy()
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	sec.Data[key] = value
	if _, err := secrets.Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		return true, fmt.Errorf("replace secret %s/%s: %w", ns, name, err)
	}
	return true, nil
}
