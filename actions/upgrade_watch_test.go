package actions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

// watchedBackends are backends whose snapshot is a real watcher's over the test's API server.
func (e *env) watchedBackends() actions.Backends {
	e.t.Helper()
	w := cluster.NewWatcher(e.clients, cluster.Target{Server: srv.AdminConfig().Host, Context: "test"}, cluster.WatcherOptions{Coalesce: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	go w.Run(ctx)
	snapshot := func(ctx context.Context) (*model.Snapshot, error) {
		for {
			if s := w.Current(); s != nil && s.Resources[model.ResNodes].Availability == model.Available {
				return s, nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return actions.Backends{Cluster: e.ops, Snapshot: snapshot, Configure: &actions.ConfigureBackends{Cluster: e.ops}}
}

// windowsMachine backs node with a Running Windows Machine of MachineSet ms.
func (e *env) windowsMachine(ms, node, ip string) {
	e.t.Helper()
	machines := e.clients.Machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	m, err := machines.Create(e.ctx, &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels: map[string]string{config.MachineOSIDLabel: config.WindowsOSID, config.MachineSetLabel: ms}}}, metav1.CreateOptions{})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = machines.Delete(context.Background(), node, metav1.DeleteOptions{}) })
	m.Status.Phase = ptr.To("Running")
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node}
	m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	_, err = machines.UpdateStatus(e.ctx, m, metav1.UpdateOptions{})
	require.NoError(e.t, err)
}

func (e *env) patchNode(name, patch string) {
	e.t.Helper()
	_, err := e.kube.CoreV1().Nodes().Patch(e.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(e.t, err)
}

// TestUpgradeWatchFollowsTheOperator plays the operator upgrading a Machine-backed node on the real API
// server — it labels the node upgrading and cordons it, a PodDisruptionBudget holds the drain, then the node
// carries the new version — and checks that upgrade run --watch reports each of these and ends.
func TestUpgradeWatchFollowsTheOperator(t *testing.T) {
	e := newEnv(t)
	const node, ip, target = "win-upgwatch-a", "127.0.0.77", "10.0.0"
	e.node(node, ip, true)
	e.patchNode(node, `{"metadata":{"annotations":{"`+config.VersionAnnotation+`":"9.0.0"}}}`)
	e.windowsMachine("upgwatch-ms", node, ip)
	b := e.watchedBackends()

	rec := &recorder{}
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- actions.WatchUpgrade(ctx, b, target, actions.UpgradeWatchOptions{Interval: 50 * time.Millisecond}, rec)
	}()
	seen := func(s string) func() bool { return func() bool { return strings.Contains(rec.dump(), s) } }
	require.Eventually(t, seen("1. "+node+": version 9.0.0 → 10.0.0: the operator reconfigures it in place; next (Ready, schedulable)"),
		10*time.Second, 20*time.Millisecond, rec.dump())
	require.Eventually(t, seen(node+": Machine "+config.MachineAPINamespace+"/"+node+": phase Running"), 10*time.Second, 20*time.Millisecond, rec.dump())

	// The operator takes the node: upgrading, cordoned; a budget holds the drain of its pod.
	e.pod("sql-0", node, "sql", nil)
	e.blockingPDB("sql-pdb", "sql")
	e.patchNode(node, `{"metadata":{"labels":{"`+config.UpgradingLabel+`":"true"}},"spec":{"unschedulable":true}}`)
	require.Eventually(t, seen("upgrading now (Ready, cordoned)"), 10*time.Second, 20*time.Millisecond, rec.dump())
	require.Eventually(t, seen(node+": its drain is held by PodDisruptionBudget "+e.ns+"/sql-pdb (0 disruptions allowed"), 10*time.Second, 20*time.Millisecond, rec.dump())
	select {
	case err := <-done:
		t.Fatalf("the watch ended while the node upgrades: %v\n%s", err, rec.dump())
	default:
	}

	// Done: the new version, the label gone, schedulable again.
	e.patchNode(node, `{"metadata":{"labels":{"`+config.UpgradingLabel+`":null},"annotations":{"`+config.VersionAnnotation+`":"10.0.0-abc1234"}},"spec":{"unschedulable":false}}`)
	select {
	case err := <-done:
		require.NoError(t, err, rec.dump())
	case <-ctx.Done():
		t.Fatalf("the watch did not end once the node carried the target:\n%s", rec.dump())
	}
	assert.Contains(t, rec.dump(), node+" is at 10.0.0")
	final := rec.all()[len(rec.all())-1]
	assert.Equal(t, event.Finished, final.Kind)
	assert.Equal(t, event.Succeeded, final.Outcome)
}
