package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/sim/demo"
)

// TestDemoAuditsIntoAPrivateDirectory: with WMCON_AUDIT_LOG naming the user's log, the demo still records its
// changes only in a directory of its own (0700, in the temporary directory), which Close removes with
// everything in it.
func TestDemoAuditsIntoAPrivateDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	users := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv(actions.AuditEnv, users)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := New(ctx, Options{Backend: newDemo(t, demo.Options{}), SSH: SSHOptions{SSHConfig: ""}})
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			s.Close()
		}
	})

	log := s.Runner.Backends.Audit.Path
	dir := filepath.Dir(log)
	assert.Equal(t, tmp, filepath.Dir(dir), "in the temporary directory")
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "private")

	node := demo.NodeName("127.0.0.2")
	require.NoError(t, s.Runner.Run(ctx, request.Cordon{Nodes: []string{node}}, event.EmitFunc(func(event.Event) {})))
	records, err := actions.ReadAudit(log)
	require.NoError(t, err)
	require.Len(t, records, 1)
	assert.Equal(t, "cordon "+node, records[0].Action+" "+records[0].Node)
	_, err = os.Stat(users)
	assert.ErrorIs(t, err, os.ErrNotExist, "the user's log is never written by the demo")

	s.Close()
	closed = true
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist, "removed on Close")
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "nothing of the demo is left in the temporary directory")
}

// TestRemoveSandboxFilesWithoutClose: a process ending at once on a signal (no Close) still removes the demo's
// directory.
func TestRemoveSandboxFilesWithoutClose(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := New(ctx, Options{Backend: newDemo(t, demo.Options{}), SSH: SSHOptions{SSHConfig: ""}})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	dir := filepath.Dir(s.Runner.Backends.Audit.Path)
	require.DirExists(t, dir)
	RemoveSandboxFiles()
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
