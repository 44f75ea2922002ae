package demo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote/sshkey"
	"github.com/wmcon/wmcon/sim/demo"
)

// waitFor reads snapshots until ok accepts one, failing the test after a bounded wait. The watcher's
// channel holds only the newest snapshot, and a quiet cluster publishes no more, so the current one is
// checked first: it may already be the one an earlier wait consumed.
func waitFor(t *testing.T, w *cluster.Watcher, what string, ok func(*model.Snapshot) bool) *model.Snapshot {
	t.Helper()
	if s := w.Current(); s != nil && ok(s) {
		return s
	}
	deadline := time.After(20 * time.Second)
	for {
		select {
		case s := <-w.Snapshots():
			if ok(s) {
				return s
			}
		case <-deadline:
			t.Fatalf("no snapshot where %s; last: %+v", what, w.Current())
		}
	}
}

func allAvailable(s *model.Snapshot) bool {
	for _, st := range s.Resources {
		if st.Availability != model.Available {
			return false
		}
	}
	return len(s.Resources) > 0
}

func TestDemoClusterContent(t *testing.T) {
	d, err := demo.New(demo.Options{Step: time.Hour})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := cluster.NewWatcher(d.Clients, d.Target, cluster.WatcherOptions{})
	go w.Run(ctx)

	waitFor(t, w, "every resource is available", allAvailable)
	s := waitFor(t, w, "all initial nodes are listed", func(s *model.Snapshot) bool { return len(s.Nodes) == 11 })

	assert.Equal(t, demo.ServerVersion, s.Cluster.KubernetesVersion, "the demo's discovery answers")
	assert.Equal(t, demo.OperatorVersion, s.Cluster.WMCOVersion)
	assert.Equal(t, demo.OpenShiftVersion, s.Cluster.OpenShiftVersion)
	assert.Equal(t, "AWS", s.Cluster.Platform)
	assert.Equal(t, demo.InfraID, s.Cluster.InfraID)

	win := s.WindowsNodes()
	require.Len(t, win, 5, "Windows nodes before the joining one")
	assert.True(t, s.Nodes[0].Windows, "Windows nodes come first")
	byName := map[string]model.NodeInfo{}
	for _, n := range win {
		byName[n.Name] = n
	}
	assert.Equal(t, model.NodeUnknown, byName[demo.NodeName("127.0.0.3")].Status, "the node whose kubelet stopped")
	assert.True(t, byName[demo.NodeName("127.0.0.4")].VersionDrift, "the node with an old WMCO version")
	assert.False(t, byName[demo.NodeName("127.0.0.2")].VersionDrift)
	assert.True(t, byName[demo.NodeName("127.0.0.5")].BYOH)
	assert.Equal(t, "127.0.0.2", byName[demo.NodeName("127.0.0.2")].InternalIP)
	hash := sshkey.PubKeyHash(d.PrivateKey.PublicKey())
	for _, n := range win {
		if n.Name != demo.NodeName(demo.StandaloneIP) { // wmcon configured that one, without WMCO
			assert.Equal(t, hash, n.Annotations[config.PubKeyHashAnnotation], "%s: WMCO configured it with the demo's key", n.Name)
		}
	}

	require.Len(t, s.MachineSets, 3)
	var windowsSets int
	for _, ms := range s.MachineSets {
		if ms.Windows {
			windowsSets++
			assert.Equal(t, "AWS", ms.Platform)
		}
	}
	assert.Equal(t, 2, windowsSets)

	assert.True(t, s.Secrets.PrivateKey.Present)
	assert.Equal(t, "ssh-ed25519", s.Secrets.PrivateKey.Type)
	assert.Contains(t, s.Secrets.PrivateKey.Fingerprint, "SHA256:")
	assert.True(t, s.Secrets.UserData.MatchesKey, s.Secrets.UserData.Problem)
	assert.True(t, s.Secrets.PullSecret)

	require.Len(t, s.Mirrors, 3)
	assert.Equal(t, "ImageDigestMirrorSet", s.Mirrors[0].Kind)
	assert.Equal(t, "NeverContactSource", s.Mirrors[1].Policy)
	assert.Equal(t, "ImageTagMirrorSet", s.Mirrors[2].Kind)
}

func TestDemoNodeJoinsWhileYouWatch(t *testing.T) {
	d, err := demo.New(demo.Options{Step: 20 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := cluster.NewWatcher(d.Clients, d.Target, cluster.WatcherOptions{Coalesce: 5 * time.Millisecond})
	go w.Run(ctx)
	waitFor(t, w, "every resource is available", allAvailable)
	go d.Run(ctx)

	joining := demo.NodeName("127.0.0.6")
	s := waitFor(t, w, "the joining node is Ready", func(s *model.Snapshot) bool {
		n, ok := s.Node(joining)
		return ok && n.Status == model.NodeReady
	})
	n, _ := s.Node(joining)
	assert.Equal(t, demo.OperatorVersion+"-3f9d0e2", n.WMCOVersion)
	assert.WithinDuration(t, time.Now(), n.Created, time.Minute, "created now, as the API server dates it: its AGE shows")
	assert.NotEmpty(t, n.UID)
	assert.Equal(t, sshkey.PubKeyHash(d.PrivateKey.PublicKey()), n.Annotations[config.PubKeyHashAnnotation], "configured with the demo's key")
	for _, ms := range s.MachineSets {
		for _, m := range ms.Machines {
			if m.NodeName == joining {
				assert.Equal(t, "Running", m.Phase)
				return
			}
		}
	}
	t.Fatalf("no Machine points at %s", joining)
}

func TestDemoAnswersDrainRequestsLikeAnAPIServer(t *testing.T) {
	d, err := demo.New(demo.Options{Step: time.Hour})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	ctx := context.Background()
	pods := d.Clients.Kube.CoreV1().Pods("")
	node := demo.NodeName("127.0.0.4")

	list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	require.NoError(t, err)
	require.Len(t, list.Items, 3, "the field selector keeps only this node's pods")
	for _, p := range list.Items {
		assert.Equal(t, node, p.Spec.NodeName)
	}

	evict := func(name string) error {
		return d.Clients.Kube.PolicyV1().Evictions("windows-apps").Evict(ctx, &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "windows-apps"}})
	}
	err = evict("sql-0")
	require.Error(t, err)
	assert.True(t, apierrors.IsTooManyRequests(err), "a budget allowing no disruption refuses the eviction: %v", err)
	assert.Contains(t, err.Error(), "disruption budget")

	require.NoError(t, evict("iis-frontend-4"))
	_, err = d.Clients.Kube.CoreV1().Pods("windows-apps").Get(ctx, "iis-frontend-4", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "an allowed eviction deletes the pod")
}

func TestDemoWindowsNodesHaveSimulatedHosts(t *testing.T) {
	d, err := demo.New(demo.Options{Step: time.Hour})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	addrs := d.HostAddrs()
	require.Len(t, addrs, 9, "six Windows nodes, and the unconfigured host by its address, its host name and its future node name")
	assert.Equal(t, d.Bare.Addr(), addrs[demo.BareHostIP])
	assert.Equal(t, d.Bare.Addr(), addrs[strings.ToLower(d.Bare.Hostname())])
	assert.Equal(t, d.Bare.Addr(), addrs[d.Bare.NodeName()], "the name its kubelet registers under (the metadata's)")
	assert.False(t, d.Bare.Exists(`C:\k`), "the unconfigured host has nothing of a node")
	for node, addr := range addrs {
		assert.True(t, strings.HasPrefix(addr, "127.0.0."), "%s listens on loopback: %s", node, addr)
	}
	assert.False(t, d.Hosts[demo.NodeName("127.0.0.3")].ServiceRunning("kubelet"), "the NotReady node's kubelet is stopped")
	assert.True(t, d.Hosts[demo.NodeName("127.0.0.2")].ServiceRunning("kubelet"))
}

// A Windows pod on the demo: the RuntimeClass admission, the scheduler stand-in and the simulated kubelet
// take it to Running on a Ready Windows node; deleting it removes it.
func TestDemoRunsWindowsPods(t *testing.T) {
	d, err := demo.New(demo.Options{Step: time.Hour})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go d.Run(ctx)
	kube := d.Clients.Kube
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "windows-2022"}, Handler: "runhcs-wcow-process",
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"},
			Tolerations: []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "Windows", Effect: corev1.TaintEffectNoSchedule}}}}
	_, err = kube.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{})
	require.NoError(t, err)
	pod := func(name, class string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "windows-apps"},
			Spec: corev1.PodSpec{RuntimeClassName: &class, Containers: []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/nanoserver:ltsc2022"}}}}
	}
	_, err = kube.CoreV1().Pods("windows-apps").Create(ctx, pod("nope", "windows-nope"), metav1.CreateOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `pod rejected: RuntimeClass "windows-nope" not found`)

	_, err = kube.CoreV1().Pods("windows-apps").Create(ctx, pod("smoke", "windows-2022"), metav1.CreateOptions{})
	require.NoError(t, err)
	var got *corev1.Pod
	require.Eventually(t, func() bool {
		got, err = kube.CoreV1().Pods("windows-apps").Get(ctx, "smoke", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodRunning && len(got.Status.ContainerStatuses) == 1
	}, 20*time.Second, 50*time.Millisecond, "the pod runs")
	assert.Contains(t, []string{"ip-127-0-0-2.ec2.internal", "ip-127-0-0-4.ec2.internal", "ip-127-0-0-5.ec2.internal"}, got.Spec.NodeName,
		"a Ready Windows node (not the one whose kubelet is stopped, not a Linux node)")
	assert.True(t, got.Status.ContainerStatuses[0].Ready)

	require.NoError(t, kube.CoreV1().Pods("windows-apps").Delete(ctx, "smoke", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := kube.CoreV1().Pods("windows-apps").Get(ctx, "smoke", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 10*time.Second, 50*time.Millisecond)
}

// TestDemoEvictedPodsComeBack: the demo plays the ReplicaSet controller: a workload pod evicted from a
// node (a drain) is replaced by a new pod, which the scheduler binds to another Windows node and whose
// kubelet runs it.
func TestDemoEvictedPodsComeBack(t *testing.T) {
	d, err := demo.New(demo.Options{Step: 20 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.Run(ctx)
	pods := d.Clients.Kube.CoreV1().Pods("windows-apps")
	count := func() int {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=iis-frontend"})
		require.NoError(t, err)
		return len(list.Items)
	}
	before := count()
	require.NoError(t, d.Clients.Kube.PolicyV1().Evictions("windows-apps").Evict(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: "iis-frontend-4", Namespace: "windows-apps"}}))
	require.Eventually(t, func() bool {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=iis-frontend"})
		if err != nil || len(list.Items) != before {
			return false
		}
		for _, p := range list.Items {
			if p.Name != "iis-frontend-4" && strings.HasPrefix(p.Name, "iis-frontend-") && p.Spec.NodeName != "" &&
				p.Status.Phase == corev1.PodRunning && time.Since(p.CreationTimestamp.Time) < time.Minute {
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "a replacement runs")
	assert.Equal(t, before, count(), "as many as before, no more")
}

// TestDemoScaledMachineSetGetsAMachine: on the default demo, nothing is added at start, and a Windows
// MachineSet scaled up gets a new Machine whose instance joins as a Ready node the demo's WMCO configured.
func TestDemoScaledMachineSetGetsAMachine(t *testing.T) {
	d, err := demo.New(demo.Options{Step: 20 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	machines := d.Clients.Machine.MachineV1beta1().Machines(config.MachineAPINamespace)
	before, err := machines.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	go d.Run(ctx)
	time.Sleep(1500 * time.Millisecond) // a round of the MachineSet stand-in
	now, err := machines.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, now.Items, len(before.Items), "the seeded MachineSets have their Machines: nothing is added")

	sets := d.Clients.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace)
	list, err := sets.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var set string
	for _, ms := range list.Items {
		if ms.Spec.Template.Labels[config.MachineOSIDLabel] == config.WindowsOSID {
			set = ms.Name
			ms.Spec.Replicas = ptrInt32(*ms.Spec.Replicas + 1)
			_, err = sets.Update(ctx, &ms, metav1.UpdateOptions{})
			require.NoError(t, err)
			break
		}
	}
	require.NotEmpty(t, set)
	var node string
	require.Eventually(t, func() bool {
		l, err := machines.List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != len(before.Items)+1 {
			return false
		}
		for _, m := range l.Items {
			if m.Labels[config.MachineSetLabel] == set && m.Status.Phase != nil && *m.Status.Phase == "Running" && m.Status.NodeRef != nil {
				n, err := d.Clients.Kube.CoreV1().Nodes().Get(ctx, m.Status.NodeRef.Name, metav1.GetOptions{})
				if err == nil && n.Annotations[config.VersionAnnotation] != "" && nodeReady(n) {
					node = n.Name
					return true
				}
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "the new Machine's node is Ready and configured")
	assert.Contains(t, d.HostAddrs(), node, "its instance answers SSH")
}

func ptrInt32(v int32) *int32 { return &v }

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
