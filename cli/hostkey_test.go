package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wmcon/wmcon/config"
)

func TestHostKeyForgetRemovesTheNodePin(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-forget", Labels: map[string]string{config.OSLabel: "windows"},
		Annotations: map[string]string{config.HostKeyAnnotation: "AAAAC3NzaC1lZDI1NTE5AAAAIK2", config.HostKeyTypeAnnotation: "ssh-ed25519"}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.42"}}}}
	_, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, "win-forget", metav1.DeleteOptions{}) })

	code, out, errOut := runWmcon(t, "--kubeconfig", srv.AdminKubeconfig(), "--known-hosts", t.TempDir()+"/known_hosts",
		"--ssh-config", "", "hostkey", "forget", "win-forget")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "forgot the pinned host key of win-forget (127.0.0.42:22)")
	n, err := kube.CoreV1().Nodes().Get(ctx, "win-forget", metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotContains(t, n.Annotations, config.HostKeyAnnotation)
	assert.NotContains(t, n.Annotations, config.HostKeyTypeAnnotation)

	code, _, errOut = runWmcon(t, "--kubeconfig", srv.AdminKubeconfig(), "hostkey", "forget", "no-such-node")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `node "no-such-node" not found`)
}

func TestHostKeyForgetOnANodeWithNoPinSaysThereWasNone(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-nopin", Labels: map[string]string{config.OSLabel: "windows"}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.43"}}}}
	_, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, "win-nopin", metav1.DeleteOptions{}) })

	code, out, errOut := runWmcon(t, "--kubeconfig", srv.AdminKubeconfig(), "--known-hosts", t.TempDir()+"/known_hosts",
		"--ssh-config", "", "hostkey", "forget", "win-nopin")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "win-nopin (127.0.0.43:22) has no pinned host key, so there was nothing to forget")
	assert.NotContains(t, out, "forgot")
}

func TestBadKubeconfigIsOneClearLine(t *testing.T) {
	code, _, errOut := runWmcon(t, "--kubeconfig", "/nonexistent/kubeconfig", "hostkey", "forget", "x")
	assert.Equal(t, 1, code)
	assert.Equal(t, "wmcon: the kubeconfig file /nonexistent/kubeconfig does not exist: pass an existing file with --kubeconfig or set KUBECONFIG\n", errOut)

	code, _, errOut = runWmcon(t, "--kubeconfig", srv.AdminKubeconfig(), "--context", "nope", "hostkey", "forget", "x")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `"nope"`)
	assert.Contains(t, errOut, "oc config get-contexts")

	code, _, errOut = runWmcon(t, "--kubeconfig", srv.Kubeconfig("nobody-expired"), "--server", "https://127.0.0.1:1", "hostkey", "forget", "x")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "cannot reach the API server at https://127.0.0.1:1")

	code, _, errOut = runWmcon(t, "--kubeconfig", expiredKubeconfig(t), "hostkey", "forget", "x")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "rejected your credentials (401 Unauthorized)")
	assert.Contains(t, errOut, "oc login")
}

// expiredKubeconfig is the admin kubeconfig with its client certificate replaced by a token the server does
// not know, as after a login expired.
func expiredKubeconfig(t *testing.T) string {
	cfg, err := clientcmd.LoadFromFile(srv.AdminKubeconfig())
	require.NoError(t, err)
	for _, ai := range cfg.AuthInfos {
		ai.ClientCertificate, ai.ClientKey, ai.ClientCertificateData, ai.ClientKeyData = "", "", nil, nil
		ai.Token = "sha256~expired-token"
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

// TestHostKeyList: a node whose key is pinned shows its type and SHA256 fingerprint, one without a pin says
// so, in text and JSON; listing changes nothing.
func TestHostKeyList(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	sshPub, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	for name, ann := range map[string]map[string]string{
		"win-list-pinned": {config.HostKeyAnnotation: base64.StdEncoding.EncodeToString(sshPub.Marshal()), config.HostKeyTypeAnnotation: "ssh-ed25519"},
		"win-list-none":   nil,
	} {
		ip := map[string]string{"win-list-pinned": "127.0.0.44", "win-list-none": "127.0.0.45"}[name]
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{config.OSLabel: "windows"}, Annotations: ann},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
		_, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}) })
	}
	args := []string{"--kubeconfig", srv.AdminKubeconfig(), "--known-hosts", t.TempDir() + "/known_hosts", "--ssh-config", "", "hostkey", "list"}
	code, out, errOut := runWmcon(t, args...)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `win-list-pinned\s+127\.0\.0\.44:22\s+ssh-ed25519 `+regexp.QuoteMeta(ssh.FingerprintSHA256(sshPub)), out)
	assert.Regexp(t, `win-list-none\s+127\.0\.0\.45:22\s+not pinned`, out)

	code, out, errOut = runWmcon(t, append(args, "-o", "json")...)
	require.Equal(t, 0, code, errOut)
	var keys []pinnedKey
	require.NoError(t, json.Unmarshal([]byte(out), &keys), out)
	byNode := map[string]pinnedKey{}
	for _, k := range keys {
		byNode[k.Node] = k
	}
	assert.Equal(t, ssh.FingerprintSHA256(sshPub), byNode["win-list-pinned"].Fingerprint)
	assert.Equal(t, "ssh-ed25519", byNode["win-list-pinned"].Type)
	assert.Empty(t, byNode["win-list-none"].Fingerprint)
	n, err := kube.CoreV1().Nodes().Get(ctx, "win-list-none", metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotContains(t, n.Annotations, config.HostKeyAnnotation, "listing pins nothing")
}
