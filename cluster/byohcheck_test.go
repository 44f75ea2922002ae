package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
)

// TestBYOHAddRefusesBadEntriesBeforeTheAPIServer, on the real API server: it refuses a ConfigMap key with
// ':' itself (the raw error byoh add used to show for ::ffff:127.0.0.75); wmcon refuses that entry first,
// with a sentence saying what to write, and also what the API server would store but WMCO cannot use.
// Nothing is written for any of them.
func TestBYOHAddRefusesBadEntriesBeforeTheAPIServer(t *testing.T) {
	kube, b, _ := byohEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cms := kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.BYOHConfigMap, Namespace: config.OperatorNamespace},
		Data: map[string]string{"::ffff:127.0.0.75": "username=Administrator"}}, metav1.CreateOptions{})
	require.True(t, apierrors.IsInvalid(err), "the API server decides that a key cannot hold ':': %v", err)

	for _, tc := range []struct{ addr, user, want string }{
		{"::ffff:127.0.0.75", "Administrator", "write it as 127.0.0.75"},
		{"fe80::1%eth0", "Administrator", "IPv6 addresses are not supported"},
		{"127.0.0.0", "Administrator", "not a host's"},
		{"255.255.255.255", "Administrator", "the broadcast address"},
		{"127.0.0.76", "John Smith", "white space"},
		{"127.0.0.76", "ad\tmin", "white space"},
		{"127.0.0.76", "ad\x1b]0;pwned\amin", "control character"},
		{"127.0.0.76", strings.Repeat("a", 300), "at most 20"},
		{"127.0.0.76", `"Administrator"`, `contains '"'`},
		{"127.0.0.76", "admin;reboot", `contains ';'`},
	} {
		err := b.Add(ctx, tc.addr, tc.user)
		if assert.Error(t, err, "%q %q", tc.addr, tc.user) {
			assert.Contains(t, err.Error(), tc.want, "%q %q", tc.addr, tc.user)
			assert.NotContains(t, err.Error(), "is invalid", "not the API server's raw error")
			assert.NotContains(t, err.Error(), "\x1b", "a terminal escape is never echoed as it is")
		}
	}
	data, err := b.Read(ctx)
	require.NoError(t, err)
	assert.Empty(t, data, "nothing was written")
	require.NoError(t, b.Add(ctx, "127.0.0.75", "Administrator"))
}
