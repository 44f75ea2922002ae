package cluster

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote/sshkey"
)

func secretWith(name, key string, value []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{key: value}}
}

// TestSecretsInfoNamesRegistriesAndTheKeyHash: the snapshot carries the pull secret's registries (never a
// credential) and the key's pub-key-hash, the one WMCO writes on the nodes it configures.
func TestSecretsInfoNamesRegistriesAndTheKeyHash(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	pull := []byte(`{"auths":{"quay.io":{"auth":"c2VjcmV0OnZhbHVl"},"mirror.corp.example.com:5000/ocp":{"auth":"eDp5"},"cloud.openshift.com":{"auth":"YTpi"}}}`)

	info := secretsInfo([]*corev1.Secret{secretWith(config.PrivateKeySecret, config.PrivateKeySecretKey, pem.EncodeToMemory(block))}, nil,
		[]*corev1.Secret{secretWith(config.PullSecret, config.PullSecretKey, pull)})
	assert.Equal(t, sshkey.PubKeyHash(signer.PublicKey()), info.PrivateKey.PubKeyHash)
	assert.Equal(t, []string{"cloud.openshift.com", "mirror.corp.example.com:5000/ocp", "quay.io"}, info.PullRegistries)
	assert.Empty(t, info.PullSecretHint)
	assert.NotContains(t, info.PullRegistries, "c2VjcmV0OnZhbHVl")
	assert.True(t, info.HasCredentials("mirror.corp.example.com:5000/ocp/release"), "an entry for a path covers what is under it")
	assert.False(t, info.HasCredentials("mirror.corp.example.com:5000/other"))
	assert.True(t, info.HasCredentials("quay.io/openshift-release-dev/ocp-release"))
	assert.False(t, info.HasCredentials("quay.iox/repo"), "a host is matched whole")
	assert.Equal(t, 2, info.Present())

	bad := secretsInfo(nil, nil, []*corev1.Secret{secretWith(config.PullSecret, config.PullSecretKey, []byte("{not json"))})
	assert.Contains(t, bad.PullSecretHint, "is not valid JSON")
	assert.NotContains(t, bad.PullSecretHint, "{not json", "the value is never repeated")
	empty := secretsInfo(nil, nil, []*corev1.Secret{secretWith(config.PullSecret, "other", []byte("x"))})
	assert.Contains(t, empty.PullSecretHint, "has no "+config.PullSecretKey)
}
