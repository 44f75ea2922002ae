package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

func nodeEvent(ns, name, kind, objNS, objName, typ, reason string, at time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: objNS, Name: objName},
		Type:           typ, Reason: reason, Message: reason + " on " + objName,
		Source:        corev1.EventSource{Component: "kubelet"},
		LastTimestamp: metav1.NewTime(at), FirstTimestamp: metav1.NewTime(at), Count: 1,
	}
}

func TestNodeEventsRealServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	base := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	events := []*corev1.Event{
		nodeEvent("default", "ev-ready", "Node", "", "win-ev", "Normal", "NodeReady", base),
		nodeEvent("default", "ev-notready", "Node", "", "win-ev", "Warning", "NodeNotReady", base.Add(2*time.Minute)),
		nodeEvent("default", "ev-wmco", "Node", "", "win-ev", "Warning", "NodeSetupFailed", base.Add(3*time.Minute)),
		nodeEvent(config.MachineAPINamespace, "ev-machine", "Machine", config.MachineAPINamespace, "winworker-ev", "Normal", "Updated", base.Add(time.Minute)),
		nodeEvent("default", "ev-other-node", "Node", "", "win-other", "Warning", "NodeNotReady", base.Add(4*time.Minute)),
		nodeEvent("default", "ev-pod", "Pod", "default", "win-ev", "Warning", "BackOff", base.Add(5*time.Minute)),
		nodeEvent(config.OperatorNamespace, "ev-other-ns-machine", "Machine", config.OperatorNamespace, "winworker-ev", "Warning", "Elsewhere", base.Add(6*time.Minute)),
	}
	for _, e := range events {
		_, err := kube.CoreV1().Events(e.Namespace).Create(ctx, e, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = kube.CoreV1().Events(e.Namespace).Delete(context.Background(), e.Name, metav1.DeleteOptions{})
		})
	}

	got, err := cluster.NodeEvents(ctx, kube, "win-ev", config.MachineAPINamespace+"/winworker-ev", 10)
	require.NoError(t, err)
	var reasons []string
	for _, e := range got {
		reasons = append(reasons, e.Reason)
	}
	assert.Equal(t, []string{"NodeSetupFailed", "NodeNotReady", "Updated", "NodeReady"}, reasons, "the node's and its Machine's events, newest first")
	assert.Equal(t, "Machine/"+config.MachineAPINamespace+"/winworker-ev", got[2].Object)
	assert.Equal(t, "Node/win-ev", got[0].Object)
	assert.Equal(t, "kubelet", got[0].Source)
	assert.True(t, got[0].Time.Equal(base.Add(3*time.Minute)), "time is lastTimestamp, got %s", got[0].Time)

	bounded, err := cluster.NodeEvents(ctx, kube, "win-ev", "", 2)
	require.NoError(t, err)
	require.Len(t, bounded, 2)
	assert.Equal(t, "NodeSetupFailed", bounded[0].Reason)
	assert.Equal(t, "NodeNotReady", bounded[1].Reason)
}

func TestNodeEventsFiltersWhenSelectorsAreIgnored(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var objs []corev1.Event
	for i := range 30 {
		objs = append(objs, *nodeEvent("default", fmt.Sprintf("e%02d", i), "Node", "", "win-a", "Normal", fmt.Sprintf("R%02d", i), at.Add(time.Duration(i)*time.Second)))
	}
	objs = append(objs, *nodeEvent("default", "other", "Node", "", "win-b", "Warning", "Other", at.Add(time.Hour)))
	kube := kubefake.NewClientset(&corev1.EventList{Items: objs})

	got, err := cluster.NodeEvents(context.Background(), kube, "win-a", "", 0)
	require.NoError(t, err)
	require.Len(t, got, cluster.DefaultEventLimit, "a limit of 0 takes the default bound")
	assert.Equal(t, "R29", got[0].Reason, "newest first")
	for _, e := range got {
		assert.Equal(t, "Node/win-a", e.Object, "events of other objects are dropped even when the client ignores selectors")
	}
}
