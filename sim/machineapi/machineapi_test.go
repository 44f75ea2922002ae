package machineapi_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	machineclient "github.com/openshift/client-go/machine/clientset/versioned"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/machineapi"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	s, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	return s
}

// userData is a windows-user-data script in WMCO's form authorizing pub.
func userData(pub ssh.PublicKey, wrapped bool) []byte {
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	script := "$authorizedKeyFilePath = \"$env:ProgramData\\ssh\\administrators_authorized_keys\"\nSet-Content -Path $authorizedKeyFilePath -Value '" + key + "'\n"
	if wrapped {
		script = "<powershell>\n" + script + "</powershell>\n<persist>true</persist>\n"
	}
	return []byte(script)
}

func windowsMachineSet(name, userDataSecret string, replicas int32) *machinev1beta1.MachineSet {
	spec, _ := json.Marshal(map[string]any{"apiVersion": "machine.openshift.io/v1beta1", "kind": "AWSMachineProviderConfig",
		"placement": map[string]string{"availabilityZone": "us-east-1a", "region": "us-east-1"}, "userDataSecret": map[string]string{"name": userDataSecret}})
	labels := map[string]string{config.MachineSetClusterLabel: "sim", config.MachineSetLabel: name, config.MachineOSIDLabel: config.WindowsOSID}
	ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: config.MachineAPINamespace}}
	ms.Spec.Replicas = ptr.To(replicas)
	ms.Spec.Selector = metav1.LabelSelector{MatchLabels: map[string]string{config.MachineSetClusterLabel: "sim", config.MachineSetLabel: name}}
	ms.Spec.Template.Labels = labels
	ms.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: spec}
	return ms
}

func machinesOf(ctx context.Context, mc machineclient.Interface, set string) []machinev1beta1.Machine {
	l, err := mc.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{LabelSelector: config.MachineSetLabel + "=" + set})
	if err != nil {
		return nil
	}
	return l.Items
}

func canLogIn(addr string, hostKey ssh.PublicKey, signer ssh.Signer) error {
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: config.DefaultSSHUser, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(hostKey), Timeout: 5 * time.Second})
	if err == nil {
		_ = c.Close()
	}
	return err
}

func scaleTo(t *testing.T, ctx context.Context, mc machineclient.Interface, name string, n int32) {
	t.Helper()
	require.Eventually(t, func() bool {
		ms, err := mc.MachineV1beta1().MachineSets(config.MachineAPINamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		ms.Spec.Replicas = ptr.To(n)
		_, err = mc.MachineV1beta1().MachineSets(config.MachineAPINamespace).Update(ctx, ms, metav1.UpdateOptions{})
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)
}

// The real API server with the machine API's CRDs decides: Machines created from the MachineSet's template,
// finalizers honoured on delete, status written through the status subresource.
func TestMachinesBecomeSimulatedWindowsHosts(t *testing.T) {
	srv := kubeapi.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	mc := machineclient.NewForConfigOrDie(srv.AdminConfig())
	signer := newSigner(t)
	_, err := kube.CoreV1().Secrets(config.MachineAPINamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: config.UserDataSecret, Namespace: config.MachineAPINamespace},
		Data:       map[string][]byte{config.UserDataSecretKey: userData(signer.PublicKey(), true)}}, metav1.CreateOptions{})
	require.NoError(t, err)

	_, err = machineapi.New(kube, mc, machineapi.Options{Addresses: []string{"0.0.0.0"}}) // every interface
	require.ErrorContains(t, err, "not a loopback address")
	ctl, err := machineapi.New(kube, mc, machineapi.Options{Addresses: []string{"127.0.0.150", "127.0.0.151", "127.0.0.152"},
		OnError: func(err error) { t.Log("machinesim:", err) }})
	require.NoError(t, err)
	t.Cleanup(ctl.Close)
	go ctl.Run(ctx, 100*time.Millisecond)

	_, err = mc.MachineV1beta1().MachineSets(config.MachineAPINamespace).Create(ctx, windowsMachineSet("winworker", config.UserDataSecret, 1), metav1.CreateOptions{})
	require.NoError(t, err)

	var m machinev1beta1.Machine
	require.Eventually(t, func() bool {
		ms := machinesOf(ctx, mc, "winworker")
		if len(ms) != 1 || ptr.Deref(ms[0].Status.Phase, "") != "Provisioned" {
			return false
		}
		m = ms[0]
		return true
	}, 30*time.Second, 50*time.Millisecond, "the MachineSet's Machine is provisioned")
	assert.True(t, strings.HasPrefix(m.Name, "winworker-"))
	assert.Equal(t, config.WindowsOSID, m.Labels[config.MachineOSIDLabel], "labels from the template")
	assert.Contains(t, m.Finalizers, machineapi.Finalizer)
	assert.True(t, strings.HasPrefix(ptr.Deref(m.Spec.ProviderID, ""), "aws:///us-east-1a/i-0"), ptr.Deref(m.Spec.ProviderID, ""))
	assert.Contains(t, m.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.150"})
	host := ctl.Hosts()[m.Name]
	require.NotNil(t, host)
	addr := ctl.Addrs()["127.0.0.150"]
	require.NoError(t, canLogIn(addr, host.HostKey(), signer), "the user data's key is authorized")
	require.Error(t, canLogIn(addr, host.HostKey(), newSigner(t)), "another key is not")

	// A Node with the instance's address links the Machine: Running, nodeRef, the Node annotated.
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-127-0-0-150.ec2.internal"}}
	n, err = kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	require.NoError(t, err)
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.150"}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
	_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := mc.MachineV1beta1().Machines(config.MachineAPINamespace).Get(ctx, m.Name, metav1.GetOptions{})
		return err == nil && ptr.Deref(got.Status.Phase, "") == "Running" && got.Status.NodeRef != nil && got.Status.NodeRef.Name == n.Name
	}, 20*time.Second, 50*time.Millisecond, "the Machine is Running with its node")
	got, err := kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, config.MachineAPINamespace+"/"+m.Name, got.Annotations[config.MachineAnnotation])
	counts := func(replicas, ready int32) func() bool {
		return func() bool {
			ms, err := mc.MachineV1beta1().MachineSets(config.MachineAPINamespace).Get(ctx, "winworker", metav1.GetOptions{})
			return err == nil && ms.Status.Replicas == replicas && ms.Status.ReadyReplicas == ready
		}
	}
	require.Eventually(t, counts(1, 0), 20*time.Second, 50*time.Millisecond, "a Machine whose node is not Ready is not ready")
	got.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	_, err = kube.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, counts(1, 1), 20*time.Second, 50*time.Millisecond, "its node Ready: the MachineSet counts it ready")

	// Scaling up adds a Machine on the next address; scaling to 0 deletes both, their instances and Node.
	scaleTo(t, ctx, mc, "winworker", 2)
	require.Eventually(t, func() bool { _, ok := ctl.Addrs()["127.0.0.151"]; return ok }, 30*time.Second, 50*time.Millisecond)
	scaleTo(t, ctx, mc, "winworker", 0)
	require.Eventually(t, func() bool { return len(machinesOf(ctx, mc, "winworker")) == 0 }, 30*time.Second, 50*time.Millisecond,
		"the Machines go once their instances are gone (finalizer removed)")
	assert.Empty(t, ctl.Hosts())
	assert.Error(t, canLogIn(addr, host.HostKey(), signer), "the instance is stopped")
	_, err = kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the machine controller deletes the Machine's Node")

	t.Run("no user data secret: the create fails and is retried", func(t *testing.T) {
		_, err := mc.MachineV1beta1().MachineSets(config.MachineAPINamespace).Create(ctx, windowsMachineSet("nodata", "missing-user-data", 1), metav1.CreateOptions{})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			ms := machinesOf(ctx, mc, "nodata")
			if len(ms) != 1 || ptr.Deref(ms[0].Status.Phase, "") != "Provisioning" {
				return false
			}
			evs, err := kube.CoreV1().Events(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			for _, e := range evs.Items {
				if e.InvolvedObject.Name == ms[0].Name && e.Reason == "FailedCreate" && strings.Contains(e.Message, "missing-user-data") {
					return true
				}
			}
			return false
		}, 30*time.Second, 50*time.Millisecond)
		assert.Empty(t, ctl.Hosts(), "no instance without user data")
	})

	t.Run("user data the platform does not run leaves the instance unreachable", func(t *testing.T) {
		_, err := kube.CoreV1().Secrets(config.MachineAPINamespace).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "unwrapped", Namespace: config.MachineAPINamespace},
			Data:       map[string][]byte{config.UserDataSecretKey: userData(signer.PublicKey(), false)}}, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = mc.MachineV1beta1().MachineSets(config.MachineAPINamespace).Create(ctx, windowsMachineSet("unwrapped", "unwrapped", 1), metav1.CreateOptions{})
		require.NoError(t, err)
		var name string
		require.Eventually(t, func() bool {
			ms := machinesOf(ctx, mc, "unwrapped")
			if len(ms) == 1 && ptr.Deref(ms[0].Status.Phase, "") == "Provisioned" {
				name = ms[0].Name
				return true
			}
			return false
		}, 30*time.Second, 50*time.Millisecond)
		h := ctl.Hosts()[name]
		require.NotNil(t, h)
		assert.Error(t, canLogIn(h.Addr(), h.HostKey(), signer), "without <powershell> EC2Launch never ran the script")
	})
}
