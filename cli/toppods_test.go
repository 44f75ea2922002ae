package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/sim/windows"
)

// TestTopPodsDemo: wmcon --demo top pods -A lists the Windows pods with CPU and memory in oc adm top pods'
// columns and units, and says where the figures come from.
func TestTopPodsDemo(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "top", "pods", "-A", "--interval", "300ms")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "metrics: windows_exporter's container collector via the demo's simulated hosts (in-process) (the demo cluster has no Prometheus")
	assert.Regexp(t, regexp.MustCompile(`(?m)^NAMESPACE\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)$`), out)
	for _, pod := range []string{"iis-frontend-2", "dotnet-api-2", "iis-frontend-3", "dotnet-api-4", "sql-0", "dotnet-api-8"} {
		assert.Regexp(t, regexp.MustCompile(`(?m)^windows-apps\s+`+pod+`\s+\d+m\s+\d+Mi$`), out, pod)
	}
	assert.Regexp(t, regexp.MustCompile(`(?m)^windows-apps\s+dotnet-api-3\s+3\d\d\dm\s+1150Mi$`), out, "the pod pinning the busy node's CPU")
	assert.Regexp(t, regexp.MustCompile(`(?m)^windows-apps\s+dotnet-api-5\s+\d+m\s+9216Mi$`), out, "the pod holding the full node's memory")
	assert.Len(t, regexp.MustCompile(`(?m)^windows-apps\s`).FindAllString(out, -1), 11, "every running Windows pod, no Linux one")
	assert.NotContains(t, out, "no pod metrics")
}

func TestTopPodsDemoOptions(t *testing.T) {
	code, out, errOut := runWmcon(t, "--demo", "top", "pods", "-n", "windows-apps", "--node", "ip-127-0-0-4.ec2.internal",
		"--sort-by", "memory", "--interval", "300ms")
	require.Equal(t, 0, code, errOut)
	rows := tableRows(out)
	require.Len(t, rows, 4, out)
	assert.Regexp(t, `^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)$`, rows[0], "one namespace: no NAMESPACE column")
	assert.Regexp(t, `^sql-0\s+\d+m\s+4900Mi$`, rows[1], "the largest memory first")
	assert.Regexp(t, `^dotnet-api-4\s`, rows[2])
	assert.Regexp(t, `^iis-frontend-4\s`, rows[3])

	code, out, errOut = runWmcon(t, "--demo", "top", "pods", "-A", "--containers", "--sort-by", "cpu", "--node", "ip-127-0-0-3.ec2.internal", "--interval", "300ms")
	require.Equal(t, 0, code, errOut)
	rows = tableRows(out)
	require.Len(t, rows, 3, out)
	assert.Regexp(t, `^NAMESPACE\s+POD\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)$`, rows[0])
	assert.Regexp(t, `^windows-apps\s+dotnet-api-3\s+dotnet-api\s+3\d\d\dm\s+1150Mi$`, rows[1], "the busiest first")

	code, out, errOut = runWmcon(t, "--demo", "top", "pods", "-A", "-o", "json", "--interval", "300ms")
	require.Equal(t, 0, code, errOut)
	var r model.PodMetricsReport
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, 11, r.Asked)
	require.Len(t, r.Pods, 11)
	var leak model.PodMetrics
	for _, p := range r.Pods {
		require.NotNil(t, p.CPUCores, p.Name)
		if p.Name == "iis-frontend-2" {
			leak = p
		}
	}
	assert.Equal(t, "ip-127-0-0-2.ec2.internal", leak.Node)
	assert.Equal(t, model.Resources{CPUCores: 1, MemoryBytes: 1 << 30}, leak.Limits)
	require.Len(t, leak.Containers, 1)
	assert.GreaterOrEqual(t, *leak.MemoryBytes, 0.88*(1<<30), "the leaking pod near its limit")

	code, out, errOut = runWmcon(t, "--demo", "top", "pods", "--interval", "300ms")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "no running pods on Windows nodes in namespace default (-A for every namespace)", "oc's default namespace")
}

// tableRows are the lines of a top pods table: from its header to the first blank or message line.
func tableRows(out string) []string {
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "NAME") || strings.HasPrefix(l, "NAMESPACE") || len(rows) > 0 && l != "" && !strings.Contains(l, ": no pod metrics") {
			rows = append(rows, l)
		}
	}
	return rows
}

func TestTopPodsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "yaml"}, `--output "yaml": use text or json`},
		{[]string{"--sort-by", "disk"}, `--sort-by "disk": use cpu or memory`},
		{[]string{"-A", "-n", "apps"}, "-A (every namespace) and -n apps (one namespace) contradict each other: give one"},
		{[]string{"--interval", "0s"}, "--interval 0s: use 100ms to 1m"},
		{[]string{"web-1"}, `unknown command "web-1" for "wmcon top pods"`},
		{[]string{"--bogus"}, "unknown flag: --bogus"},
	} {
		code, _, errOut := runWmcon(t, append([]string{"--demo", "top", "pods"}, tc.args...)...)
		assert.Equal(t, ExitUsage, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
	_, out, _ := runWmcon(t, "--demo", "__complete", "top", "pods", "--sort-by", "")
	assert.Contains(t, out, "cpu\nmemory\n", "--sort-by completes its values")
	_, out, _ = runWmcon(t, "--demo", "__complete", "top", "pods", "--node", "")
	assert.Contains(t, out, "ip-127-0-0-2.ec2.internal", "--node completes node names")
	code, _, errOut := runWmcon(t, "--demo", "top", "pods", "--node", "ip-127-0-1-10.ec2.internal")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "node ip-127-0-1-10.ec2.internal is not a Windows node: wmcon reads the pods of Windows nodes (oc adm top pods shows the others)")
	code, _, errOut = runWmcon(t, "--demo", "top", "pods", "--node", "no-such-node")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, `node "no-such-node" not found`)
}

// TestTopPodsFallsBackWhereTheNodeProxyIsForbidden: a user who may read nodes and pods but not
// nodes/proxy runs wmcon top pods against the real API server; its RBAC refuses the kubelet summary, the
// cluster has no thanos-querier, so wmcon reads the container collector of the node's host's
// windows_exporter over SSH, joins the container to the pod through the ID in its status, and says why.
func TestTopPodsFallsBackWhereTheNodeProxyIsForbidden(t *testing.T) {
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	b := newBareHosts(t)
	const node, ip, user, ns = "win-top-pods", "127.0.0.134", "wmcon-top-pods-no-proxy", "top-pods"
	h := b.startOpts(node, ip, windows.Options{Configured: true})

	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
		Labels: map[string]string{config.OSLabel: "windows", config.WindowsBuildLabel: "10.0.20348"},
		Annotations: map[string]string{config.HostKeyAnnotation: base64.StdEncoding.EncodeToString(h.HostKey().Marshal()),
			config.HostKeyTypeAnnotation: h.HostKey().Type()}}}
	n, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	now := metav1.Now()
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: now, LastTransitionTime: now}}
	_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)

	// The pod, running on the node as its kubelet reports it, and its container on the host.
	_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	_, err = kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: ns}, Spec: corev1.PodSpec{NodeName: node,
		AutomountServiceAccountToken: new(bool), Containers: []corev1.Container{{Name: "iis", Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	pod, err = kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	const id = "5e1f0c3a9b7d4e2f8a6c1b0d3e5f7a9c2b4d6e8f0a1c3e5b7d9f1a3c5e7b9d0f"
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "iis", Image: pod.Spec.Containers[0].Image, ContainerID: "containerd://" + id,
		Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
	_, err = kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	require.NoError(t, err)
	h.StartContainer(windows.Container{ID: id, Namespace: ns, Pod: "web-1", PodUID: string(pod.UID), Name: "iis"},
		windows.ContainerLoad{CPUCores: 0.75, MemoryBytes: 600 << 20})

	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"get", "list", "watch"}}}}
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

	var code int
	var out, errOut string
	for range 3 { // the RBAC authorizer's cache may take a moment to see the new binding
		code, out, errOut = runWmcon(t, b.args(viewer, "top", "pods", "-n", ns, "--node", node, "--interval", "500ms")...)
		if code == 0 && strings.Contains(out, "web-1") {
			break
		}
		time.Sleep(time.Second)
	}
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "metrics: windows_exporter's container collector via SSH to each host")
	assert.Contains(t, out, "the kubelets' summary API is forbidden to this user (get nodes/proxy", "says why the first source was not used")
	assert.Contains(t, out, `cannot get resource "nodes/proxy"`, "in the API server's words")
	assert.Contains(t, out, "thanos-querier", "and why not the second")
	assert.Regexp(t, regexp.MustCompile(`(?m)^web-1\s+7\d\dm\s+600Mi$`), out, "the container's figures, read over SSH")
	assert.NotContains(t, out, "no pod metrics")
}
