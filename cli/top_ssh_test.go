package cli

import (
	"context"
	"encoding/base64"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/windows"
)

// TestTopReadsTheExporterOverSSHWhereTheNodeProxyIsForbidden: a user who may read nodes but not
// nodes/proxy runs wmcon top against the real API server, whose RBAC answers the exporter read through the
// node proxy with 403; wmcon then reads the windows_exporter of the node's (configured, simulated) host over
// its SSH connection — the only other way to the figures — and prints them.
func TestTopReadsTheExporterOverSSHWhereTheNodeProxyIsForbidden(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	b := newBareHosts(t)
	const node, ip, user = "win-top-ssh", "127.0.0.133", "wmcon-top-no-proxy"
	h := b.startOpts(node, ip, windows.Options{Configured: true})

	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels: map[string]string{config.OSLabel: "windows", config.WindowsBuildLabel: "10.0.20348"},
		Annotations: map[string]string{config.HostKeyAnnotation: base64.StdEncoding.EncodeToString(h.HostKey().Marshal()),
			config.HostKeyTypeAnnotation: h.HostKey().Type()}}} // pinned, as configuring the node leaves it
	n, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	now := metav1.Now()
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: now, LastTransitionTime: now}}
	_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)

	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}}}}
	_, err = kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.RbacV1().ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{}) })
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
	viewer := srv.Kubeconfig(user)
	proxied := kubernetes.NewForConfigOrDie(srv.UserConfig(user)).CoreV1().RESTClient().Get().
		AbsPath("/api/v1/nodes/" + node + ":9182/proxy/metrics").Do(ctx).Error()
	require.Error(t, proxied)
	require.Contains(t, proxied.Error(), "forbidden", "the node proxy must be refused for this test to mean anything")

	var code int
	var out, errOut string
	for i := 0; i < 3; i++ { // the RBAC authorizer's cache may take a moment to see the new binding
		code, out, errOut = runWmcon(t, b.args(viewer, "top", node, "--interval", "300ms")...)
		if code == 0 {
			break
		}
		time.Sleep(time.Second)
	}
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Regexp(t, regexp.MustCompile(`(?m)^`+node+`\s+\d+%\s+\d+%\s+\S+\s+C:`), out, "the host's figures, read over SSH")
	assert.NotContains(t, out, "cannot", "no node without figures")
}
