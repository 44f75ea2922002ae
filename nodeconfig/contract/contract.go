// Package contract holds WMCO's node contract as data: what the operator publishes in its ConfigMap
// windows-services-<version> (the services its node daemon, WICD, keeps running on every Windows node, with the
// variables taken from the Node object and the PowerShell pre-scripts whose output fills a variable; the files
// with their checksums; the machine environment). It parses and validates the ConfigMap's data exactly as WMCO
// stores it (each value a JSON string), renders it back in the same form, and resolves a service's command line
// for one node as WICD does (resolve.go). wmcon's own generator (nodeconfig.Contract) produces the same
// structure, so everything downstream consumes one shape whether WMCO is installed or not.
package contract

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// NamePrefix starts the name of every services ConfigMap; the operator's version follows.
const NamePrefix = "windows-services-"

// The ConfigMap's data keys. services and files are required; the other two are optional.
const (
	ServicesKey               = "services"
	FilesKey                  = "files"
	EnvironmentVarsKey        = "environmentVars"
	WatchedEnvironmentVarsKey = "watchedEnvironmentVars"
)

// ConfigMapName is the services ConfigMap of an operator version (the CSV's spec.version, e.g. "11.0.0").
func ConfigMapName(version string) string { return NamePrefix + version }

// NodeVariable is a variable of a command whose value is a field of the node's Node object.
type NodeVariable struct {
	// Name is the variable as it appears in the command, e.g. NODE_NAME.
	Name string `json:"name"`
	// NodeObjectJSONPath is a client-go JSON path template evaluated on the Node, e.g. {.metadata.name}. WMCO
	// also passes plain text this way (a template without braces is its own value): C:\k\kubeconfig, 0.
	NodeObjectJSONPath string `json:"nodeObjectJsonPath"`
}

// PreScript is a PowerShell command run on the host before its service is (re)configured.
type PreScript struct {
	// VariableName, when set, is replaced in the service's command by the script's output (trimmed). A script
	// without one is run for its effect only.
	VariableName string `json:"variableName,omitempty"`
	// Path is the PowerShell command line: a script's path with its arguments, or an expression.
	Path string `json:"path"`
	// NodeArgs are variables of Path filled from the Node before the script runs. WMCO writes the key
	// capitalised and null when there are none; so does wmcon.
	NodeArgs []NodeVariable `json:"NodeArgs"`
}

// Service is one Windows service WICD creates, configures and keeps running.
type Service struct {
	Name string `json:"name"`
	// Command is the whole command line (WMCO's key is "path"), variables included.
	Command                string         `json:"path"`
	NodeVariablesInCommand []NodeVariable `json:"nodeVariablesInCommand,omitempty"`
	PowershellPreScripts   []PreScript    `json:"powershellPreScripts,omitempty"`
	Dependencies           []string       `json:"dependencies,omitempty"`
	// Bootstrap services (containerd, the kubelet) are started before the Node exists; the others by the
	// node daemon once it does.
	Bootstrap bool `json:"bootstrap"`
	// Priority orders creation, 0 first; every bootstrap service comes before every other one.
	Priority uint `json:"priority"`
}

// File is a file WMCO copied to the host, with its checksum.
type File struct {
	Path     string `json:"path"`
	Checksum string `json:"checksum"`
}

// Data is a services ConfigMap's data, parsed.
type Data struct {
	Services []Service
	Files    []File
	// EnvironmentVars are set as machine environment variables (the cluster proxy's); absent when empty.
	EnvironmentVars map[string]string
	// WatchedEnvironmentVars are the variables the node daemon owns: one it watches that is not in
	// EnvironmentVars is removed from the host.
	WatchedEnvironmentVars []string
}

// Parse reads a services ConfigMap's data (each value a JSON string, as WMCO stores it) and validates it.
// name is the ConfigMap's name, used in every error so the user knows which object is wrong.
func Parse(name string, data map[string]string) (Data, error) {
	var d Data
	fail := func(key string, err error) (Data, error) {
		return Data{}, fmt.Errorf("services ConfigMap %s, key %q: %w", name, key, err)
	}
	for key := range data {
		if !slices.Contains([]string{ServicesKey, FilesKey, EnvironmentVarsKey, WatchedEnvironmentVarsKey}, key) {
			return fail(key, errors.New("not a key of WMCO's services contract (services, files, environmentVars, watchedEnvironmentVars)"))
		}
	}
	for _, key := range []string{ServicesKey, FilesKey} {
		if _, ok := data[key]; !ok {
			return fail(key, errors.New("missing: the key is required"))
		}
	}
	if err := decode(data[ServicesKey], &d.Services); err != nil {
		return fail(ServicesKey, err)
	}
	if err := decode(data[FilesKey], &d.Files); err != nil {
		return fail(FilesKey, err)
	}
	if v := data[EnvironmentVarsKey]; v != "" {
		if err := decode(v, &d.EnvironmentVars); err != nil {
			return fail(EnvironmentVarsKey, err)
		}
	}
	if v := data[WatchedEnvironmentVarsKey]; v != "" {
		if err := decode(v, &d.WatchedEnvironmentVars); err != nil {
			return fail(WatchedEnvironmentVarsKey, err)
		}
	}
	if err := d.Validate(); err != nil {
		return Data{}, fmt.Errorf("services ConfigMap %s: %w", name, err)
	}
	d.Services = ByPriority(d.Services)
	return d, nil
}

// decode parses one value strictly: a field wmcon does not know is an error, because a newer operator's
// contract may mean something wmcon would silently not do.
func decode(value string, into any) error {
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("not valid JSON for this key: %w", err)
	}
	if dec.More() {
		return errors.New("not valid JSON for this key: text after the value")
	}
	return nil
}

// Render writes d as a ConfigMap's data in WMCO's own form: services ordered by priority, files always
// present, environmentVars only when there are some, watchedEnvironmentVars always.
func Render(d Data) (map[string]string, error) {
	out := map[string]string{}
	put := func(key string, v any) error {
		b, err := json.Marshal(v) // WMCO's encoding, HTML characters escaped included
		if err != nil {
			return fmt.Errorf("render %s: %w", key, err)
		}
		out[key] = string(b)
		return nil
	}
	files := d.Files
	if files == nil {
		files = []File{}
	}
	if err := put(ServicesKey, ByPriority(d.Services)); err != nil {
		return nil, err
	}
	if err := put(FilesKey, files); err != nil {
		return nil, err
	}
	if len(d.EnvironmentVars) > 0 {
		if err := put(EnvironmentVarsKey, d.EnvironmentVars); err != nil {
			return nil, err
		}
	}
	if err := put(WatchedEnvironmentVarsKey, d.WatchedEnvironmentVars); err != nil {
		return nil, err
	}
	return out, nil
}

// ByPriority returns the services ordered by priority, keeping the given order within a priority (WMCO's
// own order: its sort of so few services keeps it too).
func ByPriority(in []Service) []Service {
	out := slices.Clone(in)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Priority < out[j].Priority })
	return out
}

// Bootstrap returns the services started before the Node exists, in priority order.
func (d Data) Bootstrap() []Service {
	var out []Service
	for _, s := range ByPriority(d.Services) {
		if s.Bootstrap {
			out = append(out, s)
		}
	}
	return out
}

// Service returns the service of that name.
func (d Data) Service(name string) (Service, bool) {
	for _, s := range d.Services {
		if s.Name == name {
			return s, true
		}
	}
	return Service{}, false
}

// Validate checks what WMCO's node daemon relies on, naming the service and field at fault.
func (d Data) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, s := range d.Services {
		where := fmt.Sprintf("services[%d]", i)
		if s.Name != "" {
			where = fmt.Sprintf("service %s", s.Name)
		}
		errs = append(errs, s.validate(where)...)
		if seen[strings.ToLower(s.Name)] {
			errs = append(errs, fmt.Errorf("%s: name: listed twice", where))
		}
		seen[strings.ToLower(s.Name)] = true
	}
	errs = append(errs, validateBootstrap(d.Services)...)
	if err := findCycle(d.Services); err != nil {
		errs = append(errs, err)
	}
	for i, f := range d.Files {
		errs = append(errs, f.validate(fmt.Sprintf("files[%d]", i))...)
	}
	for name := range d.EnvironmentVars {
		if name == "" || strings.ContainsAny(name, "= \x00") {
			errs = append(errs, fmt.Errorf("environmentVars: %q is not an environment variable name", name))
		}
	}
	for i, name := range d.WatchedEnvironmentVars {
		if name == "" || strings.ContainsAny(name, "= \x00") {
			errs = append(errs, fmt.Errorf("watchedEnvironmentVars[%d]: %q is not an environment variable name", i, name))
		}
	}
	return errors.Join(errs...)
}

func (s Service) validate(where string) []error {
	var errs []error
	if s.Name == "" || strings.ContainsAny(s.Name, `/\`) {
		errs = append(errs, fmt.Errorf("%s: name: %q is not a Windows service name", where, s.Name))
	}
	if strings.TrimSpace(s.Command) == "" {
		errs = append(errs, fmt.Errorf("%s: path: the command is empty", where))
	}
	for j, v := range s.NodeVariablesInCommand {
		errs = append(errs, v.validate(fmt.Sprintf("%s: nodeVariablesInCommand[%d]", where, j))...)
	}
	for j, p := range s.PowershellPreScripts {
		at := fmt.Sprintf("%s: powershellPreScripts[%d]", where, j)
		if strings.TrimSpace(p.Path) == "" {
			errs = append(errs, fmt.Errorf("%s: path: the script is empty", at))
		}
		for k, v := range p.NodeArgs {
			errs = append(errs, v.validate(fmt.Sprintf("%s: NodeArgs[%d]", at, k))...)
		}
	}
	for j, dep := range s.Dependencies {
		if dep == "" || strings.EqualFold(dep, s.Name) {
			errs = append(errs, fmt.Errorf("%s: dependencies[%d]: %q cannot be a dependency of this service", where, j, dep))
		}
	}
	return errs
}

func (v NodeVariable) validate(where string) []error {
	var errs []error
	if strings.TrimSpace(v.Name) == "" {
		errs = append(errs, fmt.Errorf("%s: name: the variable has no name", where))
	}
	if err := jsonpath.New(v.Name).Parse(v.NodeObjectJSONPath); err != nil {
		errs = append(errs, fmt.Errorf("%s: nodeObjectJsonPath %q is not a JSON path template: %w", where, v.NodeObjectJSONPath, err))
	}
	return errs
}

func (f File) validate(where string) []error {
	var errs []error
	if strings.TrimSpace(f.Path) == "" {
		errs = append(errs, fmt.Errorf("%s: path: empty", where))
	}
	if _, err := hex.DecodeString(f.Checksum); err != nil || f.Checksum == "" {
		errs = append(errs, fmt.Errorf("%s (%s): checksum %q is not a hexadecimal digest", where, f.Path, f.Checksum))
	}
	return errs
}

// validateBootstrap enforces WMCO's bootstrap rules: a bootstrap service runs before the Node exists, so it
// can neither read the Node nor wait for a service that starts only once the Node exists, and every
// bootstrap service's priority is below every other service's.
func validateBootstrap(services []Service) []error {
	var errs []error
	later := map[string]bool{}
	for _, s := range services {
		if !s.Bootstrap {
			later[s.Name] = true
		}
	}
	for _, s := range services {
		if !s.Bootstrap {
			continue
		}
		if len(s.NodeVariablesInCommand) > 0 {
			errs = append(errs, fmt.Errorf("service %s: nodeVariablesInCommand: a bootstrap service starts before the Node exists, so it cannot use node variables", s.Name))
		}
		for _, dep := range s.Dependencies {
			if later[dep] {
				errs = append(errs, fmt.Errorf("service %s: dependencies: a bootstrap service cannot depend on %s, which starts only after bootstrap", s.Name, dep))
			}
		}
		for _, o := range services {
			if !o.Bootstrap && o.Priority <= s.Priority {
				errs = append(errs, fmt.Errorf("service %s: priority %d: every bootstrap service must come before %s (priority %d)", s.Name, s.Priority, o.Name, o.Priority))
			}
		}
	}
	return errs
}

// findCycle reports a dependency cycle among the listed services, naming it; dependencies on services the
// contract does not list (the host's own) cannot form one.
func findCycle(services []Service) error {
	deps := map[string][]string{}
	for _, s := range services {
		deps[s.Name] = s.Dependencies
	}
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var path []string
	var visit func(n string) error
	visit = func(n string) error {
		state[n] = visiting
		path = append(path, n)
		for _, d := range deps[n] {
			if _, listed := deps[d]; !listed {
				continue
			}
			switch state[d] {
			case visiting:
				i := slices.Index(path, d)
				return fmt.Errorf("dependencies: the services depend on each other in a cycle: %s", strings.Join(append(slices.Clone(path[i:]), d), " → "))
			case 0:
				if err := visit(d); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	for _, s := range services {
		if state[s.Name] == 0 {
			if err := visit(s.Name); err != nil {
				return err
			}
		}
	}
	return nil
}
