package actions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
)

// intend writes an intent record to the log at path, as a change does before it starts.
func intend(path string) error {
	_, err := actions.Backends{Audit: &actions.AuditLog{Path: path}}.Audited(context.Background(), &recorder{},
		actions.AuditIntent{Action: "cordon", Targets: []string{"n"}})
	return err
}

// TestAuditLogIsPrivateEvenIfItExisted: an existing 0644 log becomes 0600 at the next record.
func TestAuditLogIsPrivateEvenIfItExisted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	require.NoError(t, intend(path))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.NoError(t, os.Chmod(path, 0o644))
	l := &actions.AuditLog{Path: path}
	require.NoError(t, l.Append(actions.AuditRecord{Action: "cordon", Node: "n"}))
	fi, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// TestUnwritableAuditLogIsFoundBeforeAChange: the intent record cannot be written, so the change is refused
// with a sentence naming the file.
func TestUnwritableAuditLogIsFoundBeforeAChange(t *testing.T) {
	if os.Geteuid() == 0 {
		// root writes anywhere: make the path a directory instead of removing permissions.
		dir := filepath.Join(t.TempDir(), "audit.log")
		require.NoError(t, os.Mkdir(dir, 0o700))
		err := intend(dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), dir)
		assert.Contains(t, err.Error(), "refusing to change anything")
		return
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	err := intend(filepath.Join(dir, "audit.log"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refusing to change anything")
}

// TestAuditLogThatIsADeviceIsRefused: /dev/full takes no record (and /dev/null would swallow them): a log
// that is not a regular file refuses the change, and the device's own mode is left alone.
func TestAuditLogThatIsADeviceIsRefused(t *testing.T) {
	before, err := os.Stat("/dev/full")
	require.NoError(t, err)
	for _, dev := range []string{"/dev/full", "/dev/null"} {
		err := intend(dev)
		require.Error(t, err, dev)
		assert.Contains(t, err.Error(), dev+" is not a regular file")
		assert.Contains(t, err.Error(), "refusing to change anything")
	}
	after, err := os.Stat("/dev/full")
	require.NoError(t, err)
	assert.Equal(t, before.Mode(), after.Mode())
}

// TestIntentIsRecordedBeforeTheChange: the Runner writes the run's intent before the action starts, and
// its outcome record carries the same run id; ReadAudit then shows the outcome only.
func TestIntentIsRecordedBeforeTheChange(t *testing.T) {
	e := newEnv(t)
	e.node("audit-intent", "127.0.0.144", false)
	path := filepath.Join(t.TempDir(), "audit.log")
	rec := &recorder{}
	var atStart []actions.AuditRecord
	rec.onEvent = func(ev event.Event) {
		if ev.Kind == event.StepStarted && atStart == nil {
			atStart, _ = actions.ReadAuditFile(path)
		}
	}
	run := actions.Runner{Backends: actions.Backends{Cluster: e.ops, Audit: &actions.AuditLog{Path: path}}}
	require.NoError(t, run.Run(e.ctx, request.Cordon{Nodes: []string{"audit-intent"}}, rec))

	require.Len(t, atStart, 1, "the intent was on disk when the first step started")
	intent := atStart[0]
	assert.Equal(t, actions.Intended, intent.Outcome)
	assert.Equal(t, "cordon", intent.Action)
	assert.Equal(t, []string{"audit-intent"}, intent.Targets)
	assert.NotEmpty(t, intent.Run)

	all, err := actions.ReadAuditFile(path)
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, intent.Run, all[1].Run, "the outcome names its run")
	assert.Equal(t, event.Succeeded, all[1].Outcome)
	outcomes, err := actions.ReadAudit(path)
	require.NoError(t, err)
	require.Len(t, outcomes, 1)
	assert.Equal(t, event.Succeeded, outcomes[0].Outcome)
}

// TestLostOutcomeRecordFailsTheRun: the cordon is made, then its record cannot be written (the log became
// a directory): the run fails saying the change was made but not recorded, and the log keeps the intent,
// which ReadAudit shows as a run whose outcome is unknown.
func TestLostOutcomeRecordFailsTheRun(t *testing.T) {
	e := newEnv(t)
	e.node("audit-lost", "127.0.0.145", false)
	path := filepath.Join(t.TempDir(), "audit.log")
	rec := &recorder{}
	var moved bool
	rec.onEvent = func(ev event.Event) { // the sink sees Finished just before its record is written
		if ev.Kind == event.Finished && !moved {
			moved = true
			assert.NoError(t, os.Rename(path, path+".kept"))
			assert.NoError(t, os.Mkdir(path, 0o700))
		}
	}
	run := actions.Runner{Backends: actions.Backends{Cluster: e.ops, Audit: &actions.AuditLog{Path: path}}}
	err := run.Run(e.ctx, request.Cordon{Nodes: []string{"audit-lost"}}, rec)

	var lost *actions.UnauditedError
	require.ErrorAs(t, err, &lost)
	assert.True(t, e.nodeInfo("audit-lost").Unschedulable, "the change was made")
	assert.Contains(t, err.Error(), "the change WAS made but is not recorded")
	assert.Contains(t, err.Error(), "cordon audit-lost (succeeded)")
	assert.Contains(t, err.Error(), path)
	var notices []string
	for _, ev := range rec.of("audit-lost", event.StepLog) {
		notices = append(notices, ev.Message)
	}
	assert.Contains(t, notices[len(notices)-1], "audit log not written", "said as it happened too")

	kept, err := actions.ReadAudit(path + ".kept")
	require.NoError(t, err)
	require.Len(t, kept, 1, "only the intent")
	assert.Equal(t, actions.Intended, kept[0].Outcome)
	assert.Equal(t, lost.Run, kept[0].Run)
}

// TestUnauditedErrorKeepsTheRunsError: a run that failed and lost its record reports both.
func TestUnauditedErrorKeepsTheRunsError(t *testing.T) {
	a := &actions.UnauditedError{WriteErr: errors.New("file too large"), Err: context.Canceled}
	assert.ErrorIs(t, a, context.Canceled, "the run's own error is kept")
	assert.Contains(t, a.Error(), "context canceled; and the change WAS made but is not recorded")
}
