package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// --demo is the demo with Windows nodes; --demo=fresh one where Windows was never set up.
func TestDemoFlag(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the fresh demo's BYOH key file goes there
	code, out, _ := runWmcon(t, "--demo", "byoh", "list")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "127.0.0.5")

	code, out, _ = runWmcon(t, "--demo=fresh", "byoh", "list")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "no BYOH instances")

	code, _, errOut := runWmcon(t, "--demo=nonsense", "version")
	assert.Equal(t, 64, code)
	assert.Contains(t, errOut, "--demo=fresh")
}
