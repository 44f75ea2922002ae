package contract

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Difference is one argument where a host's command line departs from the contract's: Want is the
// contract's argument ("--v=2", "--config C:\k\kube-proxy.conf"), Got the host's, "" where one side lacks it.
type Difference struct {
	Flag      string // the flag's name ("--v"), "program" or "argument N" for a word that is no flag
	Want, Got string
}

func (d Difference) String() string {
	switch {
	case d.Got == "":
		return fmt.Sprintf("%s: the host's command lacks %s", d.Flag, d.Want)
	case d.Want == "":
		return fmt.Sprintf("%s: the host's command has %s, which the contract does not", d.Flag, d.Got)
	}
	return fmt.Sprintf("%s: the contract has %s, the host runs %s", d.Flag, d.Want, d.Got)
}

// Drift compares the command line a host registered for svc with the contract's for the node. Node
// variables are read from the Node; a pre-script variable matches any value, since its pre-script's output
// is the host's own (its address, its name) and reading it runs the script. Windows compares paths without
// regard to case, and so does Drift. nil: the host runs the contract's command. Otherwise one Difference per
// argument that differs; arguments in another order are one Difference ("order").
func Drift(svc Service, node *corev1.Node, hostCommand string) ([]Difference, error) {
	cmd := svc.Command
	if len(svc.NodeVariablesInCommand) > 0 {
		vals, err := nodeValues(svc.Name, svc.NodeVariablesInCommand, node)
		if err != nil {
			return nil, err
		}
		cmd = replaceAll(cmd, vals)
	}
	var vars []string
	for _, p := range svc.PowershellPreScripts {
		if p.VariableName != "" {
			vars = append(vars, p.VariableName)
		}
	}
	host := strings.Join(strings.Fields(hostCommand), " ")
	if pattern(strings.Join(strings.Fields(cmd), " "), vars).MatchString(host) {
		return nil, nil
	}
	want, got := arguments(cmd), arguments(host)
	var out []Difference
	for _, w := range want {
		g, ok := find(got, w.key)
		switch {
		case !ok:
			out = append(out, Difference{Flag: w.name, Want: w.text})
		case !pattern(w.text, vars).MatchString(g.text):
			out = append(out, Difference{Flag: w.name, Want: w.text, Got: g.text})
		}
	}
	for _, g := range got {
		if _, ok := find(want, g.key); !ok {
			out = append(out, Difference{Flag: g.name, Got: g.text})
		}
	}
	if len(out) == 0 {
		out = append(out, Difference{Flag: "order", Want: cmd, Got: host})
	}
	return out, nil
}

// pattern matches text whole, each variable standing for any run of non-blank characters.
func pattern(text string, vars []string) *regexp.Regexp {
	names := slices.Clone(vars)
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	quoted := regexp.QuoteMeta(text)
	for _, v := range names {
		quoted = strings.ReplaceAll(quoted, regexp.QuoteMeta(v), `\S+`)
	}
	return regexp.MustCompile(`(?i)^` + quoted + `$`)
}

// argument is one argument of a command line: a flag with its value, or a word that is no flag.
type argument struct {
	key  string // lower-case name, with the occurrence for a repeated one
	name string
	text string
}

// arguments splits a command line (words separated by blanks, as WMCO writes them) into its program, its
// flags (a flag without "=" takes the next word as its value when that word is no flag) and its other words.
func arguments(cmd string) []argument {
	words := strings.Fields(cmd)
	if len(words) == 0 {
		return nil
	}
	out := []argument{{key: "program", name: "program", text: words[0]}}
	seen := map[string]int{}
	positional := 0
	for i := 1; i < len(words); i++ {
		w := words[i]
		var name string
		text := w
		if strings.HasPrefix(w, "-") {
			n, _, eq := strings.Cut(w, "=")
			name = n
			if !eq && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
				i++
				text += " " + words[i]
			}
		} else {
			positional++
			name = fmt.Sprintf("argument %d", positional)
		}
		key := strings.ToLower(name)
		seen[key]++
		if seen[key] > 1 {
			key = fmt.Sprintf("%s#%d", key, seen[key])
		}
		out = append(out, argument{key: key, name: name, text: text})
	}
	return out
}

func find(args []argument, key string) (argument, bool) {
	for _, a := range args {
		if a.key == key {
			return a, true
		}
	}
	return argument{}, false
}
