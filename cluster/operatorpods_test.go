package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/wmcon/wmcon/config"
)

// TestOperatorPodsHealthAndRecentLog: the operator's pods with their readiness, restarts and last exit,
// and the running pod's last lines (asked for with a tail); a log that cannot be read says why.
func TestOperatorPodsHealthAndRecentLog(t *testing.T) {
	finished := time.Date(2026, 11, 23, 0, 4, 14, 0, time.UTC)
	pod := func(name string, phase corev1.PodPhase) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: config.OperatorNamespace, Labels: map[string]string{"name": config.OperatorName}}}
		p.Spec.Containers = []corev1.Container{{Name: config.OperatorContainer}}
		p.Status.Phase = phase
		return p
	}
	running := pod("wmco-b", corev1.PodRunning)
	running.Status.ContainerStatuses = []corev1.ContainerStatus{{Ready: true, RestartCount: 2, LastTerminationState: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, FinishedAt: metav1.NewTime(finished)}}}}
	pending := pod("wmco-a", corev1.PodPending)
	kube := kubefake.NewClientset(running, pending)
	var asked *corev1.PodLogOptions
	kube.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "log" {
			return false, nil, nil
		}
		asked, _ = a.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions)
		return true, &runtime.Unknown{Raw: []byte("first\n\nsecond\n")}, nil
	})
	o := &OLM{Kube: kube}
	var st OperatorState
	require.NoError(t, o.readOperatorPods(context.Background(), &st))
	require.Len(t, st.Pods, 2)
	assert.Equal(t, OperatorPod{Name: "wmco-a", Phase: "Pending", Containers: 1}, st.Pods[0])
	assert.Equal(t, "wmco-b", st.Pods[1].Name)
	assert.True(t, st.Pods[1].Ready)
	assert.Equal(t, int32(2), st.Pods[1].Restarts)
	assert.Equal(t, "OOMKilled, exit 137 at 2026-11-23T00:04:14Z", st.Pods[1].LastExit)
	assert.Equal(t, []string{"first", "second"}, st.Log, "the running pod's lines, blank ones dropped")
	require.NotNil(t, asked)
	assert.Equal(t, config.OperatorContainer, asked.Container)
	assert.Equal(t, int64(operatorRecentLines), *asked.TailLines)

	broken := kubefake.NewClientset(running)
	broken.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "log" {
			return true, nil, errors.New("pods \"wmco-b\" is forbidden: cannot get pods/log")
		}
		return false, nil, nil
	})
	st = OperatorState{}
	require.NoError(t, (&OLM{Kube: broken}).readOperatorPods(context.Background(), &st))
	assert.Empty(t, st.Log)
	assert.Contains(t, st.LogErr, "cannot read the log of wmco-b")
}
