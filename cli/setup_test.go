package cli

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/config"
)

func TestSetupCommandsRefusedUnderReadOnly(t *testing.T) {
	for _, args := range [][]string{
		{"operator", "install"}, {"operator", "uninstall", "--yes"}, {"key", "create", "--from-file", "../testdata/keys/userdata-test-key"},
		{"key", "generate", "--out", filepath.Join(t.TempDir(), "k")}, {"machineset", "generate", "--apply", "--image", "ami-1"},
		{"machineset", "scale", "x", "2"}, {"machineset", "delete", "x", "--yes"}, {"byoh", "add", "10.0.0.9", "--user", "a"},
		{"byoh", "remove", "10.0.0.9", "--yes"},
	} {
		code, _, stderr := runWmcon(t, append([]string{"--demo", "--read-only"}, args...)...)
		require.Equal(t, 1, code, args)
		require.Contains(t, stderr, "--read-only is set: refusing to", args)
	}
}

// Against the real API server: the key goes in (audited), windows-user-data is left to WMCO (not installed
// there), and a BYOH host is added and removed.
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
	require.Contains(t, out, "windows-user-data: missing", "wmcon leaves windows-user-data to WMCO")

	// A different key needs confirmation.
	other := filepath.Join(t.TempDir(), "other")
	code, _, stderr = runWmcon(t, kubeconfigArgs(t, "key", "generate", "--out", other)...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "confirm with --yes")
	code, _, stderr = runWmcon(t, kubeconfigArgs(t, "key", "create", "--from-file", other, "--yes")...)
	require.Equal(t, 0, code, stderr)

	code, _, stderr = runWmcon(t, kubeconfigArgs(t, "byoh", "add", "10.0.0.9", "--user", "Administrator")...)
	require.Equal(t, 0, code, stderr)
	code, out, _ = runWmcon(t, kubeconfigArgs(t, "byoh", "list", "-o", "json")...)
	require.Equal(t, 0, code)
	require.JSONEq(t, `[{"address":"10.0.0.9","value":"username=Administrator"}]`, out)
	code, _, stderr = runWmcon(t, kubeconfigArgs(t, "byoh", "add", "fd00::1", "--user", "Administrator")...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "IPv6")
	code, _, stderr = runWmcon(t, kubeconfigArgs(t, "byoh", "remove", "10.0.0.9", "--yes")...)
	require.Equal(t, 0, code, stderr)

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
