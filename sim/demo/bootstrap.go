package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/ovn"
	"github.com/wmcon/wmcon/sim/windows"
)

// The OpenShift node bootstrap credentials the demo holds, as a real cluster does (testsupport/kubeapi seeds
// the same names on the real API server).
const (
	bootstrapperNamespace = "openshift-machine-config-operator"
	bootstrapperSecret    = "node-bootstrapper-token"
	bootstrapperUser      = "system:serviceaccount:" + bootstrapperNamespace + ":node-bootstrapper"
)

// startControlPlane gives the demo what a joining kubelet needs from a control plane: the stand-in that
// checks its credentials and signs approved CSRs (there is no API server or controller manager in the
// demo; see kubelet.DemoControlPlane), and the node-bootstrapper token secret a configuration reads.
func (c *Cluster) startControlPlane(now time.Time) error {
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return fmt.Errorf("demo bootstrap token: %w", err)
	}
	token := hex.EncodeToString(raw)
	cp, err := kubelet.NewDemoControlPlane(c.kube, infrastructure(now).Status.APIServerInternalURL, token, bootstrapperUser)
	if err != nil {
		return err
	}
	c.ControlPlane = cp
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: meta(bootstrapperNamespace, "", 40*24*time.Hour, now)}
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("demo namespace %s: %w", bootstrapperNamespace, err)
	}
	s := secret(bootstrapperSecret, bootstrapperNamespace, corev1.ServiceAccountTokenKey, []byte(token), corev1.SecretTypeServiceAccountToken, now)
	s.Annotations = map[string]string{corev1.ServiceAccountNameKey: "node-bootstrapper"}
	s.Data[corev1.ServiceAccountRootCAKey] = cp.CACert()
	s.Data[corev1.ServiceAccountNamespaceKey] = []byte(bootstrapperNamespace)
	if _, err := c.kube.CoreV1().Secrets(bootstrapperNamespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("demo secret %s: %w", bootstrapperSecret, err)
	}
	return nil
}

// KubeletProgram is the honest kubelet for a demo host that wmcon configures: pass it as
// windows.Options.Programs["kubelet.exe"]. It joins the demo cluster through ControlPlane with the files
// written on the host, exactly as it joins a real API server in tests.
func (c *Cluster) KubeletProgram() windows.Program {
	return kubelet.Kubelet(kubelet.KubeletOptions{Connect: c.ControlPlane.Connect})
}

// hostPrograms are the programs of a demo host wmcon or the operator configures: the honest kubelet, and
// hybrid-overlay-node, which waits for the subnet OVN-Kubernetes gives the node (sim/ovn) before it creates
// the host's HNS networks.
func (c *Cluster) hostPrograms() map[string]windows.Program {
	return map[string]windows.Program{"kubelet.exe": c.KubeletProgram(), "hybrid-overlay-node.exe": ovn.HybridOverlayNode(ovn.NodeOptions{Connect: c.ControlPlane.ConnectAsCertUser})}
}
