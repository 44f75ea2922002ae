package upgrade_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/upgrade"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

// TestUpgradeWatchFollowsTheOperator plays the operator upgrading a Machine-backed node on the real API
// server — it labels the node upgrading and cordons it, a PodDisruptionBudget holds the drain, then the node
// carries the new version — and checks that upgrade run --watch reports each of these and ends.
func TestUpgradeWatchFollowsTheOperator(t *testing.T) {
	e := actiontest.NewEnv(t)
	const node, ip, target = "win-upgwatch-a", "127.0.0.77", "10.0.0"
	e.Node(node, ip, true)
	e.PatchNode(node, `{"metadata":{"annotations":{"`+config.VersionAnnotation+`":"9.0.0"}}}`)
	e.WindowsMachine("upgwatch-ms", node, ip)
	b := e.WatchedBackends()

	rec := &actiontest.Recorder{}
	ctx, cancel := context.WithTimeout(e.Ctx, time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- upgrade.WatchUpgrade(ctx, b, target, upgrade.UpgradeWatchOptions{Interval: 50 * time.Millisecond}, rec)
	}()
	seen := func(s string) func() bool { return func() bool { return strings.Contains(rec.Dump(), s) } }
	require.Eventually(t, seen("1. "+node+": version 9.0.0 → 10.0.0: the operator reconfigures it in place; next (Ready, schedulable)"),
		10*time.Second, 20*time.Millisecond, rec.Dump())
	require.Eventually(t, seen(node+": Machine "+config.MachineAPINamespace+"/"+node+": phase Running"), 10*time.Second, 20*time.Millisecond, rec.Dump())

	// The operator takes the node: upgrading, cordoned; a budget holds the drain of its pod.
	e.Pod("sql-0", node, "sql", nil)
	e.BlockingPDB("sql-pdb", "sql")
	e.PatchNode(node, `{"metadata":{"labels":{"`+config.UpgradingLabel+`":"true"}},"spec":{"unschedulable":true}}`)
	require.Eventually(t, seen("upgrading now (Ready, cordoned)"), 10*time.Second, 20*time.Millisecond, rec.Dump())
	require.Eventually(t, seen(node+": its drain is held by PodDisruptionBudget "+e.NS+"/sql-pdb (0 disruptions allowed"), 10*time.Second, 20*time.Millisecond, rec.Dump())
	select {
	case err := <-done:
		t.Fatalf("the watch ended while the node upgrades: %v\n%s", err, rec.Dump())
	default:
	}

	// Done: the new version, the label gone, schedulable again.
	e.PatchNode(node, `{"metadata":{"labels":{"`+config.UpgradingLabel+`":null},"annotations":{"`+config.VersionAnnotation+`":"10.0.0-abc1234"}},"spec":{"unschedulable":false}}`)
	select {
	case err := <-done:
		require.NoError(t, err, rec.Dump())
	case <-ctx.Done():
		t.Fatalf("the watch did not end once the node carried the target:\n%s", rec.Dump())
	}
	assert.Contains(t, rec.Dump(), node+" is at 10.0.0")
	final := rec.All()[len(rec.All())-1]
	assert.Equal(t, event.Finished, final.Kind)
	assert.Equal(t, event.Succeeded, final.Outcome)
}
