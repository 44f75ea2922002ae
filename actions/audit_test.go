package actions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// quietChange is a change whose handler reports what it is told to (events), then returns err: the audit
// point's records of a run that does not finish its targets.
type quietChange struct {
	events []event.Event
	err    error
}

func (quietChange) Action() string       { return "cordon" }
func (quietChange) Targets() []string    { return []string{"n"} }
func (quietChange) Title() string        { return "cordon n" }
func (quietChange) Audit() request.Audit { return request.Audit{Changes: true, Options: "quiet"} }

func init() {
	actions.Register(func(_ context.Context, _ actions.Backends, req quietChange, sink event.Sink) error {
		for _, e := range req.events {
			sink.Emit(e)
		}
		return req.err
	})
}

// intend writes an intent record to the log at path, as the Runner does before a change starts.
func intend(path string) error {
	return actions.Runner{Backends: actions.Backends{Audit: &actions.AuditLog{Path: path}}}.Run(context.Background(), quietChange{}, &actiontest.Recorder{})
}

// TestEveryIntentGetsAnOutcome: a run that finished no target still records how it ended, so an intent
// alone in the log always means a run that never ended: for the run as a whole when it reported nothing,
// or for the target it reported on (its running step interrupted).
func TestEveryIntentGetsAnOutcome(t *testing.T) {
	started := event.Event{Time: time.Now(), Action: "cordon", Target: "n", Kind: event.StepStarted, Step: "cordon"}
	for _, tc := range []struct {
		name  string
		req   quietChange
		want  event.Outcome
		steps []actions.AuditStep
	}{
		{"nothing reported, succeeded", quietChange{}, event.Succeeded, []actions.AuditStep{}},
		{"nothing reported, failed", quietChange{err: errors.New("no cluster here")}, event.Failed, []actions.AuditStep{}},
		{"a step started, cancelled", quietChange{events: []event.Event{started}, err: context.Canceled}, event.Cancelled,
			[]actions.AuditStep{{Step: "cordon", Outcome: "interrupted"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.log")
			err := actions.Runner{Backends: actions.Backends{Audit: &actions.AuditLog{Path: path}}}.Run(context.Background(), tc.req, &actiontest.Recorder{})
			assert.Equal(t, tc.req.err, err)
			all, err := actions.ReadAuditFile(path)
			require.NoError(t, err)
			require.Len(t, all, 2, "the intent, then the outcome")
			assert.Equal(t, actions.Intended, all[0].Outcome)
			got := all[1]
			assert.Equal(t, all[0].Run, got.Run)
			assert.Equal(t, tc.want, got.Outcome)
			assert.Equal(t, "cordon", got.Action)
			assert.Equal(t, "n", got.Node)
			assert.Equal(t, "quiet", got.Options)
			for i := range got.Steps {
				got.Steps[i].Duration = 0
			}
			assert.Equal(t, tc.steps, got.Steps)
			if tc.req.err != nil {
				assert.Equal(t, tc.req.err.Error(), got.Message)
			}
		})
	}
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
	e := actiontest.NewEnv(t)
	e.Node("audit-intent", "127.0.0.144", false)
	path := filepath.Join(t.TempDir(), "audit.log")
	rec := &actiontest.Recorder{}
	var atStart []actions.AuditRecord
	rec.OnEvent = func(ev event.Event) {
		if ev.Kind == event.StepStarted && atStart == nil {
			atStart, _ = actions.ReadAuditFile(path)
		}
	}
	run := actions.Runner{Backends: actions.Backends{Cluster: e.Ops, Audit: &actions.AuditLog{Path: path}}}
	require.NoError(t, run.Run(e.Ctx, request.Cordon{Nodes: []string{"audit-intent"}}, rec))

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
	e := actiontest.NewEnv(t)
	e.Node("audit-lost", "127.0.0.145", false)
	path := filepath.Join(t.TempDir(), "audit.log")
	rec := &actiontest.Recorder{}
	var moved bool
	rec.OnEvent = func(ev event.Event) { // the sink sees Finished just before its record is written
		if ev.Kind == event.Finished && !moved {
			moved = true
			assert.NoError(t, os.Rename(path, path+".kept"))
			assert.NoError(t, os.Mkdir(path, 0o700))
		}
	}
	run := actions.Runner{Backends: actions.Backends{Cluster: e.Ops, Audit: &actions.AuditLog{Path: path}}}
	err := run.Run(e.Ctx, request.Cordon{Nodes: []string{"audit-lost"}}, rec)

	var lost *actions.UnauditedError
	require.ErrorAs(t, err, &lost)
	assert.True(t, e.NodeInfo("audit-lost").Unschedulable, "the change was made")
	assert.Contains(t, err.Error(), "the change WAS made but is not recorded")
	assert.Contains(t, err.Error(), "cordon audit-lost (succeeded)")
	assert.Contains(t, err.Error(), path)
	var notices []string
	for _, ev := range rec.Of("audit-lost", event.StepLog) {
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
