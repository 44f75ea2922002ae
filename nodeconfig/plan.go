package nodeconfig

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/wmcon/wmcon/model"
)

// Observed is what the host reports about the paths and services the desired state names.
type Observed struct {
	Dirs     map[string]bool   // lower-case Windows path → exists
	Hashes   map[string]string // lower-case Windows path → SHA-256 (any case); absent = no such file
	Services map[string]ObservedService
	Env      map[string]string // machine environment variables named by the desired state
	// RegistryFiles are the entries found in RegistriesDir (Windows paths).
	RegistryFiles []string
}

// ObservedService is an installed service.
type ObservedService struct {
	State     string // Running, Stopped, StartPending, StopPending
	BinPath   string
	DependsOn []string
}

// EnvChange sets (or, with an empty Value, removes) a machine environment variable.
type EnvChange struct {
	Name  string
	Value string
}

// MarshalJSON shows the value masked (a proxy URL may carry a password), as the printed plan does.
func (e EnvChange) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct{ Name, Value string }{e.Name, model.RedactURL(e.Value)})
}

// Plan is what must change on a host to reach a desired state, in the order it must happen. An empty
// plan means the host is configured.
type Plan struct {
	Host           Host
	MakeDirs       []string
	Payload        []File // to send: missing or different on the host
	Config         []File
	RemoveRegistry []string    // stale entries of the registries directory
	Env            []EnvChange // machine environment (proxy); services see it after a reboot
	// Stop is the running services to stop before the payload is sent, dependents first: those to be
	// recreated, those whose executables are replaced (Windows refuses to replace a running program's
	// file), and everything that depends on them. They start again with Start.
	Stop     []string
	Recreate []string  // installed with another command line or dependencies: delete, then create
	Create   []Service // in start order (includes the recreated ones)
	Start    []string  // every desired service not running after Create, in start order
	Services []Service // all desired services, in start order
	UpToDate Counts    // what already matches
}

// Counts is how many directories, files and services already match.
type Counts struct{ Dirs, Files, Services int }

// Empty reports whether the host already matches: nothing to write, create or start.
func (p Plan) Empty() bool {
	return len(p.MakeDirs)+len(p.Payload)+len(p.Config)+len(p.RemoveRegistry)+len(p.Env)+
		len(p.Stop)+len(p.Recreate)+len(p.Create)+len(p.Start) == 0
}

// PayloadBytes is the size of the payload files to send.
func (p Plan) PayloadBytes() int64 {
	var n int64
	for _, f := range p.Payload {
		n += f.Size
	}
	return n
}

// Diff compares the desired state with what the host reports.
func Diff(want State, got Observed) Plan {
	p := Plan{Host: want.Host, Services: want.Services}
	for _, d := range want.Dirs {
		if got.Dirs[strings.ToLower(d)] {
			p.UpToDate.Dirs++
			continue
		}
		p.MakeDirs = append(p.MakeDirs, d)
	}
	for _, f := range want.Files {
		if strings.EqualFold(got.Hashes[strings.ToLower(f.Path)], f.SHA256) {
			p.UpToDate.Files++
			continue
		}
		if f.Kind == PayloadKind {
			p.Payload = append(p.Payload, f)
		} else {
			p.Config = append(p.Config, f)
		}
	}
	for _, r := range got.RegistryFiles {
		if !want.RegistryFiles[strings.ToLower(r)] {
			p.RemoveRegistry = append(p.RemoveRegistry, r)
		}
	}
	sort.Strings(p.RemoveRegistry)
	p.Env = envChanges(want.Env, got.Env)
	diffServices(&p, want.Services, got.Services)
	return p
}

// Images are the executables a service's command line runs: the program, and under kube-log-runner.exe
// also the program it starts. Both stay locked while the service runs.
func Images(binPath string) []string {
	words := strings.Fields(binPath)
	if len(words) == 0 {
		return nil
	}
	out := []string{words[0]}
	if strings.EqualFold(baseName(words[0]), "kube-log-runner.exe") {
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") {
				return append(out, w)
			}
		}
	}
	return out
}

func baseName(winPath string) string { return winPath[strings.LastIndex(winPath, `\`)+1:] }

// replacesImage reports whether the payload replaces one of a service's executables.
func replacesImage(s Service, payload []File) bool {
	for _, img := range Images(s.BinPath) {
		for _, f := range payload {
			if strings.EqualFold(f.Path, img) {
				return true
			}
		}
	}
	return false
}

func envChanges(want, got map[string]string) []EnvChange {
	var out []EnvChange
	for name, v := range want {
		if got[name] != v {
			out = append(out, EnvChange{Name: name, Value: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func diffServices(p *Plan, want []Service, got map[string]ObservedService) {
	installed := func(name string) (ObservedService, bool) {
		for n, s := range got {
			if strings.EqualFold(n, name) {
				return s, true
			}
		}
		return ObservedService{}, false
	}
	recreate, stop := map[string]bool{}, map[string]bool{}
	for _, s := range want {
		o, ok := installed(s.Name)
		switch {
		case !ok:
			p.Create = append(p.Create, s)
		case !sameCommand(o, s) || o.State == "Stopped":
			// A stopped service is recreated too: a run cut between sc.exe create and sc.exe failure leaves
			// one without its recovery actions or description, and sc.exe qc does not show them.
			recreate[s.Name], stop[s.Name] = true, true
			p.Recreate = append(p.Recreate, s.Name)
			p.Create = append(p.Create, s)
		case replacesImage(s, p.Payload):
			stop[s.Name] = true
		}
	}
	p.Stop = stopOrder(want, stop, got)
	for _, s := range want {
		o, ok := installed(s.Name)
		if ok && !recreate[s.Name] && !slices.Contains(p.Stop, s.Name) && o.State == "Running" {
			p.UpToDate.Services++
			continue
		}
		p.Start = append(p.Start, s.Name)
	}
}

func sameCommand(o ObservedService, s Service) bool {
	if !strings.EqualFold(strings.TrimSpace(o.BinPath), s.BinPath) {
		return false
	}
	a, b := lowerSorted(o.DependsOn), lowerSorted(s.DependsOn)
	return slices.Equal(a, b)
}

func lowerSorted(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		out = append(out, strings.ToLower(s))
	}
	sort.Strings(out)
	return out
}

// stopOrder is the running services that must stop: each of seed and everything that (transitively)
// depends on it, dependents first.
func stopOrder(want []Service, seed map[string]bool, got map[string]ObservedService) []string {
	affected := map[string]bool{}
	for n := range seed {
		affected[n] = true
	}
	for changed := true; changed; {
		changed = false
		for _, s := range want {
			for _, d := range s.DependsOn {
				if affected[d] && !affected[s.Name] {
					affected[s.Name], changed = true, true
				}
			}
		}
	}
	var out []string
	for i := len(want) - 1; i >= 0; i-- {
		n := want[i].Name
		if o, ok := got[n]; affected[n] && ok && o.State != "Stopped" {
			out = append(out, n)
		}
	}
	return out
}
