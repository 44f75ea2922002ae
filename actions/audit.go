package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"time"

	"github.com/wmcon/wmcon/actions/event"
)

// AuditEnv overrides the audit log's path (tests, or a shared location).
const AuditEnv = "WMCON_AUDIT_LOG"

// AuditLog is the local record of the changes wmcon made: one JSON object per line, appended.
type AuditLog struct {
	Path string
	mu   sync.Mutex
}

// DefaultAuditPath is $WMCON_AUDIT_LOG, else $XDG_STATE_HOME/wmcon/audit.log, else
// ~/.local/state/wmcon/audit.log.
func DefaultAuditPath() (string, error) {
	if p := os.Getenv(AuditEnv); p != "" {
		return p, nil
	}
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

// AuditRecord is one action on one node (or one object of the cluster).
type AuditRecord struct {
	Time      time.Time     `json:"time"` // when the action started
	User      string        `json:"user"` // who the cluster knows (kubeconfig user), else the local user
	LocalUser string        `json:"localUser,omitempty"`
	Cluster   AuditCluster  `json:"cluster"`
	Action    string        `json:"action"`
	Node      string        `json:"node"`
	Options   string        `json:"options,omitempty"` // drain options and limits, as flags
	Steps     []AuditStep   `json:"steps"`
	Outcome   event.Outcome `json:"outcome"`
	Message   string        `json:"message,omitempty"`
	Hint      string        `json:"hint,omitempty"`
	Duration  float64       `json:"durationSeconds"`
	Answers   []string      `json:"answers,omitempty"` // questions asked and the answers given
}

// AuditStep is one step of an audited action.
type AuditStep struct {
	Step     string  `json:"step"`
	Outcome  string  `json:"outcome"` // done, failed, interrupted
	Duration float64 `json:"durationSeconds"`
	Message  string  `json:"message,omitempty"`
	Error    string  `json:"error,omitempty"`
}

// Append writes one record as a line, creating the file (0600) and its directory (0700) as needed.
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
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write the audit log %s: %w", l.Path, err)
	}
	return f.Close()
}

// open opens the log for appending, creating it and its directory, and makes it 0600 even when it existed
// with wider permissions: it names nodes, users and clusters.
func (l *AuditLog) open() (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		return nil, fmt.Errorf("create the audit log's directory: %w", err)
	}
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the audit log %s: %w", l.Path, err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("make the audit log %s private (0600): %w", l.Path, err)
	}
	return f, nil
}

// Check makes sure records can be appended, before a change starts: a change that cannot be audited is
// refused rather than reported unaudited afterwards.
func (l *AuditLog) Check() error {
	if l == nil || l.Path == "" {
		return errors.New("no audit log path")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := l.open()
	if err != nil {
		return fmt.Errorf("%w: refusing to change anything that cannot be audited (set %s to a writable file)", err, AuditEnv)
	}
	return f.Close()
}

// ReadAudit reads every record of an audit log file.
func ReadAudit(path string) ([]AuditRecord, error) {
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
	// Failed is told when a record could not be written (the action itself is not failed for it).
	Failed func(target string, err error)

	mu   sync.Mutex
	open map[string]*auditState
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
		st = &auditState{rec: AuditRecord{Time: e.Time, User: who, LocalUser: local, Cluster: a.Cluster, Action: e.Action,
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
		for step, t := range st.start { // never finished: interrupted
			st.rec.Steps = append(st.rec.Steps, AuditStep{Step: step, Outcome: "interrupted", Duration: e.Time.Sub(t).Seconds()})
		}
		st.rec.Outcome, st.rec.Message, st.rec.Hint = e.Outcome, e.Message, e.Hint
		st.rec.Duration = e.Time.Sub(st.rec.Time).Seconds()
		rec := st.rec
		done = &rec
		delete(a.open, k)
	}
	a.mu.Unlock()
	a.Sink.Emit(e)
	if done != nil && a.Log != nil {
		if err := a.Log.Append(*done); err != nil && a.Failed != nil {
			a.Failed(e.Target, err)
		}
	}
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
