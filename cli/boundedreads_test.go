package cli

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKubeconfigThatIsNotAFileIsRefused: a device would be read until memory runs out and a FIFO would
// block forever; both are refused with a sentence naming the path.
func TestKubeconfigThatIsNotAFileIsRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "kubeconfig-fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, path := range []string{"/dev/zero", fifo} {
		code, _, errOut := runWmcon(t, "--kubeconfig", path, "hostkey", "forget", "x")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, path+" is not a regular file")
	}
	t.Setenv("KUBECONFIG", "/dev/zero")
	code, _, errOut := runWmcon(t, "hostkey", "forget", "x")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "/dev/zero is not a regular file")
}
