package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// Artifacts lists every artifact testdata/wmco-11 holds, named as Differences name them.
func Artifacts() ([]string, error) {
	out := []string{"containerd_conf.toml", "kubelet.conf", "network-conf/cni.conf", "network-conf/kube-proxy.conf"}
	for _, g := range []struct{ dir, prefix, ext string }{{"services", "services-", ".json"}, {"userdata", "userdata-", ".txt"}} {
		files, err := filepath.Glob(filepath.Join(Dir(), g.dir, g.prefix+"*"+g.ext))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			out = append(out, g.dir+"/"+strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), g.prefix), g.ext))
		}
	}
	sort.Strings(out)
	return out, nil
}

// ReadServices reads WMCO's services ConfigMap data for one of services/<name>.json.
func ReadServices(name string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(Dir(), "services", "services-"+name+".json"))
	if err != nil {
		return nil, err
	}
	var data map[string]string
	if err := json.Unmarshal(b, &data); err != nil {
		return nil, fmt.Errorf("services-%s.json: %w", name, err)
	}
	return data, nil
}

// CompareContracts compares two services contracts field by field: the services (matched by name, and their
// order), each service's command, variables, pre-scripts, dependencies, bootstrap flag and priority; the files;
// the environment.
func CompareContracts(artifact string, wmco, wmcon contract.Data) []Difference {
	var out []Difference
	add := func(field string, a, b any) {
		as, bs := show(a), show(b)
		if as != bs {
			out = append(out, Difference{Artifact: artifact, Field: field, WMCO: as, Wmcon: bs})
		}
	}
	add("services (order)", serviceNames(wmco.Services), serviceNames(wmcon.Services))
	theirs := map[string]contract.Service{}
	for _, s := range wmcon.Services {
		theirs[s.Name] = s
	}
	for _, a := range wmco.Services {
		b, ok := theirs[a.Name]
		if !ok {
			continue // the order line names it
		}
		at := "services[" + a.Name + "]."
		add(at+"path", a.Command, b.Command)
		add(at+"nodeVariablesInCommand", a.NodeVariablesInCommand, b.NodeVariablesInCommand)
		add(at+"powershellPreScripts", a.PowershellPreScripts, b.PowershellPreScripts)
		add(at+"dependencies", a.Dependencies, b.Dependencies)
		add(at+"bootstrap", a.Bootstrap, b.Bootstrap)
		add(at+"priority", a.Priority, b.Priority)
	}
	add("files", wmco.Files, wmcon.Files)
	add("environmentVars", wmco.EnvironmentVars, wmcon.EnvironmentVars)
	add("watchedEnvironmentVars", wmco.WatchedEnvironmentVars, wmcon.WatchedEnvironmentVars)
	return out
}

func serviceNames(ss []contract.Service) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// show renders a value for comparing and printing; an empty list or map shows as absent, as WMCO's
// omitempty fields do.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	switch s := string(b); s {
	case "null", "[]", "{}", `""`:
		return ""
	default:
		return s
	}
}

// CompareJSON compares two JSON documents leaf by leaf (objects by key, arrays as values), naming each
// difference by its dotted path.
func CompareJSON(artifact string, wmco, wmcon []byte) ([]Difference, error) {
	var a, b any
	if err := json.Unmarshal(wmco, &a); err != nil {
		return nil, fmt.Errorf("%s (WMCO's): %w", artifact, err)
	}
	if err := json.Unmarshal(wmcon, &b); err != nil {
		return nil, fmt.Errorf("%s (wmcon's): %w", artifact, err)
	}
	fa, fb := map[string]string{}, map[string]string{}
	flatten("", a, fa)
	flatten("", b, fb)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out []Difference
	for k := range keys {
		if fa[k] != fb[k] {
			out = append(out, Difference{Artifact: artifact, Field: k, WMCO: fa[k], Wmcon: fb[k]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out, nil
}

func flatten(prefix string, v any, into map[string]string) {
	m, ok := v.(map[string]any)
	if !ok {
		into[prefix] = show(v)
		return
	}
	if len(m) == 0 {
		into[prefix] = "{}" // an empty object WMCO writes (memorySwap: {}) is a field of its own
	}
	for k, child := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		flatten(p, child, into)
	}
}
