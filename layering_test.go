package main

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layeringRules are the project's one-way layers: the console stays free of the cluster and SSH libraries
// (it sees only snapshots and the actions' vocabulary), and the actions stay free of the terminal UI so
// headless commands and tests run them as they are. The vocabulary packages the console shares with the
// actions depend on neither side.
var layeringRules = []struct {
	packages  []string // go list patterns
	forbidden []string // import path prefixes none of them may reach, even transitively
	why       string
}{
	{
		packages:  []string{"./ui/..."},
		forbidden: []string{"k8s.io/client-go", "golang.org/x/crypto/ssh"},
		why:       "the console renders snapshots and action events; cluster and SSH access belong to cluster, remote and actions",
	},
	{
		packages:  []string{"./actions/..."},
		forbidden: []string{"charm.land/bubbletea", "github.com/charmbracelet/bubbletea"},
		why:       "actions run headless too; they report through event.Sink, never through Bubble Tea",
	},
	{
		packages: []string{"./model", "./actions/event", "./actions/request", "./actions/logline", "./actions/diagnosis"},
		forbidden: []string{"k8s.io/client-go", "golang.org/x/crypto/ssh", "charm.land/bubbletea",
			"github.com/charmbracelet/bubbletea"},
		why: "the shared vocabulary must stay light so that both the console and the actions can import it",
	},
}

// listedPackage is the part of `go list -json` the test reads.
type listedPackage struct {
	ImportPath string
	Imports    []string
	DepOnly    bool
}

func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the layering test runs `go list`: %v", err)
	}
	for _, rule := range layeringRules {
		pkgs := goListDeps(t, rule.packages)
		for _, p := range pkgs {
			if p.DepOnly {
				continue
			}
			for _, bad := range rule.forbidden {
				if chain := importChain(pkgs, p.ImportPath, bad); chain != nil {
					t.Errorf("%s reaches %s (%s): %s", p.ImportPath, bad, rule.why, strings.Join(chain, " → "))
				}
			}
		}
	}
}

// TestLayeringCatchesAViolation checks the test's own search on a package known to reach client-go, so a
// broken search cannot pass the rules above vacuously.
func TestLayeringCatchesAViolation(t *testing.T) {
	pkgs := goListDeps(t, []string{"./cluster"})
	chain := importChain(pkgs, "github.com/wmcon/wmcon/cluster", "k8s.io/client-go")
	if len(chain) < 2 || !strings.HasPrefix(chain[len(chain)-1], "k8s.io/client-go") {
		t.Fatalf("cluster imports client-go, but the search found %v", chain)
	}
}

// goListDeps lists the packages matching patterns and everything they import.
func goListDeps(t *testing.T, patterns []string) map[string]listedPackage {
	t.Helper()
	args := append([]string{"list", "-deps", "-json=ImportPath,Imports,DepOnly"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, exit.Stderr)
		}
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	pkgs := map[string]listedPackage{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list found no packages for %v", patterns)
	}
	return pkgs
}

// importChain is the shortest chain of imports from one package to a package under the forbidden prefix,
// or nil when there is none.
func importChain(pkgs map[string]listedPackage, from, forbidden string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == forbidden || strings.HasPrefix(cur, forbidden+"/") {
			var chain []string
			for p := cur; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, imp := range pkgs[cur].Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = cur
				queue = append(queue, imp)
			}
		}
	}
	return nil
}
