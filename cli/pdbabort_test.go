package cli

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAbortOnBudgetStartsNoEviction: when a PodDisruptionBudget blocks the drain and the answer is abort,
// nothing is evicted after the abort, and the report names the pods evicted and those still on the node,
// which is what the real API server then shows.
func TestAbortOnBudgetStartsNoEviction(t *testing.T) {
	e := newNodeEnv(t, "cli-abort")
	e.node("cli-abort-1", true)
	e.kubelets("cli-abort-1")
	e.pod("sql-0", "cli-abort-1", "sql")
	for _, p := range []string{"web-1", "web-2", "web-3", "web-4", "web-5", "web-6"} {
		e.pod(p, "cli-abort-1", "app")
	}
	e.blockingBudget("sql-pdb", "sql")

	code, out, errOut := runWmcon(t, kubeconfigArgs(t, "drain", "cli-abort-1", "--on-pdb", "abort")...)
	require.Equal(t, ExitHalfDone, code, "%s\n%s", out, errOut)
	lines := strings.Split(out, "\n")
	abortAt := -1
	for i, l := range lines {
		if strings.Contains(l, "abort chosen") {
			abortAt = i
			break
		}
	}
	require.GreaterOrEqual(t, abortAt, 0, "the abort is reported:\n%s", out)
	for _, l := range lines[abortAt+1:] {
		assert.NotRegexp(t, `evict(ing|ed) `+e.ns, l, "no eviction after the abort:\n%s", out)
	}
	m := regexp.MustCompile(`evicted: (.*); still on the node: (.*)$`).FindStringSubmatch(lines[abortAt])
	require.NotNil(t, m, lines[abortAt])
	remaining := strings.Split(m[2], ", ")
	assert.Contains(t, remaining, e.ns+"/sql-0", "the protected pod stays")
	assert.NotContains(t, strings.Split(m[1], ", "), e.ns+"/sql-0")
	var want []string
	for _, r := range remaining {
		want = append(want, strings.TrimPrefix(r, e.ns+"/"))
	}
	sort.Strings(want)
	assert.Eventually(t, func() bool {
		got := e.podsOn("cli-abort-1")
		sort.Strings(got)
		return strings.Join(got, ",") == strings.Join(want, ",")
	}, 20*time.Second, 100*time.Millisecond, "the pods the report says remain are the ones on the node:\n%s\nnow: %v", out, e.podsOn("cli-abort-1"))
}
