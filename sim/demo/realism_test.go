package demo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/demo"
	"github.com/wmcon/wmcon/sim/kubelet"
)

// TestDemoIsRealistic: what a real cluster's controllers add is there in the demo too. The node whose
// kubelet stopped carries the unreachable taints and a NodeNotReady event from when it went silent, its
// log ends then; the MachineSets' ready counts follow their Machines' nodes, the joining one included.
func TestDemoIsRealistic(t *testing.T) {
	d, err := demo.New(demo.Options{Step: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := cluster.NewWatcher(d.Clients, d.Target, cluster.WatcherOptions{Coalesce: 5 * time.Millisecond})
	go w.Run(ctx)
	waitFor(t, w, "every resource is available", allAvailable)
	go d.Run(ctx)

	silent := demo.NodeName("127.0.0.3")
	require.Eventually(t, func() bool {
		n, err := d.Clients.Kube.CoreV1().Nodes().Get(ctx, silent, metav1.GetOptions{})
		if err != nil {
			return false
		}
		effects := map[string]bool{}
		for _, t := range n.Spec.Taints {
			if t.Key == kubelet.TaintUnreachable {
				effects[string(t.Effect)] = true
			}
		}
		return effects["NoSchedule"] && effects["NoExecute"]
	}, 20*time.Second, 50*time.Millisecond, "the silent node is tainted unreachable")
	// The taints and the event are two writes (as the node lifecycle controller makes them): wait for the event too.
	var events []cluster.EventInfo
	require.Eventually(t, func() bool {
		events, err = cluster.NodeEvents(ctx, d.Clients.Kube, silent, "", 0)
		return err == nil && len(events) > 0
	}, 10*time.Second, 50*time.Millisecond, "the silent node's NodeNotReady event is recorded")
	assert.Equal(t, "NodeNotReady", events[0].Reason)
	assert.Greater(t, time.Since(events[0].Time), 5*time.Minute, "dated when its kubelet stopped, minutes ago")

	log, err := d.Hosts[silent].ReadFile(`C:\var\log\kubelet\kubelet.log`)
	require.NoError(t, err)
	time.Sleep(1500 * time.Millisecond)
	again, err := d.Hosts[silent].ReadFile(`C:\var\log\kubelet\kubelet.log`)
	require.NoError(t, err)
	assert.Equal(t, string(log), string(again), "a stopped kubelet writes no new lines")

	counts := func(s *model.Snapshot) map[string][2]int {
		out := map[string][2]int{}
		for _, ms := range s.MachineSets {
			out[ms.Name] = [2]int{int(ms.Ready), int(ms.Current)}
		}
		return out
	}
	zoneA, zoneB := demo.InfraID+"-winworker-us-east-1a", demo.InfraID+"-winworker-us-east-1b"
	waitFor(t, w, "zone a counts its NotReady node out", func(s *model.Snapshot) bool {
		return counts(s)[zoneA] == [2]int{1, 2}
	})
	waitFor(t, w, "zone b counts its joined node in", func(s *model.Snapshot) bool {
		return counts(s)[zoneB] == [2]int{2, 2}
	})
}
