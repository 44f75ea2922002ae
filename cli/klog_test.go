package cli

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
)

// TestQuietKlogKeepsClientGoErrorsOffStderr logs the way client-go's certificate loader does when a client
// key does not match its certificate, and checks that nothing reaches the process's stderr.
func TestQuietKlogKeepsClientGoErrorsOffStderr(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = w
	t.Cleanup(func() { os.Stderr = saved; klog.ClearLogger() })

	quietKlog()
	klog.Background().WithName("tls-transport-cache").Error(errors.New("tls: private key does not match public key"), "Loading client cert failed")
	klog.ErrorS(errors.New("boom"), "Unhandled Error")
	klog.Errorf("refreshing credentials: %v", errors.New("boom"))
	klog.Flush()

	os.Stderr = saved
	require.NoError(t, w.Close())
	leaked, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Empty(t, string(leaked), "klog wrote to stderr")
}
