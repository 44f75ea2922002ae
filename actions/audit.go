package actions

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wmcon/wmcon/actions/event"
)

// AuditEnv overrides the audit log's path (tests, or a shared location).
const AuditEnv = "WMCON_AUDIT_LOG"

// AuditLog is the local record of the changes wmcon made: one JSON object per line, appended.
type AuditLog struct {
	Path string
	// Fixed is a log the backend chose (the demo's private one): $WMCON_AUDIT_LOG does not move it, so no
	// hint offers that.
	Fixed bool
	mu    sync.Mutex
}

// remedy says what makes the log writable again, offering $WMCON_AUDIT_LOG only where it applies.
func (l *AuditLog) remedy() string {
	if l != nil && l.Fixed {
		return "free disk space or raise the file-size limit (ulimit -f)"
	}
	return "free disk space, raise the file-size limit (ulimit -f), or set " + AuditEnv + " to a writable file"
}

// DefaultAuditPath is $WMCON_AUDIT_LOG, else $XDG_STATE_HOME/wmcon/audit.log, else
// ~/.local/state/wmcon/audit.log.
func DefaultAuditPath() (string, error) {
	if p := os.Getenv(AuditEnv); p != "" {
		return p, nil
	}
	return StateAuditPath()
}

// StateAuditPath is the audit log's place when nothing names one: $XDG_STATE_HOME/wmcon/audit.log, else
// ~/.local/state/wmcon/audit.log.
func StateAuditPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "wmcon", "audit.log"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the audit log: set %s or XDG_STATE_HOME: %w", AuditEnv, err)
	}
	return filepath.Join(home, ".local", "state", "wmcon", "audit.log"), nil
}

// DefaultAuditLog is the audit log at DefaultAuditPath.
func DefaultAuditLog() (*AuditLog, error) {
	p, err := DefaultAuditPath()
	if err != nil {
		return nil, err
	}
	return &AuditLog{Path: p}, nil
}

// AuditCluster names the cluster a change was made to.
type AuditCluster struct {
	Server         string `json:"server"`                   // the API server URL, its userinfo redacted
	Context        string `json:"context,omitempty"`        // the kubeconfig context ("demo" for the demo)
	Infrastructure string `json:"infrastructure,omitempty"` // the Infrastructure object's name, when known
}

// AuditRecord is one action on one node (or one object of the cluster), or the intent of a run: what it
// was about to change, written before it changed anything (Outcome Intended).
type AuditRecord struct {
	Time      time.Time    `json:"time"` // when the action started
	User      string       `json:"user"` // who the cluster knows (kubeconfig user), else the local user
	LocalUser string       `json:"localUser,omitempty"`
	Cluster   AuditCluster `json:"cluster"`
	// Run ties a run's intent record to the records of its outcome: an intent whose run has no outcome
	// record is a change that started and whose end was never recorded.
	Run      string        `json:"run,omitempty"`
	Action   string        `json:"action"`
	Node     string        `json:"node"`
	Targets  []string      `json:"targets,omitempty"` // an intent's nodes or objects, when the run names them
	Options  string        `json:"options,omitempty"` // drain options and limits, as flags
	Steps    []AuditStep   `json:"steps"`
	Outcome  event.Outcome `json:"outcome"`
	Message  string        `json:"message,omitempty"`
	Hint     string        `json:"hint,omitempty"`
	Duration float64       `json:"durationSeconds"`
	Answers  []string      `json:"answers,omitempty"` // questions asked and the answers given
}

// AuditStep is one step of an audited action.
type AuditStep struct {
	Step     string  `json:"step"`
	Outcome  string  `json:"outcome"` // done, failed, interrupted
	Duration float64 `json:"durationSeconds"`
	Message  string  `json:"message,omitempty"`
	Error    string  `json:"error,omitempty"`
}

// Intended is the outcome of an intent record: the run was about to change something.
const Intended event.Outcome = "intended"

// Append writes one record as a line, creating the file (0600) and its directory (0700) as needed. A
// write that fails part-way (a full disk, the file-size limit) is taken back, so a torn line never spoils
// the records before or after it.
func (l *AuditLog) Append(rec AuditRecord) error {
	if l == nil || l.Path == "" {
		return errors.New("no audit log path")
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := l.open()
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("read the audit log %s: %w", l.Path, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		_ = f.Truncate(fi.Size())
		f.Close()
		return fmt.Errorf("write the audit log %s: %w", l.Path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the audit log %s: %w", l.Path, err)
	}
	return nil
}

// open opens the log for appending, creating it and its directory, and makes it 0600 even when it existed
// with wider permissions: it names nodes, users and clusters. Only a regular file will do: a FIFO would
// block the open, and a device (/dev/null) would swallow the records or have its own mode changed.
func (l *AuditLog) open() (*os.File, error) {
	if fi, err := os.Stat(l.Path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("the audit log %s is not a regular file", l.Path)
	}
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		return nil, fmt.Errorf("create the audit log's directory: %w", err)
	}
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the audit log %s: %w", l.Path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() { // replaced since the check above
		f.Close()
		return nil, fmt.Errorf("the audit log %s is not a regular file", l.Path)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("make the audit log %s private (0600): %w", l.Path, err)
	}
	return f, nil
}

// ReadAudit reads what an audit log says happened: every outcome record, and the intent record of each
// run that has no outcome record (a change that started and whose end was never recorded). The intents
// of runs that recorded their outcome are left out; ReadAuditFile returns every line.
func ReadAudit(path string) ([]AuditRecord, error) {
	all, err := ReadAuditFile(path)
	ended := map[string]bool{}
	for _, r := range all {
		if r.Outcome != Intended && r.Run != "" {
			ended[r.Run] = true
		}
	}
	out := make([]AuditRecord, 0, len(all))
	for _, r := range all {
		if r.Outcome != Intended || !ended[r.Run] {
			out = append(out, r)
		}
	}
	return out, err
}

// ReadAuditFile reads every record of an audit log file, intents included.
func ReadAuditFile(path string) ([]AuditRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []AuditRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var r AuditRecord
		if err := dec.Decode(&r); err != nil {
			return out, fmt.Errorf("audit log %s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// auditIntent is what a run is about to change, as its intent record says before anything changes.
type auditIntent struct {
	Action  string   // the request's action ("cordon")
	Targets []string // the nodes or objects, when known
	Options string   // as the records show them (request.Audit)
}

// newRunID names one audited run in its records.
func newRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// UnauditedError is a run that changed something whose record could not be written: the change was made
// but the audit log does not say how it ended. Its intent record, written before the change, is there.
type UnauditedError struct {
	Log      string
	Remedy   string // what makes the log writable again ("" = the default log's)
	Run      string
	Records  []AuditRecord // the records that could not be written
	WriteErr error         // why the first of them could not
	Err      error         // the run's own error; nil when it succeeded
}

func (e *UnauditedError) Error() string {
	var what []string
	for _, r := range e.Records {
		what = append(what, fmt.Sprintf("%s %s (%s)", r.Action, r.Node, r.Outcome))
	}
	msg := fmt.Sprintf("the change WAS made but is not recorded: the audit record of %s could not be written (%v); "+
		"only its intent (run %s) is in %s. Note what was done yourself, and fix the audit log (%s) before the next change",
		strings.Join(what, ", "), e.WriteErr, e.Run, e.Log, cmp.Or(e.Remedy, (*AuditLog)(nil).remedy()))
	if e.Err != nil {
		return e.Err.Error() + "; and " + msg
	}
	return msg
}

func (e *UnauditedError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.WriteErr}
	}
	return []error{e.Err, e.WriteErr}
}

// LocalUser is the name of the user running wmcon ($USER, else the account's name).
func LocalUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// Auditor wraps a sink and writes one audit record per action and target when the action finishes.
// Events pass through unchanged. Safe for concurrent use.
type Auditor struct {
	Sink    event.Sink
	Log     *AuditLog
	User    string // the cluster identity; "" = the local user
	Cluster AuditCluster
	Options string
	Run     string // the run's id in its records ("" = none)
	// Failed is told when a record could not be written (Result then reports it).
	Failed func(target string, err error)

	mu       sync.Mutex
	intent   *auditIntent // what the run said it would change; nil when it wrote no intent
	open     map[string]*auditState
	ended    int // outcome records written or lost
	lost     []AuditRecord
	writeErr error
}

// intend writes the run's intent record: before anything changes, so a change whose outcome record is
// lost still left a trace, and a log that cannot take even this refuses the change.
func (a *Auditor) intend(in auditIntent) error {
	a.intent = &in
	local := LocalUser()
	who := a.User
	if who == "" {
		who = local
	}
	return a.Log.Append(AuditRecord{Time: time.Now(), User: who, LocalUser: local, Cluster: a.Cluster, Run: a.Run,
		Action: in.Action, Targets: in.Targets, Options: in.Options, Steps: []AuditStep{}, Outcome: Intended})
}

// Result is how an audited run ended: err, the run's own error, unless a record of the run could not be
// written; then an *UnauditedError, which says the change was made but not recorded (and wraps err). A run
// that recorded no outcome (it stopped before finishing any target, or had nothing to do) gets one here.
func (a *Auditor) Result(err error) error {
	a.endUnrecorded(err)
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.lost) == 0 {
		return err
	}
	return &UnauditedError{Log: a.Log.Path, Remedy: a.Log.remedy(), Run: a.Run, Records: append([]AuditRecord(nil), a.lost...), WriteErr: a.writeErr, Err: err}
}

// endUnrecorded writes the outcome of a run that wrote an intent record and no outcome record, as err
// says the run ended: one record per target it reported on, or one for the run as its intent named it.
// Every intent is then followed by an outcome, and an intent alone means a run that never ended.
func (a *Auditor) endUnrecorded(err error) {
	a.mu.Lock()
	if a.intent == nil || a.ended > 0 {
		a.mu.Unlock()
		return
	}
	outcome, msg := event.Succeeded, "done"
	switch {
	case errors.Is(err, context.Canceled):
		outcome, msg = event.Cancelled, err.Error()
	case err != nil:
		outcome, msg = event.Failed, err.Error()
	}
	now := time.Now()
	var recs []AuditRecord
	for k, st := range a.open {
		recs = append(recs, st.end(now, outcome, msg, ""))
		delete(a.open, k)
	}
	if len(recs) == 0 {
		local := LocalUser()
		who := a.User
		if who == "" {
			who = local
		}
		recs = append(recs, AuditRecord{Time: now, User: who, LocalUser: local, Cluster: a.Cluster, Run: a.Run, Action: a.intent.Action,
			Node: strings.Join(a.intent.Targets, ", "), Targets: a.intent.Targets, Options: a.Options, Steps: []AuditStep{}, Outcome: outcome, Message: msg})
	}
	a.mu.Unlock()
	for _, rec := range recs {
		a.write(rec)
	}
}

// write appends rec, keeping it for Result when it cannot be written.
func (a *Auditor) write(rec AuditRecord) {
	if a.Log == nil {
		return
	}
	err := a.Log.Append(rec)
	a.mu.Lock()
	a.ended++
	if err != nil {
		a.lost = append(a.lost, rec)
		if a.writeErr == nil {
			a.writeErr = err
		}
	}
	a.mu.Unlock()
	if err != nil && a.Failed != nil {
		a.Failed(rec.Node, err)
	}
}

type auditState struct {
	rec   AuditRecord
	start map[string]time.Time // running steps
}

func (a *Auditor) key(action, target string) string { return action + "\x00" + target }

// Emit records e, passes it on, and appends the record when e finishes the action.
func (a *Auditor) Emit(e event.Event) {
	var done *AuditRecord
	a.mu.Lock()
	if a.open == nil {
		a.open = map[string]*auditState{}
	}
	k := a.key(e.Action, e.Target)
	st := a.open[k]
	if st == nil {
		local := LocalUser()
		who := a.User
		if who == "" {
			who = local
		}
		st = &auditState{rec: AuditRecord{Time: e.Time, User: who, LocalUser: local, Cluster: a.Cluster, Run: a.Run, Action: e.Action,
			Node: e.Target, Options: a.Options, Steps: []AuditStep{}}, start: map[string]time.Time{}}
		a.open[k] = st
	}
	switch e.Kind {
	case event.StepStarted:
		st.start[e.Step] = e.Time
	case event.StepDone, event.StepFailed:
		s := AuditStep{Step: e.Step, Outcome: "done", Message: e.Message}
		if e.Kind == event.StepFailed {
			s.Outcome, s.Error = "failed", e.Err
		}
		if t, ok := st.start[e.Step]; ok {
			s.Duration = e.Time.Sub(t).Seconds()
			delete(st.start, e.Step)
		}
		st.rec.Steps = append(st.rec.Steps, s)
	case event.Finished:
		rec := st.end(e.Time, e.Outcome, e.Message, e.Hint)
		done = &rec
		delete(a.open, k)
	}
	a.mu.Unlock()
	if e.Kind == event.Finished && a.Log != nil {
		e.Audit = a.Log.Path
	}
	a.Sink.Emit(e)
	if done != nil {
		a.write(*done)
	}
}

// end is the record of the action on its target, ended at t: steps still running were interrupted.
func (st *auditState) end(t time.Time, o event.Outcome, msg, hint string) AuditRecord {
	for step, started := range st.start {
		st.rec.Steps = append(st.rec.Steps, AuditStep{Step: step, Outcome: "interrupted", Duration: t.Sub(started).Seconds()})
	}
	st.rec.Outcome, st.rec.Message, st.rec.Hint = o, msg, hint
	st.rec.Duration = t.Sub(st.rec.Time).Seconds()
	return st.rec
}

// Ask passes the question on and records the answer.
func (a *Auditor) Ask(ctx context.Context, q event.Question) (string, error) {
	ans, err := a.Sink.Ask(ctx, q)
	a.mu.Lock()
	if st := a.open[a.key(q.Action, q.Target)]; st != nil {
		if err != nil {
			st.rec.Answers = append(st.rec.Answers, fmt.Sprintf("%s → no answer (%v)", q.Title, err))
		} else {
			st.rec.Answers = append(st.rec.Answers, fmt.Sprintf("%s → %s", q.Title, ans))
		}
	}
	a.mu.Unlock()
	return ans, err
}
