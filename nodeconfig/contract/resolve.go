package contract

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/jsonpath"
)

// ResolveError says which variable of which service could not be given a value, and why.
type ResolveError struct {
	Service  string
	Variable string
	JSONPath string // "" for a pre-script variable
	Err      error
}

func (e *ResolveError) Error() string {
	from := "its pre-script's output"
	if e.JSONPath != "" {
		from = "the Node's " + e.JSONPath
	}
	return fmt.Sprintf("service %s: variable %s (from %s): %v", e.Service, e.Variable, from, e.Err)
}

func (e *ResolveError) Unwrap() error { return e.Err }

// Resolve returns the command line WMCO's node daemon registers for svc on the node: each node variable
// replaced by its field of the Node, each pre-script variable by its script's output (trimmed), outputs
// being keyed by variable name. As the daemon, it substitutes node variables first, then pre-script ones;
// unlike it, it substitutes every variable of a kind in one pass, longest name first, so a value that
// happens to contain another variable's name is left alone and the result never depends on map order.
// A variable without a value is an error naming the service, the variable and where its value comes from;
// so is a pre-script output that is empty (the daemon would register "--flag=" and let the program fail).
func Resolve(svc Service, node *corev1.Node, outputs map[string]string) (string, error) {
	cmd := svc.Command
	if len(svc.NodeVariablesInCommand) > 0 {
		vals, err := nodeValues(svc.Name, svc.NodeVariablesInCommand, node)
		if err != nil {
			return "", err
		}
		cmd = replaceAll(cmd, vals)
	}
	vals := map[string]string{}
	for _, p := range svc.PowershellPreScripts {
		if p.VariableName == "" {
			continue
		}
		out, ok := outputs[p.VariableName]
		switch {
		case !ok:
			return "", &ResolveError{Service: svc.Name, Variable: p.VariableName,
				Err: fmt.Errorf("the pre-script has not run on the host (%s)", p.Path)}
		case strings.TrimSpace(out) == "":
			return "", &ResolveError{Service: svc.Name, Variable: p.VariableName,
				Err: fmt.Errorf("the pre-script printed nothing (%s)", p.Path)}
		}
		vals[p.VariableName] = strings.TrimSpace(out)
	}
	return replaceAll(cmd, vals), nil
}

// PreScriptCommands returns the PowerShell command line of each of svc's pre-scripts, its NodeArgs filled
// from the node, in the order the node daemon runs them (all before the service is configured).
func PreScriptCommands(svc Service, node *corev1.Node) ([]string, error) {
	out := make([]string, 0, len(svc.PowershellPreScripts))
	for _, p := range svc.PowershellPreScripts {
		vals, err := nodeValues(svc.Name, p.NodeArgs, node)
		if err != nil {
			return nil, err
		}
		out = append(out, replaceAll(p.Path, vals))
	}
	return out, nil
}

// NodeValue evaluates one node variable on the node, as the node daemon does: the template must give
// exactly one value, a string. Plain text (no braces) is its own value.
func NodeValue(v NodeVariable, node *corev1.Node) (string, error) {
	if node == nil {
		return "", errors.New("the Node is not known yet (it has not registered)")
	}
	jp := jsonpath.New(v.Name)
	if err := jp.Parse(v.NodeObjectJSONPath); err != nil {
		return "", fmt.Errorf("not a JSON path template: %w", err)
	}
	results, err := jp.FindResults(*node)
	if err != nil {
		return "", fmt.Errorf("Node %s has no such field (%w)", node.Name, err)
	}
	if len(results) != 1 || len(results[0]) != 1 {
		return "", fmt.Errorf("gives %d values on Node %s; a variable needs exactly one", countValues(results), node.Name)
	}
	val := results[0][0]
	for val.Kind() == reflect.Interface || val.Kind() == reflect.Pointer {
		val = val.Elem()
	}
	if val.Kind() != reflect.String {
		return "", fmt.Errorf("is a %s on Node %s, not a string", val.Kind(), node.Name)
	}
	return val.String(), nil
}

func countValues(results [][]reflect.Value) int {
	n := 0
	for _, r := range results {
		n += len(r)
	}
	return n
}

func nodeValues(service string, vars []NodeVariable, node *corev1.Node) (map[string]string, error) {
	vals := make(map[string]string, len(vars))
	for _, v := range vars {
		s, err := NodeValue(v, node)
		if err != nil {
			return nil, &ResolveError{Service: service, Variable: v.Name, JSONPath: v.NodeObjectJSONPath, Err: err}
		}
		vals[v.Name] = s
	}
	return vals, nil
}

// replaceAll substitutes every variable in one pass, longest name first where two could match at the same
// place.
func replaceAll(s string, vals map[string]string) string {
	if len(vals) == 0 {
		return s
	}
	names := make([]string, 0, len(vals))
	for n := range vals {
		if n != "" { // an unnamed variable would match everywhere
			names = append(names, n)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	pairs := make([]string, 0, 2*len(names))
	for _, n := range names {
		pairs = append(pairs, n, vals[n])
	}
	return strings.NewReplacer(pairs...).Replace(s)
}
