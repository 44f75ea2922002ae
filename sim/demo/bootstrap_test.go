package demo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wmcon/wmcon/sim/demo"
	"github.com/wmcon/wmcon/sim/windows"
)

// A fresh demo host given the demo's bootstrap credentials (read from the demo cluster as wmcon reads them)
// and the honest kubelet joins the demo once its client CSR is approved, through the demo's stand-in.
func TestDemoHostJoinsWithTheDemosBootstrapCredentials(t *testing.T) {
	d, err := demo.New(demo.Options{Step: time.Hour})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go d.Run(ctx)
	kube := d.Clients.Kube

	secret, err := kube.CoreV1().Secrets("openshift-machine-config-operator").Get(ctx, "node-bootstrapper-token", metav1.GetOptions{})
	require.NoError(t, err)
	infra, err := d.Clients.Config.ConfigV1().Infrastructures().Get(ctx, "cluster", metav1.GetOptions{})
	require.NoError(t, err)

	h, err := windows.Start(windows.Options{Addr: "127.0.0.90:0", AuthorizedKeys: []ssh.PublicKey{d.PrivateKey.PublicKey()},
		ServicePending: 20 * time.Millisecond, LogInterval: time.Hour, Programs: map[string]windows.Program{"kubelet.exe": d.KubeletProgram()}})
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: infra.Status.APIServerInternalURL, CertificateAuthorityData: secret.Data["ca.crt"]}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: string(secret.Data["token"])}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	boot, err := clientcmd.Write(*kc)
	require.NoError(t, err)
	files := map[string]string{
		`C:\k\kubelet.exe`: "MZ", `C:\k\kube-log-runner.exe`: "MZ", `C:\k\containerd\containerd.exe`: "MZ",
		`C:\k\containerd\containerd_conf.toml`: "version = 2\n", `C:\var\log\kubelet\.keep`: "", `C:\var\log\containerd\.keep`: "",
		`C:\k\kubelet-ca.crt`: string(secret.Data["ca.crt"]), `C:\k\bootstrap-kubeconfig`: string(boot),
		`C:\k\kubelet.conf`: `{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1",` +
			`"authentication":{"x509":{"clientCAFile":"C:\\k\\kubelet-ca.crt"}},"containerRuntimeEndpoint":"npipe://./pipe/containerd-containerd",` +
			`"registerWithTaints":[{"key":"os","value":"Windows","effect":"NoSchedule"}]}`,
	}
	for path, data := range files {
		require.NoError(t, h.WriteFile(path, []byte(data)))
	}
	c, err := ssh.Dial("tcp", h.Addr(), &ssh.ClientConfig{User: "Administrator", Auth: []ssh.AuthMethod{ssh.PublicKeys(d.PrivateKey)},
		HostKeyCallback: ssh.FixedHostKey(h.HostKey()), Timeout: 10 * time.Second})
	require.NoError(t, err)
	defer c.Close()
	for _, cmd := range []string{
		`sc.exe create containerd binPath='C:\k\containerd\containerd.exe --config C:\k\containerd\containerd_conf.toml --log-file C:\var\log\containerd\containerd.log' start=auto`,
		`sc.exe create kubelet binPath='C:\k\kube-log-runner.exe -log-file=C:\var\log\kubelet\kubelet.log C:\k\kubelet.exe --config=C:\k\kubelet.conf --bootstrap-kubeconfig=C:\k\bootstrap-kubeconfig --kubeconfig=C:\k\kubeconfig --cert-dir=c:\var\lib\kubelet\pki\ --node-ip=127.0.0.90' start=auto depend='containerd'`,
		// wmcon's recovery actions: started before containerd has opened its pipe, the kubelet exits and the
		// service control manager starts it again.
		`sc.exe failure kubelet reset= 600 actions= restart/10/restart/30/restart/60/restart/120`,
		`sc.exe start kubelet`,
	} {
		s, err := c.NewSession()
		require.NoError(t, err)
		out, _ := s.CombinedOutput(cmd)
		s.Close()
		require.NotContains(t, string(out), "FAILED", cmd)
	}

	node := strings.ToLower(h.Hostname())
	var csr *certificatesv1.CertificateSigningRequest
	require.NoError(t, wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			return false, nil
		}
		csr = &list.Items[0]
		return true, nil
	}), "no client CSR")
	require.Equal(t, "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper", csr.Spec.Username)
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	_, err = kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	require.NoError(t, err)
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return err == nil && len(n.Spec.Taints) == 1, nil
	})
	log, _ := h.ReadFile(`C:\var\log\kubelet\kubelet.log`)
	require.NoError(t, err, fmt.Sprintf("node %s never registered; kubelet log:\n%s", node, log))
}
