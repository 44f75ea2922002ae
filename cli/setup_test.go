package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/setup"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/windows"
)

func TestSetupCommandsRefusedUnderReadOnly(t *testing.T) {
	for _, args := range [][]string{
		{"operator", "install"}, {"operator", "uninstall", "--yes"}, {"key", "create", "--from-file", "../testdata/keys/userdata-test-key"},
		{"key", "generate", "--out", filepath.Join(t.TempDir(), "k")}, {"machineset", "generate", "--apply", "--image", "ami-1"},
		{"machineset", "scale", "x", "2"}, {"machineset", "delete", "x", "--yes"}, {"byoh", "add", "127.0.0.9", "--user", "a"},
		{"byoh", "remove", "127.0.0.9", "--yes"},
	} {
		code, _, stderr := runWmcon(t, append([]string{"--demo", "--read-only"}, args...)...)
		require.Equal(t, 1, code, args)
		require.Contains(t, stderr, "--read-only is set: refusing to", args)
	}
}

// Against the real API server: the key goes in (audited) and, WMCO not being installed there, wmcon writes
// windows-user-data for it and rewrites it with a new key; a BYOH host is added and removed.
func TestKeyAndBYOHCommandsAgainstTheAPIServer(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv(actions.AuditEnv, audit)
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	ctx := context.Background()
	cleanup := func() {
		_ = kube.CoreV1().Secrets(config.OperatorNamespace).Delete(ctx, config.PrivateKeySecret, metav1.DeleteOptions{})
		_ = kube.CoreV1().Secrets(config.MachineAPINamespace).Delete(ctx, config.UserDataSecret, metav1.DeleteOptions{})
		_ = kube.CoreV1().ConfigMaps(config.OperatorNamespace).Delete(ctx, config.BYOHConfigMap, metav1.DeleteOptions{})
	}
	cleanup()
	t.Cleanup(cleanup)

	code, out, stderr := runWmcon(t, kubeconfigArgs(t, "key", "create", "--from-file", "../testdata/keys/userdata-test-key", "-o", "json")...)
	require.Equal(t, 0, code, stderr+out)
	require.Contains(t, out, `"outcome":"succeeded"`)
	require.NotContains(t, out, "PRIVATE KEY", "key material is never printed")
	code, out, _ = runWmcon(t, kubeconfigArgs(t, "key", "show")...)
	require.Equal(t, 0, code)
	require.Contains(t, out, "cloud-private-key: ED25519")
	require.Regexp(t, `windows-user-data: ED25519 SHA256:\S+ \(matches cloud-private-key\)`, out, "standalone, wmcon writes the user data")

	// A different key needs confirmation; a generated one refused for want of it is not written either.
	refused := filepath.Join(t.TempDir(), "refused")
	code, _, stderr = runWmcon(t, kubeconfigArgs(t, "key", "generate", "--out", refused)...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "confirm with --yes")
	assert.NoFileExists(t, refused, "no key file for a key that was not installed")
	assert.NoFileExists(t, refused+".pub")
	other := filepath.Join(t.TempDir(), "other")
	pemBytes, pub, err := cluster.GenerateKey("ed25519")
	require.NoError(t, err)
	require.NoError(t, cluster.WriteKeyPair(other, pemBytes, pub))
	code, out, stderr = runWmcon(t, kubeconfigArgs(t, "key", "create", "--from-file", other, "--yes")...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "replaced openshift-machine-api/windows-user-data")
	code, out, _ = runWmcon(t, kubeconfigArgs(t, "key", "show")...)
	require.Equal(t, 0, code)
	require.Contains(t, out, "(matches cloud-private-key)", "the user data follows the new key")

	code, out, stderr = runWmcon(t, kubeconfigArgs(t, "byoh", "add", "127.0.0.9", "--user", "Administrator")...)
	require.Equal(t, 0, code, stderr)
	// No WMCO here: the words say who configures the host (issue 25 item 9).
	require.Contains(t, out, "127.0.0.9 added: WMCO is not installed, so wmcon configures it — run wmcon configure --address 127.0.0.9 --user Administrator")
	require.NotContains(t, out, "WMCO configures it")
	code, out, _ = runWmcon(t, kubeconfigArgs(t, "byoh", "list", "-o", "json")...)
	require.Equal(t, 0, code)
	require.JSONEq(t, `[{"address":"127.0.0.9","value":"username=Administrator","user":"Administrator"}]`, out)
	code, _, stderr = runWmcon(t, kubeconfigArgs(t, "byoh", "add", "::1", "--user", "Administrator")...)
	require.Equal(t, ExitUsage, code, "an address windows-instances cannot take is a bad command line")
	require.Contains(t, stderr, "IPv6")
	code, out, stderr = runWmcon(t, kubeconfigArgs(t, "byoh", "remove", "127.0.0.9", "--yes")...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "WMCO is not installed: the host stays as it is")
	require.NotContains(t, out, "WMCO will drain")

	records, err := actions.ReadAudit(audit)
	require.NoError(t, err)
	var audited []string
	for _, r := range records {
		audited = append(audited, r.Action+" "+string(r.Outcome))
	}
	require.Contains(t, audited, "key-create succeeded")
	require.Contains(t, audited, "byoh-add succeeded")
	require.Contains(t, audited, "byoh-remove succeeded")
}

// byoh validate --ssh logs in to each host as WMCO will (real API server, simulated hosts over real SSH):
// a host that takes the key, one that does not and an address where nothing answers, each named with what
// is wrong; exit 1 when one does not let wmcon in.
func TestBYOHValidateSSH(t *testing.T) {
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	ctx := context.Background()
	b := newBareHosts(t)
	b.start("win-byoh-ok", "127.0.0.91")
	_, stranger, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	strangerKey, err := ssh.NewSignerFromKey(stranger)
	require.NoError(t, err)
	// A host that authorises another key only (startOpts would authorise b's).
	locked, err := windows.Start(windows.Options{Addr: "127.0.0.95:0", AuthorizedKeys: []ssh.PublicKey{strangerKey.PublicKey()}})
	require.NoError(t, err)
	t.Cleanup(func() { locked.Close() })
	_, port, _ := net.SplitHostPort(locked.Addr())
	f, err := os.OpenFile(b.sshConfig, os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = fmt.Fprintf(f, "Host 127.0.0.95\n  Port %s\n", port)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	_, _ = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.OperatorNamespace}}, metav1.CreateOptions{})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.BYOHConfigMap, Namespace: config.OperatorNamespace},
		Data: map[string]string{"127.0.0.91": "username=Administrator", "127.0.0.93": "username=Administrator",
			"127.0.0.95": "username=Administrator"}}
	_, err = kube.CoreV1().ConfigMaps(config.OperatorNamespace).Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kube.CoreV1().ConfigMaps(config.OperatorNamespace).Delete(context.Background(), config.BYOHConfigMap, metav1.DeleteOptions{})
	})

	code, out, errOut := runWmcon(t, b.args(srv.AdminKubeconfig(), "byoh", "validate")...)
	require.Equal(t, 0, code, "without --ssh only the entries are checked: %s", errOut)
	assert.NotContains(t, out, "ssh")

	code, out, errOut = runWmcon(t, b.args(srv.AdminKubeconfig(), "byoh", "validate", "--ssh")...)
	assert.Equal(t, ExitFailed, code, out)
	assert.Regexp(t, `127\.0\.0\.91 .* ssh ok \(Administrator on WIN-BYOH-OK\)`, out)
	assert.Regexp(t, `127\.0\.0\.93 .* ✗ ssh unreachable: cannot reach 127\.0\.0\.93:22`, out)
	assert.Regexp(t, `127\.0\.0\.95 .* ✗ ssh login: `, out)
	assert.Contains(t, errOut, "2 of 3 hosts of windows-instances do not let wmcon in over SSH")

	code, out, _ = runWmcon(t, b.args(srv.AdminKubeconfig(), "byoh", "validate", "--ssh", "-o", "json")...)
	assert.Equal(t, ExitFailed, code)
	var entries []struct {
		Address string           `json:"address"`
		SSH     *setup.BYOHReach `json:"ssh"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &entries), out)
	states := map[string]string{}
	for _, e := range entries {
		require.NotNil(t, e.SSH, e.Address)
		states[e.Address] = e.SSH.State
	}
	assert.Equal(t, map[string]string{"127.0.0.91": setup.ReachOK, "127.0.0.93": setup.ReachUnreachable,
		"127.0.0.95": setup.ReachLogin}, states)
}

// TestKeyGenerateWritesNothingWhenRefused: key generate writes its key pair only when the change goes
// ahead: refused for an audit log that cannot be written, a cluster that does not answer, or --read-only,
// it leaves no key file behind.
func TestKeyGenerateWritesNothingWhenRefused(t *testing.T) {
	unreachable := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`), 0o600))
	notAFile := t.TempDir() // a directory: no audit record can be appended to it
	for _, tc := range []struct {
		name, audit, want string
		args              []string
	}{
		{"audit log not writable", notAFile, "refusing to change anything that cannot be audited", []string{"--kubeconfig", srv.AdminKubeconfig()}},
		{"cluster unreachable", "", "127.0.0.1:1", []string{"--kubeconfig", unreachable}},
		{"read-only", "", "--read-only is set", []string{"--kubeconfig", srv.AdminKubeconfig(), "--read-only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.audit != "" {
				t.Setenv(actions.AuditEnv, tc.audit)
			}
			out := filepath.Join(t.TempDir(), "k")
			code, _, stderr := runWmcon(t, append(tc.args, "key", "generate", "--out", out, "--yes")...)
			assert.Equal(t, ExitFailed, code, stderr)
			assert.Contains(t, stderr, tc.want)
			assert.NoFileExists(t, out)
			assert.NoFileExists(t, out+".pub")
		})
	}
}

// WMCO configures no host of windows-instances while one entry is wrong: byoh list and validate say so
// loudly, beside the entry that is wrong; with every entry right there is no warning.
func TestBYOHOneBadEntryStallsEveryHost(t *testing.T) {
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	ctx := context.Background()
	_, _ = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.OperatorNamespace}}, metav1.CreateOptions{})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.BYOHConfigMap, Namespace: config.OperatorNamespace},
		Data: map[string]string{"127.0.0.96": "username=Administrator", "127.0.0.97": "user=Administrator"}}
	_, err := kube.CoreV1().ConfigMaps(config.OperatorNamespace).Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kube.CoreV1().ConfigMaps(config.OperatorNamespace).Delete(context.Background(), config.BYOHConfigMap, metav1.DeleteOptions{})
	})
	const stall = "WARNING: WMCO configures none of the 2 hosts of windows-instances while any entry is wrong"
	for _, cmd := range []string{"list", "validate"} {
		code, out, _ := runWmcon(t, kubeconfigArgs(t, "byoh", cmd)...)
		assert.Contains(t, out, stall, cmd)
		assert.Regexp(t, `127\.0\.0\.97 .* the value must be username=<name>`, out, cmd) // the bad entry, with its problem
		if cmd == "validate" {
			assert.Equal(t, ExitFailed, code)
		}
	}
	delete(cm.Data, "127.0.0.97")
	_, err = kube.CoreV1().ConfigMaps(config.OperatorNamespace).Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	code, out, _ := runWmcon(t, kubeconfigArgs(t, "byoh", "validate")...)
	assert.Equal(t, 0, code, out)
	assert.NotContains(t, out, "WARNING")
}
