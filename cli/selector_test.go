package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// labelled creates a node carrying the label pool=VALUE, removed when the test ends.
func (e *nodeEnv) labelled(name, pool string) {
	e.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"wmcon-test/pool": pool}}}
	_, err := e.kube.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = e.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func TestSelectorChoosesNodes(t *testing.T) {
	e := newNodeEnv(t, "cli-sel")
	pool := e.ns // unique per run, so nodes other tests left cannot match
	e.labelled(e.ns+"-b", pool)
	e.labelled(e.ns+"-a", pool)
	e.labelled(e.ns+"-other", "elsewhere")
	sel := "wmcon-test/pool=" + pool

	code, out, errOut := runWmcon(t, kubeconfigArgs(t, "cordon", "-l", sel)...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.True(t, e.cordoned(e.ns+"-a"))
	assert.True(t, e.cordoned(e.ns+"-b"))
	assert.False(t, e.cordoned(e.ns+"-other"), "only the matching nodes")
	assert.Less(t, strings.Index(out, e.ns+"-a"), strings.Index(out, e.ns+"-b"), "the matching nodes in name order")

	code, out, errOut = runWmcon(t, kubeconfigArgs(t, "uncordon", "--selector", sel)...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.False(t, e.cordoned(e.ns+"-a"))
	assert.False(t, e.cordoned(e.ns+"-b"))

	// A selector that matches nothing acts on nothing and says so.
	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "drain", "-l", "wmcon-test/pool=nowhere-"+pool)...)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "matches no node")

	// Bad command lines are refused before anything is opened or changed.
	for _, args := range [][]string{
		{"cordon", e.ns + "-other", "-l", sel},
		{"reboot", "-l", "pool in (a"},
		{"triage"},
	} {
		code, _, errOut = runWmcon(t, kubeconfigArgs(t, args...)...)
		assert.Equal(t, ExitUsage, code, "%v: %s", args, errOut)
	}
	_, _, errOut = runWmcon(t, kubeconfigArgs(t, "cordon", e.ns+"-other", "-l", sel)...)
	assert.Contains(t, errOut, "not both")
	_, _, errOut = runWmcon(t, kubeconfigArgs(t, "reboot", "-l", "pool in (a")...)
	assert.Contains(t, errOut, "is not a label selector")
	assert.False(t, e.cordoned(e.ns+"-other"))

	// Under --read-only the selector changes nothing either.
	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "--read-only", "cordon", "-l", sel)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--read-only")
	assert.False(t, e.cordoned(e.ns+"-a"))
}
