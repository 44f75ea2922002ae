// Package conformance holds what the conformance tests share: the differences they find between what wmcon
// writes and what WMCO 11's own code writes for the same inputs (testdata/wmco-11), and the one allowlist of
// the differences wmcon makes on purpose (testdata/wmco-11/allowlist.yaml), each with its reason. Only tests
// import it.
package conformance

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Difference is one field where wmcon's output and WMCO's differ.
type Difference struct {
	Artifact string // what was compared: services/aws, kubelet.conf, userdata/azure, …
	Field    string // where in it: services[kubelet].path, authentication.webhook, …
	WMCO     string // WMCO's value ("" = absent)
	Wmcon    string // wmcon's value ("" = absent)
}

func (d Difference) String() string {
	return fmt.Sprintf("%s %s:\n  WMCO:  %s\n  wmcon: %s", d.Artifact, d.Field, orAbsent(d.WMCO), orAbsent(d.Wmcon))
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

// Entry is one allowed difference: an artifact (a path.Match pattern, so userdata/* covers every platform)
// and a field, with why wmcon differs.
type Entry struct {
	Artifact string `json:"artifact"`
	Field    string `json:"field"`
	Reason   string `json:"reason"`
}

func (e Entry) matches(d Difference) bool {
	ok, err := path.Match(e.Artifact, d.Artifact)
	return err == nil && ok && e.Field == d.Field
}

// Dir is testdata/wmco-11 in the repository, found from this file so tests of any package can read it.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "wmco-11")
}

// Allowlist reads testdata/wmco-11/allowlist.yaml.
func Allowlist() ([]Entry, error) {
	b, err := os.ReadFile(filepath.Join(Dir(), "allowlist.yaml"))
	if err != nil {
		return nil, err
	}
	var list struct {
		Differences []Entry `json:"differences"`
	}
	if err := yaml.UnmarshalStrict(b, &list); err != nil {
		return nil, fmt.Errorf("allowlist.yaml: %w", err)
	}
	for i, e := range list.Differences {
		if e.Artifact == "" || e.Field == "" || strings.TrimSpace(e.Reason) == "" {
			return nil, fmt.Errorf("allowlist.yaml: differences[%d] needs an artifact, a field and a reason", i)
		}
		if _, err := path.Match(e.Artifact, ""); err != nil {
			return nil, fmt.Errorf("allowlist.yaml: differences[%d]: artifact %q: %w", i, e.Artifact, err)
		}
	}
	return list.Differences, nil
}

// Judge sorts the differences found in the artifacts compared (patterns, as in an Entry) into those no entry
// allows, and the entries for those artifacts that allow no difference found (stale: wmcon or WMCO changed,
// so the entry must go).
func Judge(entries []Entry, compared []string, found []Difference) (unlisted []Difference, stale []Entry) {
	used := make([]bool, len(entries))
	for _, d := range found {
		allowed := false
		for i, e := range entries {
			if e.matches(d) {
				used[i], allowed = true, true
			}
		}
		if !allowed {
			unlisted = append(unlisted, d)
		}
	}
	for i, e := range entries {
		if !used[i] && coversCompared(e, compared) {
			stale = append(stale, e)
		}
	}
	sort.Slice(unlisted, func(i, j int) bool { return unlisted[i].String() < unlisted[j].String() })
	return unlisted, stale
}

// coversCompared reports whether the entry is about one of the artifacts compared.
func coversCompared(e Entry, compared []string) bool {
	for _, c := range compared {
		if ok, _ := path.Match(e.Artifact, c); ok {
			return true
		}
	}
	return false
}
