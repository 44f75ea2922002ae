package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDryRunShowsThePodsAndTheBudgetsAndChangesNothing: reboot and drain --dry-run list the pods that
// would go with the PodDisruptionBudgets covering them (and whether each would block), under --read-only
// too, and leave the node schedulable with its pods; reboot --dry-run refuses a Linux node as reboot does.
func TestDryRunShowsThePodsAndTheBudgetsAndChangesNothing(t *testing.T) {
	e := newNodeEnv(t, "cli-dry")
	e.node("cli-dry-1", true)
	e.node("cli-dry-lin", false)
	e.pod("sql-0", "cli-dry-1", "sql")
	e.pod("web-0", "cli-dry-1", "web")
	e.blockingBudget("sql-pdb", "sql")

	code, out, errOut := runWmcon(t, kubeconfigArgs(t, "--read-only", "reboot", "cli-dry-1", "--dry-run")...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "cli-dry-1 (dry run, nothing changed): cordon, then evict 2 pod(s)")
	assert.Contains(t, out, e.ns+"/sql-0  (PodDisruptionBudget "+e.ns+"/sql-pdb)")
	assert.Contains(t, out, "budget "+e.ns+"/sql-pdb: 0 disruption(s) allowed")
	assert.Contains(t, out, "WOULD BLOCK")
	assert.Contains(t, out, "--on-pdb disable-eviction --yes-disable-eviction", "the hint names flags, not keys")
	assert.Contains(t, out, "Restart-Computer", "reboot says what follows the drain")
	assert.False(t, e.cordoned("cli-dry-1"), "a dry run cordons nothing")
	assert.ElementsMatch(t, []string{"sql-0", "web-0"}, e.podsOn("cli-dry-1"), "and evicts nothing")

	code, out, errOut = runWmcon(t, kubeconfigArgs(t, "drain", "cli-dry-1", "--dry-run", "-o", "json")...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var plan struct {
		Node       string   `json:"node"`
		Pods       []string `json:"pods"`
		WouldBlock []string `json:"wouldBlock"`
		Reboot     bool     `json:"reboot"`
	}
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out)), &plan), out)
	assert.Equal(t, "cli-dry-1", plan.Node)
	assert.ElementsMatch(t, []string{e.ns + "/sql-0", e.ns + "/web-0"}, plan.Pods)
	assert.Equal(t, []string{e.ns + "/sql-pdb"}, plan.WouldBlock)
	assert.False(t, plan.Reboot)
	assert.False(t, e.cordoned("cli-dry-1"))

	code, _, errOut = runWmcon(t, kubeconfigArgs(t, "reboot", "cli-dry-lin", "--dry-run")...)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "is a Linux node")

	// A pod no controller manages, without --force: the drain could not start; the dry run says why and
	// exits 1.
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "scratch", Namespace: e.ns}}
	bare.Spec.NodeName = "cli-dry-1"
	bare.Spec.Containers = []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/nanoserver:ltsc2022"}}
	_, err := e.kube.CoreV1().Pods(e.ns).Create(e.ctx, bare, metav1.CreateOptions{})
	require.NoError(t, err)
	code, out, errOut = runWmcon(t, kubeconfigArgs(t, "drain", "cli-dry-1", "--dry-run", "--force=false")...)
	assert.Equal(t, 1, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "the drain could not start")
	assert.Contains(t, out, "scratch")
	assert.Contains(t, errOut, "nothing was changed")
	assert.False(t, e.cordoned("cli-dry-1"))
}
