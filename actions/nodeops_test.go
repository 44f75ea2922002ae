package actions_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/sim/windows"
)

func TestCordonAndUncordon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.node("lin-cordon", "127.0.0.141", false)
	rec := &recorder{}
	require.NoError(t, actions.Cordon(e.ctx, e.ops, "lin-cordon", rec))
	assert.True(t, e.nodeInfo("lin-cordon").Unschedulable, "cordon works on any node")
	require.NoError(t, actions.Cordon(e.ctx, e.ops, "lin-cordon", rec))
	dones := rec.of("lin-cordon", event.StepDone)
	require.Len(t, dones, 2)
	assert.Equal(t, "cordoned", dones[0].Message)
	assert.Equal(t, "already cordoned", dones[1].Message)

	require.NoError(t, actions.Uncordon(e.ctx, e.ops, "lin-cordon", rec))
	assert.False(t, e.nodeInfo("lin-cordon").Unschedulable)

	err := actions.Cordon(e.ctx, e.ops, "no-such-node", rec)
	var nf *cluster.NodeNotFoundError
	require.ErrorAs(t, err, &nf)
	failed := rec.of("no-such-node", event.StepFailed)
	require.Len(t, failed, 1)
	assert.Contains(t, failed[0].Hint, "oc get nodes")
}

func TestDrainEvictsOnlyThisNodesPods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := e.hosts() // the simulated kubelets finish the pods' graceful deletion
	const node, other = "win-drain", "win-drain-other"
	e.node(node, "127.0.0.142", true)
	e.node(other, "127.0.0.143", true)
	h.add(node, "127.0.0.142", windows.Options{})
	ds := e.daemonSet("node-agent")
	e.pod("app-1", node, "app", nil)
	e.pod("app-2", node, "app", nil)
	e.pod("agent-1", node, "node-agent", ds)
	e.pod("app-3", other, "app", nil)
	e.pod("agent-2", other, "node-agent", ds)

	rec := &recorder{}
	require.NoError(t, actions.Drain(e.ctx, e.ops, node, request.DefaultDrainOptions(), rec), rec.dump())
	assert.Equal(t, []string{"agent-1"}, e.podsOn(node), "only the DaemonSet pod stays")
	assert.ElementsMatch(t, []string{"app-3", "agent-2"}, e.podsOn(other), "the other node is untouched")
	assert.True(t, e.nodeInfo(node).Unschedulable, "a drained node stays cordoned")
	assert.False(t, e.nodeInfo(other).Unschedulable)

	var warned, planned bool
	for _, ev := range rec.of(node, "") {
		warned = warned || ev.Kind == event.StepLog && strings.Contains(ev.Message, "DaemonSet") && strings.Contains(ev.Message, "agent-1")
		planned = planned || ev.Kind == event.StepProgress && ev.Of == 2 && strings.HasPrefix(ev.Message, "2 pods to evict")
	}
	assert.True(t, warned, "the ignored DaemonSet pod is mentioned:\n%s", rec.dump())
	assert.True(t, planned)
	progress := []int{}
	for _, ev := range rec.of(node, event.StepProgress) {
		if strings.HasPrefix(ev.Message, "evicted ") {
			progress = append(progress, ev.N)
			assert.Equal(t, 2, ev.Of)
		}
	}
	assert.Equal(t, []int{1, 2}, progress)
	f := rec.final(t, node)
	assert.Equal(t, event.Succeeded, f.Outcome)
	assert.Contains(t, f.Hint, "wmcon uncordon "+node)

	// Without --ignore-daemonsets the DaemonSet pod refuses the drain, as oc adm drain does.
	opts := request.DefaultDrainOptions()
	opts.IgnoreDaemonSets = false
	err := actions.Drain(e.ctx, e.ops, node, opts, rec)
	var partial *actions.PartialError
	require.ErrorAs(t, err, &partial)
	assert.Contains(t, err.Error(), "DaemonSet")
}

func TestDrainBlockedByBudgetThenEvictionDisabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := e.hosts()
	const node = "win-pdb"
	e.node(node, "127.0.0.144", true)
	h.add(node, "127.0.0.144", windows.Options{})
	e.pod("sql-0", node, "sql", nil)
	e.pod("web-0", node, "web", nil)
	e.blockingPDB("sql-pdb", "sql")

	rec := &recorder{answer: func(q event.Question) string { return actions.ChoiceDisableEviction }}
	opts := request.DefaultDrainOptions()
	require.NoError(t, actions.Drain(e.ctx, e.ops, node, opts, rec), rec.dump())
	assert.Empty(t, e.podsOn(node), "the protected pod was deleted once eviction was disabled")

	qs := rec.asked()
	require.Len(t, qs, 1)
	q := qs[0]
	assert.Equal(t, "drain", q.Action)
	assert.Equal(t, node, q.Target)
	assert.Contains(t, q.Title, e.ns+"/sql-pdb")
	assert.Contains(t, strings.Join(q.Detail, "\n"), e.ns+"/sql-0", "the question names the pods")
	assert.NotContains(t, strings.Join(q.Detail, "\n"), "web-0", "only the blocked pods")
	keys := []string{}
	for _, c := range q.Choices {
		keys = append(keys, c.Key)
		if c.Key == actions.ChoiceDisableEviction {
			assert.NotEmpty(t, c.Confirm, "disabling eviction asks twice")
		} else {
			assert.Empty(t, c.Confirm)
		}
	}
	assert.Equal(t, []string{actions.ChoiceWait, actions.ChoiceAbort, actions.ChoiceDisableEviction}, keys)

	var blocked, deleted bool
	for _, ev := range rec.of(node, "") {
		blocked = blocked || ev.Kind == event.StepProgress && strings.Contains(ev.Message, "blocked: PodDisruptionBudget "+e.ns+"/sql-pdb") && strings.Contains(ev.Message, "sql-0")
		deleted = deleted || ev.Kind == event.StepProgress && ev.Message == "deleted "+e.ns+"/sql-0"
	}
	assert.True(t, blocked, "the block is its own state naming budget and pod:\n%s", rec.dump())
	assert.True(t, deleted, "the pod was deleted, not evicted:\n%s", rec.dump())
}

func TestDrainBlockedByBudgetAbortLeavesNodeCordoned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := e.hosts()
	const node = "win-pdb-abort"
	e.node(node, "127.0.0.145", true)
	h.add(node, "127.0.0.145", windows.Options{})
	e.pod("sql-0", node, "sql", nil)
	e.blockingPDB("sql-pdb", "sql")

	rec := &recorder{answer: func(event.Question) string { return actions.ChoiceAbort }}
	opts := request.DefaultDrainOptions()
	err := actions.Drain(e.ctx, e.ops, node, opts, rec)
	var partial *actions.PartialError
	require.ErrorAs(t, err, &partial, rec.dump())
	var blocked *cluster.DrainBlockedError
	require.ErrorAs(t, err, &blocked)
	assert.Equal(t, []string{e.ns + "/sql-pdb"}, blocked.Block.BudgetNames())
	assert.Equal(t, "cordoned", partial.State)
	assert.Equal(t, []string{"sql-0"}, e.podsOn(node))
	assert.True(t, e.nodeInfo(node).Unschedulable)
	f := rec.final(t, node)
	assert.Equal(t, event.Failed, f.Outcome)
	assert.Contains(t, f.Hint, "node left cordoned: run wmcon uncordon "+node)
	failed := rec.of(node, event.StepFailed)
	require.Len(t, failed, 1)
	assert.Equal(t, "drain", failed[0].Step)
	assert.Contains(t, failed[0].Hint, "relax the budget or delete the pods past it: run wmcon drain "+node+" --on-pdb disable-eviction --yes-disable-eviction",
		"the hint names the headless command and flag, not console keys")
	assert.NotContains(t, failed[0].Hint+f.Hint, "press")
}

func TestDrainCancelledWhileBlocked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := e.hosts()
	const node = "win-pdb-cancel"
	e.node(node, "127.0.0.146", true)
	h.add(node, "127.0.0.146", windows.Options{})
	e.pod("sql-0", node, "sql", nil)
	e.blockingPDB("sql-pdb", "sql")
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	// The question stays open (no answer) and the user cancels the whole action.
	rec := &recorder{answer: func(event.Question) string { cancel(); return "" }}
	opts := request.DefaultDrainOptions()
	err := actions.Drain(ctx, e.ops, node, opts, rec)
	var partial *actions.PartialError
	require.ErrorAs(t, err, &partial, rec.dump())
	require.ErrorIs(t, err, context.Canceled)
	f := rec.final(t, node)
	assert.Equal(t, event.Cancelled, f.Outcome)
	assert.Contains(t, f.Hint, "node left cordoned")
	failed := rec.of(node, event.StepFailed)
	require.Len(t, failed, 1)
	assert.NotEmpty(t, failed[0].Hint)
	assert.True(t, e.nodeInfo(node).Unschedulable)
}
