package kubelet_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/sim/cloudprovider"
	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/scheduler"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// winHost is a fresh simulated Windows host with the honest kubelet behind kubelet.exe, and an SSH
// client to it that runs the sc.exe commands WMCO runs.
type winHost struct {
	*windows.Host
	ssh         *ssh.Client
	ip          string
	beforeStart func() // breaks the host just before the kubelet starts, in failure tests
	labels      string // --node-labels (default WMCO's node.openshift.io/os_id=Windows)
	extraFlags  string // more kubelet flags (WMCO's per platform)
}

func startWinHost(t *testing.T, ip string) *winHost {
	t.Helper()
	return startWinHostWith(t, ip, kubelet.KubeletOptions{HeartbeatInterval: time.Second})
}

func startWinHostWith(t *testing.T, ip string, opts kubelet.KubeletOptions) *winHost {
	t.Helper()
	return startWinHostOn(t, ip, opts, windows.Options{})
}

// startWinHostOn is startWinHostWith on a host of a platform (wopts.Platform and the like).
func startWinHostOn(t *testing.T, ip string, opts kubelet.KubeletOptions, wopts windows.Options) *winHost {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	signer, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	wopts.Addr, wopts.AuthorizedKeys = net.JoinHostPort(ip, "0"), []ssh.PublicKey{signer.PublicKey()}
	wopts.ServicePending, wopts.LogInterval = 20*time.Millisecond, time.Hour
	wopts.Programs = map[string]windows.Program{"kubelet.exe": kubelet.Kubelet(opts)}
	h, err := windows.Start(wopts)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	c, err := ssh.Dial("tcp", h.Addr(), &ssh.ClientConfig{User: "Administrator", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(h.HostKey()), Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return &winHost{Host: h, ssh: c, ip: ip}
}

func (w *winHost) run(t *testing.T, cmd string) string {
	t.Helper()
	s, err := w.ssh.NewSession()
	require.NoError(t, err)
	defer s.Close()
	out, _ := s.CombinedOutput(cmd) // sc.exe failures are read from the text, as the remote client does
	return string(out)
}

// bootstrapFiles are the files WMCO writes for the kubelet (wmco-facts.md "Configuring a node").
type bootstrapFiles struct {
	server, token string
	ca            []byte
}

func kubeletConf() []byte {
	conf := map[string]any{
		"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1",
		"clusterDNS": []string{"172.30.0.10"}, "clusterDomain": "cluster.local", "cgroupsPerQOS": false,
		"enforceNodeAllocatable":   []string{"none"},
		"containerRuntimeEndpoint": "npipe://./pipe/containerd-containerd",
		"authentication":           map[string]any{"x509": map[string]any{"clientCAFile": `C:\k\kubelet-ca.crt`}},
		"rotateCertificates":       true, "serverTLSBootstrap": true,
		"registerWithTaints": []map[string]string{{"key": "os", "value": "Windows", "effect": "NoSchedule"}},
		"resolvConf":         "", "maxPods": 250,
		"systemReserved": map[string]string{"cpu": "500m", "memory": "2Gi", "ephemeral-storage": "1Gi"},
		"featureGates":   map[string]bool{"RotateKubeletServerCertificate": true},
	}
	data, _ := json.Marshal(conf)
	return data
}

func bootstrapKubeconfig(t *testing.T, f bootstrapFiles) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: f.server, CertificateAuthority: `C:\k\bootstrap-ca.crt`}
	kc.AuthInfos["kubelet"] = &clientcmdapi.AuthInfo{Token: f.token}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "kubelet"}
	kc.CurrentContext = "local"
	data, err := clientcmd.Write(*kc)
	require.NoError(t, err)
	return data
}

// configure lays down what WMCO's configuration puts on a host and creates and starts containerd and the
// kubelet with WMCO's command lines, over SSH with sc.exe.
func (w *winHost) configure(t *testing.T, f bootstrapFiles) {
	t.Helper()
	for _, d := range config.NodeDirectories {
		require.NoError(t, w.WriteFile(d+`\.keep`, nil))
		require.NoError(t, w.RemoveFile(d+`\.keep`))
	}
	for _, bin := range []string{`C:\k\kubelet.exe`, `C:\k\kube-log-runner.exe`, `C:\k\containerd\containerd.exe`} {
		require.NoError(t, w.WriteFile(bin, []byte("MZ stand-in")))
	}
	files := map[string][]byte{
		`C:\k\kubelet.conf`:                    kubeletConf(),
		`C:\k\bootstrap-kubeconfig`:            bootstrapKubeconfig(t, f),
		`C:\k\bootstrap-ca.crt`:                f.ca,
		`C:\k\kubelet-ca.crt`:                  f.ca,
		`C:\k\containerd\containerd_conf.toml`: []byte("version = 2\n"),
	}
	for path, data := range files {
		require.NoError(t, w.WriteFile(path, data))
	}
	out := w.run(t, `sc.exe create containerd binPath='C:\k\containerd\containerd.exe --config C:\k\containerd\containerd_conf.toml --log-file C:\var\log\containerd\containerd.log --run-service --log-level info' start=auto`)
	require.Contains(t, out, "SUCCESS")
	labels := w.labels
	if labels == "" {
		labels = "node.openshift.io/os_id=Windows"
	}
	out = w.run(t, fmt.Sprintf(`sc.exe create kubelet binPath='C:\k\kube-log-runner.exe -log-file=C:\var\log\kubelet\kubelet.log C:\k\kubelet.exe --config=C:\k\kubelet.conf --bootstrap-kubeconfig=C:\k\bootstrap-kubeconfig --kubeconfig=C:\k\kubeconfig --cert-dir=c:\var\lib\kubelet\pki\ --windows-service --node-labels=%s --node-ip=%s --v=2%s' start=auto depend='containerd'`, labels, w.ip, w.extraFlags))
	require.Contains(t, out, "SUCCESS")
	// wmcon's recovery actions: a kubelet that starts before containerd has opened its pipe exits, and the
	// service control manager starts it again.
	out = w.run(t, `sc.exe failure kubelet reset= 600 actions= restart/10/restart/30/restart/60/restart/120`)
	require.Contains(t, out, "SUCCESS")
	if w.beforeStart != nil {
		w.beforeStart()
	}
	out = w.run(t, `sc.exe start kubelet`)
	require.Contains(t, out, "START_PENDING")
}

func (w *winHost) kubeletLog() string {
	data, _ := w.ReadFile(`C:\var\log\kubelet\kubelet.log`)
	return string(data)
}

func poll(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) { return cond(ctx), nil })
	require.NoError(t, err, "timed out waiting for %s", what)
}

// csrOf finds the CSR a requester posted with a signer.
func csrOf(ctx context.Context, kube kubernetes.Interface, requester, signer string) *certificatesv1.CertificateSigningRequest {
	list, err := kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	for i := range list.Items {
		if c := &list.Items[i]; c.Spec.Username == requester && c.Spec.SignerName == signer {
			return c
		}
	}
	return nil
}

// csrNamed finds the client CSR whose subject is cn (several hosts post CSRs as the same bootstrap user).
func csrNamed(t *testing.T, ctx context.Context, kube kubernetes.Interface, cn string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	list, err := kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	for i := range list.Items {
		c := &list.Items[i]
		if c.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName && parseCSR(t, c).Subject.CommonName == cn {
			return c
		}
	}
	return nil
}

func approve(t *testing.T, ctx context.Context, kube kubernetes.Interface, csr *certificatesv1.CertificateSigningRequest) {
	t.Helper()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "TestApproved", Message: "approved by the test"})
	_, err := kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func parseCSR(t *testing.T, c *certificatesv1.CertificateSigningRequest) *x509.CertificateRequest {
	t.Helper()
	block, _ := pem.Decode(c.Spec.Request)
	require.NotNil(t, block)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	require.NoError(t, err)
	return req
}

// writeCNIConfig writes the CNI configuration WMCO's network step writes.
func (w *winHost) writeCNIConfig(t *testing.T) {
	t.Helper()
	conf, err := nodeconfig.CNIConfig(nodeconfig.CNINetwork{Subnet: w.HybridOverlaySubnet(), ProviderAddress: w.ip, ServiceNetwork: "172.30.0.0/16"})
	require.NoError(t, err)
	require.NoError(t, w.WriteFile(nodeconfig.CNIConfPath, conf))
}

func readyConditionOf(ctx context.Context, kube kubernetes.Interface, name string) corev1.NodeCondition {
	n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return corev1.NodeCondition{}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c
		}
	}
	return corev1.NodeCondition{}
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func readyStatusOf(ctx context.Context, kube kubernetes.Interface, name string) corev1.ConditionStatus {
	n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// TestHonestKubelet runs simulated Windows hosts whose kubelet joins a real kube-apiserver with the real
// kube-controller-manager (signer, node lifecycle, no approver) using only the files on the host.
func TestHonestKubelet(t *testing.T) {
	srv := kubeapi.Start(t, kubeapi.WithControllerManager(), kubeapi.WithCRDs(), kubeapi.WithNamespaces())
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	good := bootstrapFiles{server: srv.Host(), token: srv.BootstrapToken(), ca: srv.CACert()}

	t.Run("joins once its CSRs are approved", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		w := startWinHost(t, "127.0.0.41")
		node := strings.ToLower(w.Hostname())
		w.configure(t, good)

		var client *certificatesv1.CertificateSigningRequest
		poll(t, "the client CSR", 30*time.Second, func(ctx context.Context) bool {
			client = csrOf(ctx, admin, kubeapi.NodeBootstrapperUser, certificatesv1.KubeAPIServerClientKubeletSignerName)
			return client != nil
		})
		req := parseCSR(t, client)
		assert.Equal(t, "system:node:"+node, req.Subject.CommonName)
		assert.Equal(t, []string{"system:nodes"}, req.Subject.Organization)

		// Its key is where the real kubelet's TLS bootstrap keeps it until the certificate is issued (wmcon
		// reads it there to tell this kubelet's CSR from others), and the CSR's name derives from it.
		assert.True(t, strings.HasPrefix(client.Name, "node-csr-"), client.Name)
		tmpKey, err := w.ReadFile(`C:\var\lib\kubelet\pki\kubelet-client.key.tmp`)
		require.NoError(t, err)
		keyBlock, _ := pem.Decode(tmpKey)
		require.NotNil(t, keyBlock)
		priv, err := x509.ParseECPrivateKey(keyBlock.Bytes)
		require.NoError(t, err)
		assert.True(t, priv.PublicKey.Equal(req.PublicKey), "the client CSR is signed with the key in kubelet-client.key.tmp")

		// Unapproved, the kubelet waits: no kubeconfig, no Node. Restarted meanwhile, it asks again with
		// the same key, which finds the same request: still one CSR.
		out := w.run(t, `sc.exe stop kubelet`)
		require.Contains(t, out, "STOP_PENDING")
		poll(t, "the kubelet stopped", 10*time.Second, func(context.Context) bool {
			info, _ := w.Service("kubelet")
			return info.State == windows.StateStopped
		})
		out = w.run(t, `sc.exe start kubelet`)
		require.Contains(t, out, "START_PENDING")
		time.Sleep(2 * time.Second)
		assert.False(t, w.Exists(`C:\k\kubeconfig`))
		_, err = admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		assert.Error(t, err, "no Node before approval")
		assert.True(t, w.ServiceRunning("kubelet"), "the kubelet waits for approval")
		csrs, err := admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		var clientCSRs []string
		for _, c := range csrs.Items {
			if c.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName && parseCSR(t, &c).Subject.CommonName == "system:node:"+node {
				clientCSRs = append(clientCSRs, c.Name)
			}
		}
		assert.Equal(t, []string{client.Name}, clientCSRs, "a restarted kubelet finds its pending CSR again")

		approve(t, ctx, admin, client)
		// Registered, the node is not Ready while containerd has no CNI network: the network step writes it
		// once hybrid-overlay-node has made its HNS network.
		poll(t, "the Node NotReady for its network", 60*time.Second, func(ctx context.Context) bool {
			c := readyConditionOf(ctx, admin, node)
			return c.Status == corev1.ConditionFalse && c.Reason == "KubeletNotReady" && c.Message == kubelet.NetworkNotReadyMessage
		})
		w.writeCNIConfig(t)
		poll(t, "the Node Ready", 60*time.Second, func(ctx context.Context) bool {
			return readyStatusOf(ctx, admin, node) == corev1.ConditionTrue
		})
		n, err := admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, "Windows", n.Labels[config.OSIDNodeLabel])
		assert.Equal(t, "windows", n.Labels[config.OSLabel])
		assert.Equal(t, "10.0.20348", n.Labels[config.WindowsBuildLabel])
		assert.Contains(t, n.Spec.Taints, corev1.Taint{Key: "os", Value: "Windows", Effect: corev1.TaintEffectNoSchedule})
		assert.Contains(t, n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: w.ip})
		assert.Equal(t, "windows", n.Status.NodeInfo.OperatingSystem)

		kc, err := w.ReadFile(`C:\k\kubeconfig`)
		require.NoError(t, err)
		assert.Contains(t, string(kc), `c:\var\lib\kubelet\pki\kubelet-client-current.pem`)
		pair, err := w.ReadFile(`C:\var\lib\kubelet\pki\kubelet-client-current.pem`)
		require.NoError(t, err)
		block, _ := pem.Decode(pair)
		require.NotNil(t, block)
		cert, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		assert.Equal(t, "system:node:"+node, cert.Subject.CommonName)
		assert.False(t, w.Exists(`C:\var\lib\kubelet\pki\kubelet-client.key.tmp`), "the temporary key is removed once the certificate is stored")

		_, err = admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, node, metav1.GetOptions{})
		require.NoError(t, err, "the kubelet keeps a Lease")

		var serving *certificatesv1.CertificateSigningRequest
		poll(t, "the serving CSR", 30*time.Second, func(ctx context.Context) bool {
			serving = csrOf(ctx, admin, "system:node:"+node, certificatesv1.KubeletServingSignerName)
			return serving != nil
		})
		sreq := parseCSR(t, serving)
		assert.Equal(t, []string{node}, sreq.DNSNames)
		require.Len(t, sreq.IPAddresses, 1)
		assert.Equal(t, w.ip, sreq.IPAddresses[0].String())
		approve(t, ctx, admin, serving)
		poll(t, "the serving certificate on the host", 30*time.Second, func(context.Context) bool {
			return w.Exists(`C:\var\lib\kubelet\pki\kubelet-server-current.pem`)
		})

		// It runs the pods bound to it, with its own credentials (the Node authorizer and NodeRestriction
		// decide), and finishes their deletion.
		runPodOnJoinedNode(t, ctx, admin, node)

		firstBoot := n.Status.NodeInfo.BootID
		assert.Equal(t, w.BootID(), firstBoot, "the kubelet reports its host's boot")

		// Stopping the kubelet silences it; the real node lifecycle controller marks the node Unknown.
		out = w.run(t, `sc.exe stop kubelet`)
		require.Contains(t, out, "STOP_PENDING")
		poll(t, "the Node Unknown", 4*kubeapi.NodeMonitorGracePeriod, func(ctx context.Context) bool {
			return readyStatusOf(ctx, admin, node) == corev1.ConditionUnknown
		})

		// Started again, it reuses its certificate (no new CSR) and the node comes back Ready.
		csrs, err = admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		out = w.run(t, `sc.exe start kubelet`)
		require.Contains(t, out, "START_PENDING")
		poll(t, "the Node Ready again", 4*kubeapi.NodeMonitorGracePeriod, func(ctx context.Context) bool {
			return readyStatusOf(ctx, admin, node) == corev1.ConditionTrue
		})
		after, err := admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		assert.Equal(t, len(csrs.Items), len(after.Items), "a kubelet with valid certificates requests none again")
		n, err = admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, firstBoot, n.Status.NodeInfo.BootID, "a restarted kubelet is not a new boot")

		// A reboot of the host is: once back, its kubelet reports a new bootID (what wmcon's reboot waits for).
		w.Reboot()
		poll(t, "the new boot reported", 60*time.Second, func(ctx context.Context) bool {
			n, err := admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			return err == nil && n.Status.NodeInfo.BootID != firstBoot && n.Status.NodeInfo.BootID != ""
		})
		assert.Equal(t, 1, w.Reboots())
		// At boot the kubelet starts with containerd, before containerd has opened its pipe: it exits with the
		// real error, and its recovery action starts it again.
		assert.Contains(t, w.kubeletLog(), `containerd-containerd: The system cannot find the file specified.`)
	})

	t.Run("reaches a named API server through Hosts", func(t *testing.T) {
		w := startWinHostWith(t, "127.0.0.53", kubelet.KubeletOptions{Hosts: map[string]string{"kubernetes.default.svc": "127.0.0.1"}})
		named := strings.Replace(srv.Host(), "127.0.0.1", "kubernetes.default.svc", 1)
		w.configure(t, bootstrapFiles{server: named, token: srv.BootstrapToken(), ca: srv.CACert()})
		poll(t, "this host's client CSR", 30*time.Second, func(ctx context.Context) bool {
			return csrNamed(t, ctx, admin, "system:node:"+strings.ToLower(w.Hostname())) != nil
		})
		assert.True(t, w.ServiceRunning("kubelet"), "it waits for approval; log:\n%s", w.kubeletLog())
	})

	t.Run("an external cloud provider initializes only the node whose instance it finds", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var mu sync.Mutex
		missed := map[string]bool{}
		ccm := &cloudprovider.NodeController{Kube: admin, OnMiss: func(node, _ string) { mu.Lock(); missed[node] = true; mu.Unlock() }}
		go ccm.Run(ctx, 200*time.Millisecond)
		// WMCO's AWS kubelet: the name AWS's cloud provider knows (the metadata's local-hostname), and one that
		// registers under the host's own name instead.
		named := startWinHostOn(t, "127.0.0.57", kubelet.KubeletOptions{HeartbeatInterval: time.Second}, windows.Options{Platform: "AWS"})
		named.extraFlags = " --cloud-provider=external --hostname-override=" + named.CloudHostname()
		own := startWinHostOn(t, "127.0.0.58", kubelet.KubeletOptions{HeartbeatInterval: time.Second}, windows.Options{Platform: "AWS"})
		own.extraFlags = " --cloud-provider=external"
		for _, w := range []*winHost{named, own} {
			ccm.AddInstance(cloudprovider.Instance{Name: w.CloudHostname(), ProviderID: "aws:///us-east-1a/" + w.InstanceID()})
			w.configure(t, good)
		}
		for node, w := range map[string]*winHost{named.CloudHostname(): named, strings.ToLower(own.Hostname()): own} {
			var c *certificatesv1.CertificateSigningRequest
			poll(t, "the client CSR of "+node, 30*time.Second, func(ctx context.Context) bool {
				c = csrNamed(t, ctx, admin, "system:node:"+node)
				return c != nil
			})
			approve(t, ctx, admin, c)
			poll(t, node+" registered", 60*time.Second, func(ctx context.Context) bool {
				_, err := admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
				return err == nil
			})
			assert.True(t, w.ServiceRunning("kubelet"))
		}
		poll(t, "the known instance's node initialized", 30*time.Second, func(ctx context.Context) bool {
			n, err := admin.CoreV1().Nodes().Get(ctx, named.CloudHostname(), metav1.GetOptions{})
			return err == nil && n.Spec.ProviderID != "" && !hasTaint(n, kubelet.TaintUninitialized)
		})
		poll(t, "the other node missed", 30*time.Second, func(context.Context) bool {
			mu.Lock()
			defer mu.Unlock()
			return missed[strings.ToLower(own.Hostname())]
		})
		n, err := admin.CoreV1().Nodes().Get(ctx, strings.ToLower(own.Hostname()), metav1.GetOptions{})
		require.NoError(t, err)
		assert.True(t, hasTaint(n, kubelet.TaintUninitialized), "registered as %s, which AWS does not know: nothing is scheduled there", n.Name)
		assert.Empty(t, n.Spec.ProviderID)
	})

	failures := []struct {
		name    string
		ip      string
		files   bootstrapFiles
		breakIt func(w *winHost)
		labels  string
		deny    bool // deny the client CSR instead of approving it
		logText string
	}{
		{name: "a label only the cluster may set", ip: "127.0.0.49", files: good, labels: "node-role.kubernetes.io/worker=",
			logText: "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [node-role.kubernetes.io/worker]"},
		{name: "a denied CSR", ip: "127.0.0.50", files: good, deny: true, logText: "certificate signing request is denied"},
		{name: "wrong token", ip: "127.0.0.42", files: bootstrapFiles{server: srv.Host(), token: "not-the-token", ca: srv.CACert()},
			logText: "Unauthorized"},
		{name: "wrong URL", ip: "127.0.0.43", files: bootstrapFiles{server: "https://127.0.0.1:1", token: srv.BootstrapToken(), ca: srv.CACert()},
			logText: "connection refused"},
		{name: "URL outside the machine", ip: "127.0.0.44", files: bootstrapFiles{server: "https://api-int.cluster.example.com:6443", token: srv.BootstrapToken(), ca: srv.CACert()},
			logText: "no such host"},
		{name: "wrong CA", ip: "127.0.0.45", files: bootstrapFiles{server: srv.Host(), token: srv.BootstrapToken(), ca: otherCA(t)},
			logText: "certificate signed by unknown authority"},
		{name: "missing kubelet CA", ip: "127.0.0.46", files: good,
			breakIt: func(w *winHost) { _ = w.RemoveFile(`C:\k\kubelet-ca.crt`) }, logText: `unable to load client CA file C:\\k\\kubelet-ca.crt`},
		{name: "missing bootstrap kubeconfig", ip: "127.0.0.47", files: good,
			breakIt: func(w *winHost) { _ = w.RemoveFile(`C:\k\bootstrap-kubeconfig`) }, logText: `unable to load bootstrap kubeconfig: stat C:\\k\\bootstrap-kubeconfig`},
		{name: "missing kubelet.conf", ip: "127.0.0.48", files: good,
			breakIt: func(w *winHost) { _ = w.RemoveFile(`C:\k\kubelet.conf`) }, logText: `failed to load kubelet config file, path: C:\\k\\kubelet.conf`},
	}
	for _, tc := range failures {
		t.Run("does not join with "+tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			w := startWinHost(t, tc.ip)
			if tc.breakIt != nil {
				w.beforeStart = func() { tc.breakIt(w) }
			}
			w.labels = tc.labels
			w.configure(t, tc.files)
			if tc.deny {
				var c *certificatesv1.CertificateSigningRequest
				poll(t, "the client CSR", 30*time.Second, func(ctx context.Context) bool {
					c = csrNamed(t, ctx, admin, "system:node:"+strings.ToLower(w.Hostname()))
					return c != nil
				})
				c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
					Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "TestDenied"})
				_, err := admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, c.Name, c, metav1.UpdateOptions{})
				require.NoError(t, err)
			}
			// It exits, and exits again each time its recovery action starts it.
			poll(t, "the kubelet to give up", 30*time.Second, func(context.Context) bool {
				info, _ := w.Service("kubelet")
				return info.Crashes > 1
			})
			assert.Contains(t, w.kubeletLog(), tc.logText)
			assert.Contains(t, w.kubeletLog(), `"command failed"`)
			assert.False(t, w.Exists(`C:\k\kubeconfig`))
			_, err := admin.CoreV1().Nodes().Get(ctx, strings.ToLower(w.Hostname()), metav1.GetOptions{})
			assert.Error(t, err, "no Node")
		})
	}
}

// otherCA is a CA certificate that did not sign the API server's certificate.
func otherCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "some-other-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// runPodOnJoinedNode schedules a pod with the Windows RuntimeClass (the real node lifecycle controller has
// lifted the not-ready taint), sees the honest kubelet run it, deletes it and sees it go.
func runPodOnJoinedNode(t *testing.T, ctx context.Context, admin kubernetes.Interface, node string) {
	t.Helper()
	_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.CoreV1().ServiceAccounts("apps").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.NodeV1().RuntimeClasses().Create(ctx, windowsRuntimeClass("windows-2022", "runhcs-wcow-process", "10.0.20348"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.CoreV1().Pods("apps").Create(ctx, appPod("web", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("windows-2022") }), metav1.CreateOptions{})
	require.NoError(t, err)
	sched := scheduler.New(admin)
	poll(t, "the pod Running on "+node, 60*time.Second, func(ctx context.Context) bool {
		_ = sched.Reconcile(ctx)
		p := getPod(ctx, admin, "web")
		return p != nil && p.Spec.NodeName == node && podRunningNow(p)
	})
	require.NoError(t, admin.CoreV1().Pods("apps").Delete(ctx, "web", metav1.DeleteOptions{}))
	poll(t, "the pod gone", 30*time.Second, func(ctx context.Context) bool { return getPod(ctx, admin, "web") == nil })
}

func podRunningNow(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
		p.Status.ContainerStatuses[0].Ready && p.Status.ContainerStatuses[0].State.Running != nil
}
