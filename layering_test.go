package main

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is wmcon's module path.
const module = "github.com/wmcon/wmcon"

// notProduct are the packages outside the product: main, which wires the demo (sim/demo) into the command
// line and so is the one place the product meets sim/; the simulators; the test servers; developer tools.
var notProduct = []string{module, module + "/sim/...", module + "/testsupport/...", module + "/hack/..."}

// layeringRules are the project's one-way layers: the console stays free of the cluster and SSH libraries
// (it sees only snapshots and the actions' vocabulary), and the actions stay free of the terminal UI so
// headless commands and tests run them as they are. The vocabulary packages the console shares with the
// actions depend on neither side. The product stays free of the simulators and the test servers, and the
// layers that talk to the outside world (cluster, remote) free of everything built on them.
var layeringRules = []struct {
	packages  []string // go list patterns
	except    []string // packages the rule leaves out: an import path, or a path ending in /... for its subtree
	forbidden []string // import path prefixes none of them may reach, even transitively
	why       string
}{
	{
		packages:  []string{"./ui/..."},
		forbidden: []string{"k8s.io/client-go", "golang.org/x/crypto/ssh"},
		why:       "the console renders snapshots and action events; cluster and SSH access belong to cluster, remote and actions",
	},
	{
		packages: []string{"./ui/view", "./ui/keymap", "./ui/layout", "./ui/styles", "./ui/theme", "./ui/binding",
			"./ui/dialog", "./ui/helpview", "./ui/page"},
		forbidden: []string{module + "/ui/wizard", module + "/ui/doctor", module + "/ui/operator", module + "/ui/proxy",
			module + "/ui/machinesets", module + "/ui/mirrors", module + "/ui/configure"},
		why: "the console's shared parts (the view contract, keys, layout, styles, dialogs) sit under its feature " +
			"packages, which the root wires together; a shared part that reached a feature would tie every view to it",
	},
	{
		packages:  []string{"./actions/..."},
		forbidden: []string{"charm.land/bubbletea", "github.com/charmbracelet/bubbletea"},
		why:       "actions run headless too; they report through event.Sink, never through Bubble Tea",
	},
	{
		packages: []string{"./model", "./actions/event", "./actions/request", "./actions/logline", "./actions/diagnosis",
			"./actions/rollout", "./actions/setup/steps"},
		forbidden: []string{"k8s.io/client-go", "golang.org/x/crypto/ssh", "charm.land/bubbletea",
			"github.com/charmbracelet/bubbletea"},
		why: "the shared vocabulary must stay light so that both the console and the actions can import it",
	},
	{
		packages:  []string{"./..."},
		except:    notProduct,
		forbidden: []string{module + "/sim", module + "/testsupport"},
		why: "the product works on the backend it is handed (session.Options.Backend); the simulators reach it " +
			"only through main, which hands the command line the demo, and the test servers only through tests",
	},
	{
		packages: []string{"./cluster/...", "./remote/..."},
		forbidden: []string{module + "/actions", module + "/backend", module + "/session", module + "/ui",
			module + "/cli", module + "/sim", module + "/testsupport"},
		why: "cluster and remote are the bottom layers that talk to the cluster and the hosts; whatever is built " +
			"on them converts to their own types (cluster.DrainChoices), so they never import it back",
	},
	{
		packages:  []string{"./actions"},
		forbidden: featurePackages,
		why: "the Runner, the audit point and the ports sit below the feature packages, which register their " +
			"handlers with them: an import the other way would be a cycle (package all links the features in)",
	},
	{
		packages:  []string{"./backend"},
		forbidden: []string{module + "/actions", module + "/session", module + "/ui", module + "/cli", module + "/sim"},
		why: "sim/demo implements backend.Backend, and session's tests open the demo: an import of session " +
			"(or above) from backend would make that a cycle",
	},
}

// featurePackages are the actions' feature packages: one each for what the console and the commands do.
var featurePackages = []string{module + "/actions/configure", module + "/actions/doctor", module + "/actions/hostkey",
	module + "/actions/logs", module + "/actions/mirrors", module + "/actions/nodeops", module + "/actions/operator",
	module + "/actions/proxy", module + "/actions/reboot", module + "/actions/restart", module + "/actions/setup",
	module + "/actions/triage", module + "/actions/upgrade"}

// featureImports are the only imports from one feature package of another (direct imports; each feature
// may import the shared packages below them: actions, event, request, rollout, diagnosis, logline). A
// feature that needs another's code says why here, or the code moves below both.
var featureImports = []struct {
	from, to string
	why      string
}{
	{"reboot", "nodeops", "cordon and drain are steps of a reboot: one implementation reports them and leaves a node part-way the same way"},
	{"configure", "nodeops", "configure and deconfigure cordon and drain the node as a reboot does"},
	{"upgrade", "nodeops", "an upgrade cordons and drains each node as a reboot does"},
	{"upgrade", "configure", "an upgrade reconfigures a standalone node with the configuration engine"},
	{"configure", "operator", "configure --watch follows the operator on a host it owns, as the operator package reads its progress"},
	{"upgrade", "operator", "an upgrade follows the operator upgrading its own nodes with the same reading of its progress"},
	{"setup", "operator", "the setup installs the operator and follows it turning Machines into nodes"},
	{"doctor", "operator", "the doctor describes WMCO's OLM objects as wmcon operator status does"},
	{"doctor", "triage", "the doctor reads the cluster's network configuration as triage does (triage.ClusterReads)"},
	{"proxy", "reboot", "a proxy sync offers the graceful reboot its changes need, run by the reboot action"},
}

// featureImportViolations lists the imports between feature packages that featureImports (as allowed)
// does not state.
func featureImportViolations(pkgs map[string]listedPackage, allowed map[[2]string]bool) []string {
	var out []string
	for _, from := range featurePackages {
		for _, imp := range pkgs[from].Imports {
			if !slices.Contains(featurePackages, imp) {
				continue
			}
			f, i := strings.TrimPrefix(from, module+"/actions/"), strings.TrimPrefix(imp, module+"/actions/")
			if !allowed[[2]string{f, i}] {
				out = append(out, f+" → "+i)
			}
		}
	}
	return out
}

func allowedFeatureImports(skip string) map[[2]string]bool {
	allowed := map[[2]string]bool{}
	for _, e := range featureImports {
		if e.from+" → "+e.to != skip {
			allowed[[2]string{e.from, e.to}] = true
		}
	}
	return allowed
}

// TestFeaturePackagesImportEachOtherOnlyAsStated: a feature package imports another only where
// featureImports says why; every stated import is still needed (a stale exception would hide a new one).
func TestFeaturePackagesImportEachOtherOnlyAsStated(t *testing.T) {
	pkgs := goListDeps(t, []string{"./actions/..."})
	for _, f := range featurePackages {
		require.Contains(t, pkgs, f, "feature package %s exists", f)
	}
	assert.Empty(t, featureImportViolations(pkgs, allowedFeatureImports("")), "state why in featureImports, or move the shared code below both")
	for _, e := range featureImports {
		assert.Contains(t, pkgs[module+"/actions/"+e.from].Imports, module+"/actions/"+e.to, "%s → %s is stated but not imported: drop it", e.from, e.to)
	}
	var listed []string
	for p := range pkgs {
		if rest, ok := strings.CutPrefix(p, module+"/actions/"); ok && !strings.Contains(rest, "/") &&
			!slices.Contains([]string{"event", "request", "logline", "diagnosis", "rollout", "all"}, rest) {
			listed = append(listed, p)
		}
	}
	assert.ElementsMatch(t, featurePackages, listed, "a new package under actions/ is a feature package (listed here) or shared vocabulary")
}

// TestFeatureRuleCatchesAViolation runs the check with one stated import taken out (upgrade → configure,
// which upgrade does import): it must be reported, or the rule above would pass vacuously.
func TestFeatureRuleCatchesAViolation(t *testing.T) {
	pkgs := goListDeps(t, []string{"./actions/..."})
	assert.Equal(t, []string{"upgrade → configure"}, featureImportViolations(pkgs, allowedFeatureImports("upgrade → configure")))
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
			if p.DepOnly || matchesAny(rule.except, p.ImportPath) {
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

// TestLayeringRulesCoverTheProduct checks that the sim/ rule's exceptions leave the product in: a pattern
// that matched too much would pass the rule vacuously.
func TestLayeringRulesCoverTheProduct(t *testing.T) {
	for _, p := range []string{module + "/session", module + "/cli", module + "/cluster", module + "/actions", module + "/ui",
		module + "/remote", module + "/backend"} {
		assert.False(t, matchesAny(notProduct, p), "%s is product code and must be checked", p)
	}
	for _, p := range []string{module, module + "/sim/demo", module + "/testsupport/kubeapi", module + "/hack/scaleserver"} {
		assert.True(t, matchesAny(notProduct, p), "%s is left out of the product rule", p)
	}
}

// TestLayeringCatchesTheDemoWiring runs the product rule's search on main, which is known to reach sim/
// (it wires the demo): the search must find that chain, or the rule above would pass vacuously.
func TestLayeringCatchesTheDemoWiring(t *testing.T) {
	pkgs := goListDeps(t, []string{"."})
	chain := importChain(pkgs, module, module+"/sim")
	require.NotNil(t, chain, "main imports sim/demo, but the search found no chain")
	assert.True(t, strings.HasPrefix(chain[len(chain)-1], module+"/sim/"), "chain %v", chain)
	assert.Nil(t, importChain(pkgs, module+"/cli", module+"/sim"), "cli is handed the demo, never imports it")
}

// binaryNeverLinks are packages the wmcon binary must not contain: the test servers start real
// kube-apiservers, sshd and Prometheus for tests, and `testing` would come only with them.
var binaryNeverLinks = []string{module + "/testsupport", "testing"}

// TestBinaryLinksNoTestSupport lists what `go build .` links from the module root, as the check
// (`go list -deps .`) does.
func TestBinaryLinksNoTestSupport(t *testing.T) {
	assert.Empty(t, linked(t, ".", binaryNeverLinks), "the wmcon binary links test support")
}

// TestBinaryCheckCatchesAViolation runs the same check on a program known to link test support
// (hack/scaleserver starts a real kube-apiserver), so a broken check cannot pass vacuously.
func TestBinaryCheckCatchesAViolation(t *testing.T) {
	assert.Contains(t, linked(t, "./hack/scaleserver", binaryNeverLinks), module+"/testsupport/kubeapi")
}

// linked are the packages under the forbidden prefixes that the program at pattern links.
func linked(t *testing.T, pattern string, forbidden []string) []string {
	t.Helper()
	var out []string
	for p := range goListDeps(t, []string{pattern}) {
		for _, bad := range forbidden {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// matchesAny says whether path is one of patterns: an import path, or a path ending in /... for its subtree.
func matchesAny(patterns []string, path string) bool {
	for _, p := range patterns {
		if tree, ok := strings.CutSuffix(p, "/..."); ok {
			if path == tree || strings.HasPrefix(path, tree+"/") {
				return true
			}
		} else if path == p {
			return true
		}
	}
	return false
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
