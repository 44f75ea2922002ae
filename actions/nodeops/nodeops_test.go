package nodeops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/nodeops"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

func TestCordonAndUncordon(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	e.Node("lin-cordon", "127.0.0.141", false)
	rec := &actiontest.Recorder{}
	require.NoError(t, nodeops.Cordon(e.Ctx, e.Ops, "lin-cordon", rec))
	assert.True(t, e.NodeInfo("lin-cordon").Unschedulable, "cordon works on any node")
	require.NoError(t, nodeops.Cordon(e.Ctx, e.Ops, "lin-cordon", rec))
	dones := rec.Of("lin-cordon", event.StepDone)
	require.Len(t, dones, 2)
	assert.Equal(t, "cordoned", dones[0].Message)
	assert.Equal(t, "already cordoned", dones[1].Message)

	require.NoError(t, nodeops.Uncordon(e.Ctx, e.Ops, "lin-cordon", rec))
	assert.False(t, e.NodeInfo("lin-cordon").Unschedulable)

	err := nodeops.Cordon(e.Ctx, e.Ops, "no-such-node", rec)
	var nf *cluster.NodeNotFoundError
	require.ErrorAs(t, err, &nf)
	failed := rec.Of("no-such-node", event.StepFailed)
	require.Len(t, failed, 1)
	assert.Contains(t, failed[0].Hint, "oc get nodes")
}

func TestDrainEvictsOnlyThisNodesPods(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts() // the simulated kubelets finish the pods' graceful deletion
	const node, other = "win-drain", "win-drain-other"
	e.Node(node, "127.0.0.142", true)
	e.Node(other, "127.0.0.143", true)
	h.Add(node, "127.0.0.142", windows.Options{})
	ds := e.DaemonSet("node-agent")
	e.Pod("app-1", node, "app", nil)
	e.Pod("app-2", node, "app", nil)
	e.Pod("agent-1", node, "node-agent", ds)
	e.Pod("app-3", other, "app", nil)
	e.Pod("agent-2", other, "node-agent", ds)

	rec := &actiontest.Recorder{}
	require.NoError(t, nodeops.Drain(e.Ctx, e.Ops, node, request.DefaultDrainOptions(), rec), rec.Dump())
	assert.Equal(t, []string{"agent-1"}, e.PodsOn(node), "only the DaemonSet pod stays")
	assert.ElementsMatch(t, []string{"app-3", "agent-2"}, e.PodsOn(other), "the other node is untouched")
	assert.True(t, e.NodeInfo(node).Unschedulable, "a drained node stays cordoned")
	assert.False(t, e.NodeInfo(other).Unschedulable)

	var warned, planned bool
	for _, ev := range rec.Of(node, "") {
		warned = warned || ev.Kind == event.StepLog && strings.Contains(ev.Message, "DaemonSet") && strings.Contains(ev.Message, "agent-1")
		planned = planned || ev.Kind == event.StepProgress && ev.Of == 2 && strings.HasPrefix(ev.Message, "2 pods to evict")
	}
	assert.True(t, warned, "the ignored DaemonSet pod is mentioned:\n%s", rec.Dump())
	assert.True(t, planned)
	progress := []int{}
	for _, ev := range rec.Of(node, event.StepProgress) {
		if strings.HasPrefix(ev.Message, "evicted ") {
			progress = append(progress, ev.N)
			assert.Equal(t, 2, ev.Of)
		}
	}
	assert.Equal(t, []int{1, 2}, progress)
	f := rec.Final(t, node)
	assert.Equal(t, event.Succeeded, f.Outcome)
	assert.Contains(t, f.Hint, "wmcon uncordon "+node)

	// Without --ignore-daemonsets the DaemonSet pod refuses the drain, as oc adm drain does.
	opts := request.DefaultDrainOptions()
	opts.IgnoreDaemonSets = false
	err := nodeops.Drain(e.Ctx, e.Ops, node, opts, rec)
	var partial *nodeops.PartialError
	require.ErrorAs(t, err, &partial)
	assert.Contains(t, err.Error(), "DaemonSet")
}

func TestDrainBlockedByBudgetThenEvictionDisabled(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	const node = "win-pdb"
	e.Node(node, "127.0.0.144", true)
	h.Add(node, "127.0.0.144", windows.Options{})
	e.Pod("sql-0", node, "sql", nil)
	e.Pod("web-0", node, "web", nil)
	e.BlockingPDB("sql-pdb", "sql")

	rec := &actiontest.Recorder{Answer: func(q event.Question) string { return event.ChoiceDisableEviction }}
	opts := request.DefaultDrainOptions()
	require.NoError(t, nodeops.Drain(e.Ctx, e.Ops, node, opts, rec), rec.Dump())
	assert.Empty(t, e.PodsOn(node), "the protected pod was deleted once eviction was disabled")

	qs := rec.Asked()
	require.Len(t, qs, 1)
	q := qs[0]
	assert.Equal(t, "drain", q.Action)
	assert.Equal(t, node, q.Target)
	assert.Contains(t, q.Title, e.NS+"/sql-pdb")
	assert.Contains(t, strings.Join(q.Detail, "\n"), e.NS+"/sql-0", "the question names the pods")
	assert.NotContains(t, strings.Join(q.Detail, "\n"), "web-0", "only the blocked pods")
	keys := []string{}
	for _, c := range q.Choices {
		keys = append(keys, c.Key)
		if c.Key == event.ChoiceDisableEviction {
			assert.NotEmpty(t, c.Confirm, "disabling eviction asks twice")
		} else {
			assert.Empty(t, c.Confirm)
		}
	}
	assert.Equal(t, []string{event.ChoiceWait, event.ChoiceAbort, event.ChoiceDisableEviction}, keys)

	var blocked, deleted bool
	for _, ev := range rec.Of(node, "") {
		blocked = blocked || ev.Kind == event.StepProgress && strings.Contains(ev.Message, "blocked: PodDisruptionBudget "+e.NS+"/sql-pdb") && strings.Contains(ev.Message, "sql-0")
		deleted = deleted || ev.Kind == event.StepProgress && ev.Message == "deleted "+e.NS+"/sql-0"
	}
	assert.True(t, blocked, "the block is its own state naming budget and pod:\n%s", rec.Dump())
	assert.True(t, deleted, "the pod was deleted, not evicted:\n%s", rec.Dump())
}

func TestDrainBlockedByBudgetAbortLeavesNodeCordoned(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	const node = "win-pdb-abort"
	e.Node(node, "127.0.0.145", true)
	h.Add(node, "127.0.0.145", windows.Options{})
	e.Pod("sql-0", node, "sql", nil)
	e.BlockingPDB("sql-pdb", "sql")

	rec := &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceAbort }}
	opts := request.DefaultDrainOptions()
	err := nodeops.Drain(e.Ctx, e.Ops, node, opts, rec)
	var partial *nodeops.PartialError
	require.ErrorAs(t, err, &partial, rec.Dump())
	var blocked *cluster.DrainBlockedError
	require.ErrorAs(t, err, &blocked)
	assert.Equal(t, []string{e.NS + "/sql-pdb"}, blocked.Block.BudgetNames())
	assert.Equal(t, "cordoned", partial.State)
	assert.Equal(t, []string{"sql-0"}, e.PodsOn(node))
	assert.True(t, e.NodeInfo(node).Unschedulable)
	f := rec.Final(t, node)
	assert.Equal(t, event.Failed, f.Outcome)
	assert.Contains(t, f.Hint, "node left cordoned: run wmcon uncordon "+node)
	failed := rec.Of(node, event.StepFailed)
	require.Len(t, failed, 1)
	assert.Equal(t, "drain", failed[0].Step)
	assert.Contains(t, failed[0].Hint, "relax the budget or delete the pods past it: run wmcon drain "+node+" --on-pdb disable-eviction --yes-disable-eviction",
		"the hint names the headless command and flag, not console keys")
	assert.NotContains(t, failed[0].Hint+f.Hint, "press")
}

func TestDrainCancelledWhileBlocked(t *testing.T) {
	t.Parallel()
	e := actiontest.NewEnv(t)
	h := e.Hosts()
	const node = "win-pdb-cancel"
	e.Node(node, "127.0.0.146", true)
	h.Add(node, "127.0.0.146", windows.Options{})
	e.Pod("sql-0", node, "sql", nil)
	e.BlockingPDB("sql-pdb", "sql")
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	// The question stays open (no answer) and the user cancels the whole action.
	rec := &actiontest.Recorder{Answer: func(event.Question) string { cancel(); return "" }}
	opts := request.DefaultDrainOptions()
	err := nodeops.Drain(ctx, e.Ops, node, opts, rec)
	var partial *nodeops.PartialError
	require.ErrorAs(t, err, &partial, rec.Dump())
	require.ErrorIs(t, err, context.Canceled)
	f := rec.Final(t, node)
	assert.Equal(t, event.Cancelled, f.Outcome)
	assert.Contains(t, f.Hint, "node left cordoned")
	failed := rec.Of(node, event.StepFailed)
	require.Len(t, failed, 1)
	assert.NotEmpty(t, failed[0].Hint)
	assert.True(t, e.NodeInfo(node).Unschedulable)
}
