package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/config"
)

// The demo cluster meets every prerequisite: exit 0, and the JSON report lists every check.
func TestDoctorOnTheDemo(t *testing.T) {
	code, out, stderr := runWmcon(t, "--demo", "doctor", "-o", "json")
	require.Equal(t, ExitOK, code, stderr)
	var rep diagnosis.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "demo-7xk2p", rep.Cluster)
	assert.True(t, rep.Healthy(), rep.Summary())
	logs, ok := rep.Check("access-node-logs")
	require.True(t, ok)
	assert.Equal(t, diagnosis.CheckWarn, logs.Status, "the demo's API server has no node proxy")

	code, out, _ = runWmcon(t, "--demo", "doctor")
	require.Equal(t, ExitOK, code)
	assert.Contains(t, out, "demo-7xk2p: 0 failing, 1 warning")
	assert.Contains(t, out, "ok    WMCO: WMCO 11.0.1 installed")
}

// A failing check exits 1: here the test server has no cloud-private-key and a Windows node. Before the
// first Windows node the missing key is a warning, a setup step still to do (exit 0), as the wizard says.
func TestDoctorExitsOneWhenACheckFails(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	err := kube.CoreV1().Secrets(config.OperatorNamespace).Delete(ctx, config.PrivateKeySecret, metav1.DeleteOptions{})
	require.True(t, err == nil || apierrors.IsNotFound(err), "%v", err)
	code, out, stderr := runWmcon(t, kubeconfigArgs(t, "doctor")...)
	require.Equal(t, ExitOK, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "WARN  SSH key (cloud-private-key)")

	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "doctor-win-1", Labels: map[string]string{config.OSLabel: "windows"}}}
	_, err = kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}) })
	code, out, stderr = runWmcon(t, kubeconfigArgs(t, "doctor")...)
	require.Equal(t, ExitFailed, code, out)
	assert.Contains(t, out, "FAIL  SSH key (cloud-private-key)")
	assert.Contains(t, stderr, "failing check")
}
