// Package diagnosis is the vocabulary of a node's triage: checks, their status, and the report that
// lists them likeliest cause first. Package actions runs the checks; the health view and the headless
// printer show the report. It imports neither client-go nor SSH nor Bubble Tea.
package diagnosis

import (
	"fmt"
	"sort"
	"time"
)

// CheckStatus is how one triage check came out.
type CheckStatus string

// The statuses, from worst to best; a report lists its checks in this order.
const (
	CheckFail    CheckStatus = "fail"    // this is (or causes) a problem
	CheckWarn    CheckStatus = "warn"    // worth a look, or a problem in the making
	CheckUnknown CheckStatus = "unknown" // could not be checked (host unreachable, API denied)
	CheckOK      CheckStatus = "ok"
)

// Severity orders statuses from worst (0) to best.
func (s CheckStatus) Severity() int {
	switch s {
	case CheckFail:
		return 0
	case CheckWarn:
		return 1
	case CheckUnknown:
		return 2
	}
	return 3
}

// Check is one finding of a triage: what was looked at, how it is, why, and what to do.
type Check struct {
	ID       string      `json:"id"` // stable: "host-ssh", "service:kubelet", "node-ready", ...
	Title    string      `json:"title"`
	Status   CheckStatus `json:"status"`
	Detail   string      `json:"detail"`
	Fix      string      `json:"fix,omitempty"` // what to do; set whenever Status is not ok
	Evidence []string    `json:"evidence,omitempty"`
	// Service is the WMCO service the check is about (its log can be tailed); Restartable says it is
	// installed but not running, so starting it is the fix.
	Service     string `json:"service,omitempty"`
	Restartable bool   `json:"restartable,omitempty"`

	// Rank is the likelihood of being the cause: lower comes first among checks of the same status.
	Rank int `json:"-"`
}

// Report is the triage of one node (Node), or the prerequisite doctor's report on a cluster (Cluster): its
// checks, likeliest cause first.
type Report struct {
	Node    string    `json:"node,omitempty"`
	Cluster string    `json:"cluster,omitempty"`
	Time    time.Time `json:"time"`
	Checks  []Check   `json:"checks"`
}

// Healthy reports whether no check failed.
func (r Report) Healthy() bool { return r.Count(CheckFail) == 0 }

// Count is the number of checks with status s.
func (r Report) Count(s CheckStatus) int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == s {
			n++
		}
	}
	return n
}

// Check returns the check with that ID.
func (r Report) Check(id string) (Check, bool) {
	for _, c := range r.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}

// Index is the position of the check with that ID, -1 when absent.
func (r Report) Index(id string) int {
	for i, c := range r.Checks {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// Summary is one line: "2 failing, 1 warning, 12 ok".
func (r Report) Summary() string {
	s := fmt.Sprintf("%d failing, %d warning", r.Count(CheckFail), r.Count(CheckWarn))
	if n := r.Count(CheckUnknown); n > 0 {
		s += fmt.Sprintf(", %d unknown", n)
	}
	return s + fmt.Sprintf(", %d ok", r.Count(CheckOK))
}

// Sort orders checks by status (fail, warn, unknown, ok), then likelihood, then ID for stability.
func Sort(cs []Check) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.Status.Severity() != b.Status.Severity() {
			return a.Status.Severity() < b.Status.Severity()
		}
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		return a.ID < b.ID
	})
}
