package actions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
)

// TestAuditLogIsPrivateEvenIfItExisted: an existing 0644 log becomes 0600 at the next record.
func TestAuditLogIsPrivateEvenIfItExisted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	l := &actions.AuditLog{Path: path}
	require.NoError(t, l.Check())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.NoError(t, os.Chmod(path, 0o644))
	require.NoError(t, l.Append(actions.AuditRecord{Action: "cordon", Node: "n"}))
	fi, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// TestUnwritableAuditLogIsFoundBeforeAChange: Check fails, naming the file, when records cannot be written.
func TestUnwritableAuditLogIsFoundBeforeAChange(t *testing.T) {
	if os.Geteuid() == 0 {
		// root writes anywhere: make the path a directory instead of removing permissions.
		dir := filepath.Join(t.TempDir(), "audit.log")
		require.NoError(t, os.Mkdir(dir, 0o700))
		err := (&actions.AuditLog{Path: dir}).Check()
		require.Error(t, err)
		assert.Contains(t, err.Error(), dir)
		assert.Contains(t, err.Error(), "refusing to change anything")
		return
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	err := (&actions.AuditLog{Path: filepath.Join(dir, "audit.log")}).Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refusing to change anything")
}
