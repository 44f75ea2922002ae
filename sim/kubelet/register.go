package kubelet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"

	"github.com/wmcon/wmcon/config"
)

// What the simulated Windows Server 2022 machine reports about itself.
const (
	windowsBuild     = "10.0.20348"
	kernelVersion    = windowsBuild + ".2700"
	osImage          = "Windows Server 2022 Datacenter"
	runtimeVersion   = "containerd://1.7.22"
	kubeletVersion   = "v1.37.1"
	nodeLeaseNS      = "kube-node-lease"
	leaseDurationSec = 40
)

// runNode registers the Node, then renews its Lease and posts its status until ctx ends; with
// serverTLSBootstrap it also requests the serving certificate.
func (k *kubelet) runNode(ctx context.Context, client kubernetes.Interface) error {
	node, err := k.register(ctx, client)
	if err != nil || ctx.Err() != nil {
		return nil // ctx ended while registering: the service was stopped
	}
	if k.conf.ServerTLSBootstrap {
		var serving sync.WaitGroup // the process ends only when all its work has
		defer serving.Wait()
		serving.Add(1)
		go func() {
			defer serving.Done()
			k.requestServingCert(ctx, client)
		}()
	}
	// The pods bound to this node run here (pods.go), watched with the node's own credentials as the
	// Node authorizer allows; each heartbeat also resyncs them, as the kubelet's pod workers do.
	pods := newPodRunner(client, k.nodeName, k.p)
	podCtx, stopPods := context.WithCancel(ctx)
	defer stopPods()
	inf := podInformer(podCtx, client, k.nodeName, func(p *corev1.Pod) { pods.sync(podCtx, p) })
	beat := time.NewTicker(k.opts.HeartbeatInterval)
	defer beat.Stop()
	lastStatus := time.Now()
	for {
		k.renewLease(ctx, client, node)
		if time.Since(lastStatus) >= k.opts.StatusInterval {
			k.postStatus(ctx, client)
			lastStatus = time.Now()
		}
		for _, obj := range inf.GetStore().List() {
			if p, ok := obj.(*corev1.Pod); ok {
				pods.sync(ctx, p)
			}
		}
		if inf.HasSynced() {
			reapContainers(k.p, inf.GetStore().List())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-beat.C:
		}
	}
}

// register creates the Node, retrying as the kubelet does until it succeeds or the service stops. An
// existing Node of the same name is taken over (its status refreshed), as after a kubelet restart.
func (k *kubelet) register(ctx context.Context, client kubernetes.Interface) (*corev1.Node, error) {
	k.p.Log('I', "kubelet_node_status.go:75", fmt.Sprintf(`"Attempting to register node" node=%q`, k.nodeName))
	for {
		node, err := client.CoreV1().Nodes().Create(ctx, k.nodeObject(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			node, err = client.CoreV1().Nodes().Get(ctx, k.nodeName, metav1.GetOptions{})
			if err == nil {
				k.postStatus(ctx, client)
			}
		}
		if err == nil {
			k.p.Log('I', "kubelet_node_status.go:78", fmt.Sprintf(`"Successfully registered node" node=%q`, k.nodeName))
			return node, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		k.p.Log('E', "kubelet_node_status.go:98", fmt.Sprintf(`"Unable to register node with API server" err=%q node=%q`, err.Error(), k.nodeName))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(k.opts.HeartbeatInterval):
		}
	}
}

// nodeObject is the Node as the kubelet registers it: well-known labels, --node-labels,
// registerWithTaints, addresses, capacity and node info of a Windows Server 2022 machine.
func (k *kubelet) nodeObject() *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname: k.nodeName, corev1.LabelOSStable: "windows", corev1.LabelArchStable: "amd64",
		"beta.kubernetes.io/os": "windows", "beta.kubernetes.io/arch": "amd64",
		config.WindowsBuildLabel: windowsBuild,
	}
	for key, val := range k.labels {
		labels[key] = val
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: k.nodeName, Labels: labels,
			Annotations: map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
		Spec: corev1.NodeSpec{Taints: k.registerTaints()},
	}
	node.Status = k.status()
	return node
}

func (k *kubelet) status() corev1.NodeStatus {
	maxPods := int64(k.conf.MaxPods)
	if maxPods == 0 {
		maxPods = 110
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("16Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("120Gi"),
		corev1.ResourcePods:             *resource.NewQuantity(maxPods, resource.DecimalSI),
	}
	allocatable := capacity.DeepCopy()
	for _, reserved := range []map[string]string{k.conf.SystemReserved, k.conf.KubeReserved} {
		for name, val := range reserved {
			q, err := resource.ParseQuantity(val)
			cur, ok := allocatable[corev1.ResourceName(name)]
			if err != nil || !ok {
				continue
			}
			cur.Sub(q)
			allocatable[corev1.ResourceName(name)] = cur
		}
	}
	now := metav1.NewTime(k.p.Now()) // the host's clock, as a real kubelet's
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: allocatable,
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: k.nodeIP},
			{Type: corev1.NodeHostName, Address: k.nodeName},
		},
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			k.readyCondition(cond),
		},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID: k.nodeName, SystemUUID: k.nodeName, BootID: k.p.BootID(),
			KernelVersion: kernelVersion, OSImage: osImage, ContainerRuntimeVersion: runtimeVersion,
			KubeletVersion: kubeletVersion, OperatingSystem: "windows", Architecture: "amd64",
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
	}
}

// postStatus refreshes the Node's status: Ready with a new heartbeat, keeping transition times of
// conditions that did not change.
func (k *kubelet) postStatus(ctx context.Context, client kubernetes.Interface) {
	nodes := client.CoreV1().Nodes()
	node, err := nodes.Get(ctx, k.nodeName, metav1.GetOptions{})
	if err != nil {
		k.logStatusError(ctx, err)
		return
	}
	fresh := k.status()
	for i, c := range fresh.Conditions {
		for _, old := range node.Status.Conditions {
			if old.Type == c.Type && old.Status == c.Status {
				fresh.Conditions[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	node.Status.Conditions, node.Status.Addresses, node.Status.NodeInfo = fresh.Conditions, fresh.Addresses, fresh.NodeInfo
	node.Status.Capacity, node.Status.Allocatable = fresh.Capacity, fresh.Allocatable
	node.Status.DaemonEndpoints = fresh.DaemonEndpoints
	if _, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		k.logStatusError(ctx, err)
	}
}

func (k *kubelet) logStatusError(ctx context.Context, err error) {
	if ctx.Err() == nil {
		k.p.Log('E', "kubelet_node_status.go:585", fmt.Sprintf(`"Error updating node status, will retry" err=%q`, err.Error()))
	}
}

// renewLease creates or renews the node's Lease in kube-node-lease, the heartbeat the node lifecycle
// controller watches.
func (k *kubelet) renewLease(ctx context.Context, client kubernetes.Interface, node *corev1.Node) {
	leases := client.CoordinationV1().Leases(nodeLeaseNS)
	now := metav1.NewMicroTime(k.p.Now())
	lease, err := leases.Get(ctx, k.nodeName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		holder, seconds := k.nodeName, int32(leaseDurationSec)
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: k.nodeName, Namespace: nodeLeaseNS,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now},
		}
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
	case err == nil:
		lease.Spec.RenewTime = &now
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	if err != nil && ctx.Err() == nil {
		k.p.Log('E', "controller.go:145", fmt.Sprintf(`"Failed to ensure lease exists, will retry" err=%q`, err.Error()))
	}
}

// requestServingCert posts the kubelet-serving CSR (requested by the node itself, SANs = its name and
// addresses) and stores the issued certificate; it waits as long as the kubelet runs.
func (k *kubelet) requestServingCert(ctx context.Context, client kubernetes.Interface) {
	if k.pairValid(k.certDir() + `\kubelet-server-current.pem`) {
		return // the certificate manager keeps a valid certificate until it nears expiry
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		k.p.Log('E', "certificate_manager.go:562", fmt.Sprintf(`"Failed while requesting a signed certificate from the control plane" err=%q`, err.Error()))
		return
	}
	subject := &pkix.Name{CommonName: "system:node:" + k.nodeName, Organization: []string{"system:nodes"}}
	tmpl := &x509.CertificateRequest{DNSNames: []string{k.nodeName}}
	if ip := net.ParseIP(k.nodeIP); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	certPEM, err := k.requestCertificate(ctx, client, key, subject, tmpl, certificatesv1.KubeletServingSignerName,
		certificatesv1.UsageServerAuth, "")
	if err != nil {
		k.p.Log('E', "certificate_manager.go:562", fmt.Sprintf(`"Failed while requesting a signed certificate from the control plane" err=%q logger="kubernetes.io/kubelet-serving"`, err.Error()))
		return
	}
	if certPEM == nil {
		return // stopped
	}
	pair, err := pairPEM(certPEM, key)
	if err == nil {
		err = k.p.WriteFile(k.certDir()+`\kubelet-server-current.pem`, pair)
	}
	if err != nil {
		k.p.Log('E', "certificate_manager.go:562", fmt.Sprintf(`"Failed to store the serving certificate" err=%q`, err.Error()))
	}
}

// pairValid reports whether a certificate store file holds a certificate that is valid now.
func (k *kubelet) pairValid(path string) bool {
	data, err := k.p.ReadFile(path)
	if err != nil {
		return false
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil || len(certs) == 0 {
		return false
	}
	now := time.Now()
	return now.After(certs[0].NotBefore) && now.Before(certs[0].NotAfter)
}

// NetworkNotReadyMessage is the Ready condition's message of a kubelet whose runtime has no CNI network: what
// containerd's CRI plugin reports while its conf_dir holds no valid configuration.
const NetworkNotReadyMessage = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady " +
	"message:Network plugin returns error: cni plugin not initialized"

// readyCondition is Ready, unless the runtime's network is not (no CNI configuration on the host yet).
func (k *kubelet) readyCondition(cond func(corev1.NodeConditionType, corev1.ConditionStatus, string, string) corev1.NodeCondition) corev1.NodeCondition {
	if !k.p.CNINetworkReady() {
		return cond(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", NetworkNotReadyMessage)
	}
	return cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status")
}

// TaintUninitialized is the taint a kubelet run with --cloud-provider=external registers its Node with; the
// cloud provider's node controller removes it once it has found the node's instance.
const TaintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"

// registerTaints are registerWithTaints, and the cloud provider's uninitialized taint with an external one.
func (k *kubelet) registerTaints() []corev1.Taint {
	taints := append([]corev1.Taint(nil), k.conf.RegisterWithTaints...)
	if v, _ := k.p.Flag("cloud-provider"); v == "external" {
		taints = append(taints, corev1.Taint{Key: TaintUninitialized, Value: "true", Effect: corev1.TaintEffectNoSchedule})
	}
	return taints
}
