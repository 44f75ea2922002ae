package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
)

// TestQuietKlogKeepsClientGoErrorsOffStderr logs, in a child process, the way client-go's certificate loader
// does when a client key does not match its certificate, and checks that nothing reaches the child's stderr.
// A child keeps the global klog and os.Stderr of this test process untouched.
func TestQuietKlogKeepsClientGoErrorsOffStderr(t *testing.T) {
	if os.Getenv(klogChildEnv) == "1" {
		quietKlog()
		klog.Background().WithName("tls-transport-cache").Error(errors.New("tls: private key does not match public key"), "Loading client cert failed")
		klog.ErrorS(errors.New("boom"), "Unhandled Error")
		klog.Errorf("refreshing credentials: %v", errors.New("boom"))
		klog.Flush()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestQuietKlogKeepsClientGoErrorsOffStderr$")
	cmd.Env = append(os.Environ(), klogChildEnv+"=1")
	var stderr, stdout bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, &stdout
	require.NoError(t, cmd.Run(), stdout.String()+stderr.String())
	assert.Contains(t, stdout.String(), "PASS", "the child ran the logging half")
	assert.NotContains(t, stderr.String(), "Loading client cert failed")
	assert.NotContains(t, stderr.String(), "Unhandled Error")
	assert.NotContains(t, stderr.String(), "refreshing credentials")
}
