package demo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOperatorPayloadStaysInTheBackendsDirectory: the fresh demo operator's payload is written inside the
// backend's private directory, so a process a signal ends at once (which removes that directory) leaves
// nothing in the temporary directory (issue 25, Also).
func TestOperatorPayloadStaysInTheBackendsDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b, err := NewBackend(Options{Fresh: true, Step: 20 * time.Millisecond, BYOHKeyFile: filepath.Join(t.TempDir(), "byoh_ed25519")})
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			b.Close()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := b.payload.load(ctx)
	require.NoError(t, err)
	require.NotNil(t, p)
	rel, err := filepath.Rel(b.Sandbox().Dir, b.payload.dir)
	require.NoError(t, err)
	assert.NotContains(t, rel, "..", "inside the backend's directory")

	require.NoError(t, os.RemoveAll(b.Sandbox().Dir)) // what session.RemoveSandboxFiles does on a signal
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "nothing of the demo is left in the temporary directory")
	b.Close()
	closed = true
}
