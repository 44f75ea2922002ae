package configure_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wmcon/wmcon/actions/configure"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

func testPayload(t testing.TB) []nodeconfig.PayloadFile { return testPayloadBuild(t, "") }

// testPayloadBuild is a synthetic payload whose files all name build, so two builds differ in every file.
func testPayloadBuild(t testing.TB, build string) []nodeconfig.PayloadFile {
	dir := t.TempDir()
	require.NoError(t, payload.WriteSyntheticBuild(dir, nodeconfig.RequiredPayload("None"), build))
	p, err := payload.LoadDir(dir, t.TempDir())
	require.NoError(t, err)
	return p.NodeFiles()
}

func approved(t *testing.T, ctx context.Context, c kubernetes.Interface, name string) bool {
	csr, err := c.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	for _, cond := range csr.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

// standInKubelet does, through the real API server, what the kubelet does once its service runs: it reads
// the bootstrap kubeconfig wmcon wrote on the host and posts its client CSR with exactly those credentials,
// registers the Node once approved, and posts its serving CSR as system:node:<name>. Alongside, CSRs that
// must not be approved are posted: a client CSR from another requester, a serving CSR with a foreign SAN.
func standInKubelet(t *testing.T, e *actiontest.Env, hs *actiontest.Hosts, sim *windows.Host, node, ip string) {
	ctx := e.Ctx
	require.Eventually(t, func() bool { return sim.ServiceRunning("kubelet") }, 30*time.Second, 20*time.Millisecond)
	kc, err := sim.ReadFile(nodeconfig.BootstrapKubeconfigPath)
	require.NoError(t, err)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	require.NoError(t, err)
	boot, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)

	// Its key is where the kubelet's TLS bootstrap keeps it until the certificate is issued: wmcon approves
	// only a client CSR signed with it.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, sim.WriteFile(nodeconfig.KubeletClientKeyTmp, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})))
	prefix := "csr-" + node
	t.Cleanup(func() { // so the test can run again against the same API server (go test -count)
		for _, name := range []string{"-rogue-client", "-client", "-foreign-san", "-serving"} {
			_ = e.Kube.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), prefix+name, metav1.DeleteOptions{})
		}
	})
	actiontest.PostCSR(t, ctx, e.Kube, prefix+"-rogue-client", certificatesv1.KubeAPIServerClientKubeletSignerName,
		actiontest.CSRPEMWithKey(t, key, "system:node:"+node, nil, nil), certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
	actiontest.PostCSR(t, ctx, boot, prefix+"-client", certificatesv1.KubeAPIServerClientKubeletSignerName,
		actiontest.CSRPEMWithKey(t, key, "system:node:"+node, nil, nil), certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
	require.Eventually(t, func() bool { return approved(t, ctx, e.Kube, prefix+"-client") }, 30*time.Second, 50*time.Millisecond)
	// This test tier runs no kube-controller-manager, so the stand-in writes the kubeconfig the kubelet's TLS
	// bootstrap would (the node's own client certificate), for the services that start once the node has
	// joined: hybrid-overlay-node requests its own certificate with it.
	require.NoError(t, sim.WriteFile(nodeconfig.KubeconfigPath, nodeKubeconfig(t, node)))

	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{config.OSLabel: "windows", config.OSIDNodeLabel: "Windows"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "os", Value: "Windows", Effect: corev1.TaintEffectNoSchedule}}}}
	_, err = e.Kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	hs.Kubelets.Add(node, sim)

	asNode := rest.CopyConfig(actiontest.Server.AdminConfig())
	asNode.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	nodeClient, err := kubernetes.NewForConfig(asNode)
	require.NoError(t, err)
	actiontest.PostCSR(t, ctx, nodeClient, prefix+"-foreign-san", certificatesv1.KubeletServingSignerName,
		actiontest.CSRPEM(t, "system:node:"+node, []string{node}, []net.IP{net.ParseIP(ip), net.ParseIP("127.0.9.9")}),
		certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth)
	actiontest.PostCSR(t, ctx, nodeClient, prefix+"-serving", certificatesv1.KubeletServingSignerName,
		actiontest.CSRPEM(t, "system:node:"+node, []string{node}, []net.IP{net.ParseIP(ip)}),
		certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth)
}

// hostAsItRan is host with the outputs the kubelet's pre-script gave on the simulated host (its address; the
// hosts here are of no cloud, so nothing overrides the name), as the configuration ran them.
func hostAsItRan(host nodeconfig.Host) nodeconfig.Host {
	host.PreScriptOutputs = map[string]map[string]string{"kubelet": {nodeconfig.NodeIPVar: host.IP}}
	return host
}

// bareHost starts a bare host named node on ip, reached through hs's pool, and the request that configures
// it as a BYOH node of version 11.0.1 with the test payload; a test changes what it needs.
func bareHost(t *testing.T, e *actiontest.Env, hs *actiontest.Hosts, node, ip string) (*windows.Host, remote.Host, configure.ConfigureRequest) {
	t.Helper()
	sim := hs.BareHost(node, ip)
	nf, err := e.Ops.ReadNodeFacts(e.Ctx, cluster.NodeFactsOptions{Version: "11.0.1"})
	require.NoError(t, err)
	h, err := hs.Pool.Host(remote.Target{Node: node, Addr: sim.Addr()})
	require.NoError(t, err)
	return sim, h, configure.ConfigureRequest{Facts: nf.Facts, BootstrapIdentity: nf.BootstrapIdentity,
		Host: nodeconfig.Host{NodeName: node, IP: ip, BYOH: true}, HostNames: []string{node}, Payload: testPayload(t),
		CSRTimeout: 30 * time.Second, ReadyTimeout: 30 * time.Second}
}

// writeCommand matches the commands that change a host.
var writeCommand = regexp.MustCompile(`(?i)New-Item|Move-Item|Remove-Item|SetEnvironmentVariable|sc\.exe (create|start|stop|delete|failure|description)`)

func TestConfigureBareHostBecomesAReadyNodeAndARerunChangesNothing(t *testing.T) {
	e := actiontest.NewEnv(t)
	hs := e.Hosts()
	const node, ip = "win-configure-a", "127.0.0.71"
	sim, h, req := bareHost(t, e, hs, node, ip)
	assert.Equal(t, cluster.NodeBootstrapperIdentity, req.BootstrapIdentity)
	req.PubKeyHash = "0123abcd"

	done := make(chan struct{})
	go func() { defer close(done); standInKubelet(t, e, hs, sim, node, ip) }()
	rec := &actiontest.Recorder{}
	res, err := configure.Configure(e.Ctx, e.Ops, h, req, rec)
	<-done
	require.NoError(t, err, rec.Dump())
	assert.True(t, res.Changed)
	assert.Equal(t, event.Succeeded, rec.Final(t, node).Outcome)

	for _, s := range []string{"containerd", "kubelet", "windows_exporter", "csi-proxy", "hybrid-overlay-node", "kube-proxy"} {
		info, ok := sim.Service(s)
		require.True(t, ok, s)
		assert.Equal(t, windows.StateRunning, info.State, s)
		assert.Len(t, info.Recovery, 4, s)
	}
	conf, err := sim.ReadFile(nodeconfig.KubeletConfPath)
	require.NoError(t, err)
	assert.Contains(t, string(conf), `"clusterDNS"`)

	n, err := e.Kube.CoreV1().Nodes().Get(e.Ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "", n.Labels[config.WorkerRoleLabel])
	assert.Equal(t, "true", n.Labels[config.BYOHLabel])
	assert.Equal(t, "0123abcd", n.Annotations[config.PubKeyHashAnnotation])
	assert.Equal(t, "11.0.1", n.Annotations[config.VersionAnnotation])
	assert.False(t, n.Spec.Unschedulable)
	assert.True(t, approved(t, e.Ctx, e.Kube, "csr-"+node+"-client"))
	assert.True(t, approved(t, e.Ctx, e.Kube, "csr-"+node+"-serving"))
	assert.False(t, approved(t, e.Ctx, e.Kube, "csr-"+node+"-rogue-client"), "a client CSR from another requester")
	assert.False(t, approved(t, e.Ctx, e.Kube, "csr-"+node+"-foreign-san"), "a serving CSR with a foreign address")
	assert.Contains(t, rec.Dump(), "not approving client CSR csr-"+node+"-rogue-client")

	// A re-run reads, and writes nothing: no write command reaches the host, nothing changes in the cluster.
	before := len(sim.Commands())
	rec2 := &actiontest.Recorder{}
	res, err = configure.Configure(e.Ctx, e.Ops, h, req, rec2)
	require.NoError(t, err, rec2.Dump())
	assert.False(t, res.Changed)
	assert.True(t, res.Plan.Empty())
	assert.Contains(t, rec2.Final(t, node).Message, "already configured: nothing changed")
	after := sim.Commands()[before:]
	assert.NotEmpty(t, after)
	for _, c := range after {
		assert.False(t, writeCommand.MatchString(c), "re-run wrote: %s", c)
	}
	t.Logf("re-run: %d round trips, all reads\n%s\n%s", len(after), rec.Dump(), rec2.Dump())

	// A new payload build: Windows refuses to replace a running program's file, so the services whose
	// binaries change stop first (dependents first), the files are replaced, and they start again.
	req.Payload = testPayloadBuild(t, "build-2")
	rec3 := &actiontest.Recorder{}
	res, err = configure.Configure(e.Ctx, e.Ops, h, req, rec3)
	require.NoError(t, err, rec3.Dump())
	assert.True(t, res.Changed)
	assert.Contains(t, rec3.Dump(), "stopped kubelet")
	kubelet, err := sim.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	assert.Contains(t, string(kubelet), "build-2")
	for _, s := range []string{"containerd", "kubelet", "windows_exporter", "csi-proxy", "hybrid-overlay-node", "kube-proxy"} {
		assert.True(t, sim.ServiceRunning(s), s)
	}
	n, err = e.Kube.CoreV1().Nodes().Get(e.Ctx, node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.False(t, n.Spec.Unschedulable, "uncordoned again")
}

func TestConfigureDryRunChangesNothing(t *testing.T) {
	e := actiontest.NewEnv(t)
	hs := e.Hosts()
	const node, ip = "win-configure-dry", "127.0.0.72"
	sim := hs.BareHost(node, ip)
	nf, err := e.Ops.ReadNodeFacts(e.Ctx, cluster.NodeFactsOptions{DryRun: true})
	require.NoError(t, err)
	h, err := hs.Pool.Host(remote.Target{Node: node, Addr: sim.Addr()})
	require.NoError(t, err)
	rec := &actiontest.Recorder{}
	res, err := configure.Configure(e.Ctx, e.Ops, h, configure.ConfigureRequest{Facts: nf.Facts, BootstrapIdentity: nf.BootstrapIdentity,
		Host: nodeconfig.Host{NodeName: node, IP: ip}, Payload: testPayload(t), DryRun: true}, rec)
	require.NoError(t, err)
	assert.Len(t, res.Plan.Create, 6)
	for _, c := range sim.Commands() {
		assert.False(t, writeCommand.MatchString(c), "dry run wrote: %s", c)
	}
	assert.False(t, sim.Exists(`C:\k`))
	var out strings.Builder
	require.NoError(t, res.Plan.Write(&out))
	assert.NotContains(t, out.String(), nf.Facts.BootstrapToken)
}

// Against the real API server: the facts carry the registries tree wmcon mirrors render writes from the
// cluster's mirror sets, so a configuration writes exactly those files and removes only what is not the
// cluster's (issue 24: it used to plan removing every mirror file).
func TestConfigurePlansTheClustersMirrorFiles(t *testing.T) {
	e := actiontest.NewEnv(t)
	tree := actiontest.MirrorCluster(t, e)
	hs := e.Hosts()
	const node, ip = "win-configure-mirrors", "127.0.0.73"
	sim := hs.BareHost(node, ip)
	require.NoError(t, sim.WriteFile(config.RegistriesDir+`\stale.io\hosts.toml`, []byte("old")))
	nf, err := e.Ops.ReadNodeFacts(e.Ctx, cluster.NodeFactsOptions{DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, tree.Map(), nf.Facts.Registries, "the same rendering as wmcon mirrors render")

	h, err := hs.Pool.Host(remote.Target{Node: node, Addr: sim.Addr()})
	require.NoError(t, err)
	res, err := configure.Configure(e.Ctx, e.Ops, h, configure.ConfigureRequest{Facts: nf.Facts, BootstrapIdentity: nf.BootstrapIdentity,
		Host: nodeconfig.Host{NodeName: node, IP: ip}, Payload: testPayload(t), DryRun: true}, &actiontest.Recorder{})
	require.NoError(t, err)
	assert.Equal(t, []string{config.RegistriesDir + `\stale.io`}, res.Plan.RemoveRegistry)
	planned := map[string]bool{}
	for _, f := range res.Plan.Config {
		planned[f.Path] = true
	}
	for rel := range tree.Map() {
		assert.True(t, planned[config.RegistriesDir+`\`+rel], "%s is written", rel)
	}
}

// bigPayload is the test payload with a kubelet.exe large enough that a transfer can be cut in its middle.
func bigPayload(t *testing.T) []nodeconfig.PayloadFile {
	files := testPayload(t)
	big := filepath.Join(t.TempDir(), "kubelet.exe")
	data := make([]byte, 4<<20)
	_, _ = rand.Read(data)
	require.NoError(t, os.WriteFile(big, data, 0o644))
	sum := sha256.Sum256(data)
	for i, f := range files {
		if f.Name == "kube-node/kubelet.exe" {
			files[i].Local, files[i].SHA256, files[i].Size = big, hex.EncodeToString(sum[:]), int64(len(data))
		}
	}
	return files
}

// checkConfiguredOnce checks the host holds every payload file intact, no temporary upload left behind,
// and each service created once with its recovery actions set once.
func checkConfiguredOnce(t *testing.T, sim *windows.Host, want nodeconfig.State) {
	t.Helper()
	for _, f := range want.Files {
		got, err := sim.ReadFile(f.Path)
		require.NoError(t, err, f.Path)
		sum := sha256.Sum256(got)
		assert.Equal(t, f.SHA256, hex.EncodeToString(sum[:]), "%s is intact", f.Path)
	}
	for _, dir := range []string{`C:\k`, `C:\k\cni`, `C:\k\containerd`} {
		for _, name := range sim.List(dir) {
			assert.NotContains(t, name, ".wmcon-", "a temporary upload is left in %s", dir)
		}
	}
	for _, s := range []string{"containerd", "kubelet", "windows_exporter", "csi-proxy", "hybrid-overlay-node", "kube-proxy"} {
		info, ok := sim.Service(s)
		require.True(t, ok, s)
		assert.Equal(t, windows.StateRunning, info.State, s)
		assert.Len(t, info.Recovery, 4, "%s: recovery actions set once", s)
	}
}

func TestConfigureResumesAfterAConnectionDroppedMidTransfer(t *testing.T) {
	e := actiontest.NewEnv(t)
	hs := e.Hosts()
	const node, ip = "win-configure-drop-xfer", "127.0.0.73"
	sim, h, req := bareHost(t, e, hs, node, ip)
	files := bigPayload(t)
	req.Payload = files

	// The connection drops once the first bytes of the payload are sent (kubelet.exe, 4 MiB, is among
	// them): the action stops at the payload step.
	dropped := false
	rec := &actiontest.Recorder{OnEvent: func(ev event.Event) {
		if !dropped && ev.Kind == event.StepProgress && ev.Step == configure.StepPayload {
			dropped = true
			sim.DropConnections()
		}
	}}
	_, err := configure.Configure(e.Ctx, e.Ops, h, req, rec)
	require.Error(t, err, rec.Dump())
	require.True(t, dropped, "the transfer was cut")
	assert.Equal(t, configure.StepPayload, rec.Of(node, event.StepFailed)[0].Step)
	if got, err := sim.ReadFile(`C:\k\kubelet.exe`); err == nil {
		assert.NotEqual(t, 4<<20, len(got)-1, "never a truncated kubelet.exe in place")
	}

	// The re-run resumes: what was sent is skipped, the rest sent, and the node joins.
	done := make(chan struct{})
	go func() { defer close(done); standInKubelet(t, e, hs, sim, node, ip) }()
	rec2 := &actiontest.Recorder{}
	_, err = configure.Configure(e.Ctx, e.Ops, h, req, rec2)
	<-done
	require.NoError(t, err, rec2.Dump())
	want, err := nodeconfig.Desired(req.Facts, hostAsItRan(req.Host), files)
	require.NoError(t, err)
	checkConfiguredOnce(t, sim, want)
	assert.Contains(t, rec2.Dump(), "sent "+`C:\k\kubelet.exe`)
}

func TestConfigureResumesAfterAConnectionDroppedMidServiceCreation(t *testing.T) {
	e := actiontest.NewEnv(t)
	hs := e.Hosts()
	const node, ip = "win-configure-drop-svc", "127.0.0.74"
	sim, h, req := bareHost(t, e, hs, node, ip)
	files := req.Payload
	req.CSRTimeout = 3 * time.Second

	// Replies are slowed down once the services step starts, and the connection drops as soon as the host
	// has received the command creating the kubelet's service: the reply never arrives.
	stop := make(chan struct{})
	defer close(stop)
	watching := false
	rec := &actiontest.Recorder{OnEvent: func(ev event.Event) {
		if watching || ev.Kind != event.StepStarted || ev.Step != configure.StepServices {
			return
		}
		watching = true
		sim.SetLatency(300 * time.Millisecond)
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
				if sim.HasCommand("sc.exe create 'kubelet'") {
					sim.DropConnections()
					sim.SetLatency(0)
					return
				}
			}
		}()
	}}
	// Without a kubelet to join, the first run ends at the latest waiting for the client CSR.
	_, err := configure.Configure(e.Ctx, e.Ops, h, req, rec)
	require.Error(t, err, rec.Dump())
	require.Eventually(t, func() bool { return sim.HasCommand("sc.exe create 'kubelet'") }, time.Second, 10*time.Millisecond)
	_, created := sim.Service("kubelet")
	t.Logf("after the drop the kubelet service exists: %v; the first run:\n%s", created, rec.Dump())

	done := make(chan struct{})
	go func() { defer close(done); standInKubelet(t, e, hs, sim, node, ip) }()
	rec2 := &actiontest.Recorder{}
	req.CSRTimeout = 30 * time.Second
	_, err = configure.Configure(e.Ctx, e.Ops, h, req, rec2)
	<-done
	require.NoError(t, err, rec2.Dump())
	want, err := nodeconfig.Desired(req.Facts, hostAsItRan(req.Host), files)
	require.NoError(t, err)
	checkConfiguredOnce(t, sim, want)
	assert.NotContains(t, rec2.Dump(), "[payload]   sent", "nothing is sent again")
}

// nodeKubeconfig is C:\k\kubeconfig as the kubelet's TLS bootstrap leaves it: the node's client certificate
// (system:node:<node>, system:nodes), issued by the test server's CA.
func nodeKubeconfig(t *testing.T, node string) []byte {
	t.Helper()
	cfg := actiontest.Server.UserConfig("system:node:"+node, "system:nodes")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["default-cluster"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["default-context"] = &clientcmdapi.Context{Cluster: "default-cluster", AuthInfo: "default-auth"}
	kc.CurrentContext = "default-context"
	data, err := clientcmd.Write(*kc)
	require.NoError(t, err)
	return data
}
