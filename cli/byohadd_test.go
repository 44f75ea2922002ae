package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/config"
)

// TestBYOHAddRefusesWhatTheREADMESays: against the real API server, byoh add and setup --byoh refuse each
// address and user the README lists as rejected, as a usage error (64) that names the value (quoted, so an
// escape sequence never reaches the terminal) and says what to give; nothing is written to the cluster.
func TestBYOHAddRefusesWhatTheREADMESays(t *testing.T) {
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	cms := kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	cleanup := func() { _ = cms.Delete(context.Background(), config.BYOHConfigMap, metav1.DeleteOptions{}) }
	cleanup()
	t.Cleanup(cleanup)
	for _, tc := range []struct{ addr, user, want string }{
		{"127.0.0.61", "John Smith", `user "John Smith": the user name contains white space`},
		{"127.0.0.61", "ad\tmin", `user "ad\tmin": the user name contains white space`},
		{"127.0.0.61", "ad\x1b[2Jmin", `user "ad\x1b[2Jmin": the user name contains the control character`},
		{"127.0.0.61", strings.Repeat("a", 300), "300 characters long: Windows account names have at most 20"},
		{"127.0.0.61", `"Administrator"`, `the user name contains '"'`},
		{"127.0.0.61", "admin;reboot", `the user name contains ';'`},
		{"127.0.0.0", "Administrator", `address "127.0.0.0": 127.0.0.0 is the network or broadcast address of 127.0.0.0/8`},
		{"255.255.255.255", "Administrator", `address "255.255.255.255": 255.255.255.255 is the broadcast address`},
		{"::ffff:127.0.0.75", "Administrator", `address "::ffff:127.0.0.75": the address is IPv4 written as IPv6 (IPv4-mapped): write it as 127.0.0.75`},
		{"fe80::1%eth0", "Administrator", `address "fe80::1%eth0": IPv6 addresses are not supported by WMCO`},
	} {
		code, _, stderr := runWmcon(t, kubeconfigArgs(t, "byoh", "add", tc.addr, "--user", tc.user)...)
		assert.Equal(t, ExitUsage, code, "%q %q: %s", tc.addr, tc.user, stderr)
		assert.Contains(t, stderr, tc.want)
		assert.NotContains(t, stderr, "\x1b", "the escape is shown quoted, never sent to the terminal")
		assert.NotContains(t, stderr, "resolves to no IPv4 address")

		code, _, stderr = runWmcon(t, kubeconfigArgs(t, "setup", "--standalone", "--byoh", tc.addr+"="+tc.user)...)
		assert.Equal(t, ExitUsage, code, "setup --byoh %q=%q: %s", tc.addr, tc.user, stderr)
		assert.Contains(t, stderr, tc.want)
	}
	_, err := cms.Get(context.Background(), config.BYOHConfigMap, metav1.GetOptions{})
	assert.Error(t, err, "nothing was written")
}
