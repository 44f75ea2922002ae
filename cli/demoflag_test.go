package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/actions"
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

// On the fresh demo (no WMCO) a generated key comes with windows-user-data authorizing it, written by wmcon.
func TestFreshDemoKeyWritesUserData(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	audit := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv(actions.AuditEnv, audit)
	code, out, errOut := runWmcon(t, "--demo=fresh", "key", "generate", "--out", t.TempDir()+"/k", "-o", "json")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"step":"user-data"`)
	assert.Contains(t, out, "created openshift-machine-api/windows-user-data")
	assert.NotContains(t, out, "PRIVATE KEY")
	_, err := os.Stat(audit)
	assert.ErrorIs(t, err, os.ErrNotExist, "the demo never writes the user's audit log")

	code, _, errOut = runWmcon(t, "--demo=fresh", "--read-only", "key", "generate", "--out", t.TempDir()+"/k")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--read-only is set")
}
